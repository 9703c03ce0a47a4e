r"""Parallel tempering on the visible states, with its exact transition matrix.

Parallel tempering runs :math:`R` chains at once, replica :math:`r` on the
tempered model :math:`p_{\beta_r}(v, h) \propto e^{-\beta_r E(v, h)}` with
:math:`1 = \beta_1 > \beta_2 > \dots > \beta_R \ge 0`.  One step is a block
Gibbs step in every replica, then, for each neighbouring pair
:math:`(r, r+1)` in turn, a proposal to exchange their visible states,
accepted with the Metropolis probability

.. math::
    a = \min\Big(1, \frac{\tilde p_r(v_{r+1})\,\tilde p_{r+1}(v_r)}
                        {\tilde p_r(v_r)\,\tilde p_{r+1}(v_{r+1})}\Big),
    \qquad \tilde p_\beta(v) = e^{-F_\beta(v)},

with :math:`F_\beta` the free energy of the tempered model.  Each part
leaves the product :math:`\prod_r p_{\beta_r}(v_r)` invariant, so the
replica at :math:`\beta = 1` samples the model, while the hot replicas,
whose chains mix fast, carry it between modes.  For a small model the
whole step is a matrix on the :math:`2^{R\,n_\text{visible}}` joint states
of the replicas: :func:`tempering_transition_matrix`.
"""

import numpy as np

from rbm._validation import (
    as_float_array,
    check_array_size,
    check_bool,
    check_enumeration_size,
    check_positive_int,
)
from rbm._kernels import checked_data, data_minus_chains, gibbs_steps
from rbm.exact import all_states
from rbm.model import RBM, check_model
from rbm.transition import gibbs_transition_matrix

__all__ = ["MAX_TEMPERING_BITS", "tempered", "tempering_transition_matrix", "TemperedPCD"]

# The matrix has (2**(R n_visible))**2 entries: at 12 bits, 128 MiB, and its
# eigenvalues take about a minute; the book uses 8.
MAX_TEMPERING_BITS = 12


def tempered(model, beta):
    r"""The model at inverse temperature :math:`\beta`: :math:`p_\beta \propto e^{-\beta E}`.

    Parameters
    ----------
    model : RBM
    beta : float
        In :math:`[0, 1]`.

    Returns
    -------
    RBM
        With parameters :math:`\beta W`, :math:`\beta b`, :math:`\beta c` (for
        any layer whose energy is linear in its parameters, every parameter
        times :math:`\beta`; a Gaussian layer is refused with a ValueError).

    Examples
    --------
    >>> from rbm import RBM
    >>> hot = tempered(RBM.random(3, 2, scale=1.0, rng=0), 0.0)
    >>> float(abs(hot.W).max())
    0.0
    """
    check_model(model)
    beta = _check_beta(beta, "beta")
    if model.is_binary:
        return RBM(beta * model.W, beta * model.b, beta * model.c)
    layers = [layer.anneal(_zero(layer), beta) for layer in (model.visible, model.hidden)]
    return RBM(beta * model.W, *layers)


def _zero(layer):
    """The layer with every parameter zero (the anneal base of a pure temperature)."""
    zero = layer.copy()
    for arr in zero.parameters().values():
        arr[...] = 0.0
    return zero


def _check_beta(beta, name):
    if isinstance(beta, bool) or not np.isscalar(beta) or not np.isreal(beta):
        raise TypeError(f"{name} must be a real number, got {type(beta).__name__}")
    beta = float(beta)
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {beta}")
    return beta


def _check_betas(betas):
    betas = as_float_array(betas, "betas")
    if betas.ndim != 1 or betas.size < 1:
        raise ValueError(f"betas must be a 1-d array with at least one entry, got shape "
                         f"{betas.shape}")
    if betas[0] != 1.0 or np.any(np.diff(betas) >= 0) or betas[-1] < 0:
        raise ValueError(f"betas must start at 1 and decrease strictly to a value >= 0, "
                         f"got {betas.tolist()}")
    return betas


def tempering_transition_matrix(model, betas):
    r"""The exact transition matrix of one step of parallel tempering.

    .. math::
        K = \Big(\bigotimes_{r=1}^{R} T_{\beta_r}\Big)\, S_{1,2}\, S_{2,3} \cdots S_{R-1,R},

    with :math:`T_\beta` the visible Gibbs transition of the tempered model
    (:func:`rbm.transition.gibbs_transition_matrix`) and :math:`S_{r,r+1}`
    the Metropolis exchange of the states of replicas :math:`r` and
    :math:`r+1` (see the module notes).  Its stationary distribution is
    :math:`\prod_r p_{\beta_r}(v_r)`.  The chain is not reversible (a
    product of reversible steps in a fixed order), so its eigenvalues may be
    complex.

    Parameters
    ----------
    model : RBM
        With ``R * n_visible <= MAX_TEMPERING_BITS`` (in bits: ``q`` states count
        :math:`\log_2 q` each); two discrete layers, not Gaussian ones.
    betas : array_like of shape (n_replicas,)
        Inverse temperatures, :math:`\beta_1 = 1 > \beta_2 > \dots \ge 0`, one per replica
        (:math:`R` of them).

    Returns
    -------
    ndarray of shape (2**(R * n_visible), 2**(R * n_visible))
        Row-stochastic.  The joint state :math:`(v_1, \dots, v_R)` has index
        :math:`\sum_r i(v_r)\, 2^{(R - r)\, n_\text{visible}}`, with
        :math:`i(v)` the index of :func:`rbm.exact.all_states`: replica 1 is
        the most significant.

    Raises
    ------
    ValueError
        If the joint states are too many or `betas` is not as above.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.transition import gibbs_transition_matrix
    >>> model = RBM.random(2, 2, scale=2.0, rng=0)
    >>> K = tempering_transition_matrix(model, [1.0])  # plain Gibbs
    >>> bool(np.abs(K - gibbs_transition_matrix(model)).max() < 1e-15)
    True
    """
    check_model(model)
    betas = _check_betas(betas)
    n_replicas, n_visible = len(betas), model.n_visible
    for side in ("visible", "hidden"):
        if not getattr(model, side).discrete:
            raise ValueError(f"tempering_transition_matrix needs discrete units; model.{side} "
                             f"is {getattr(model, side)!r}, which is continuous")
    bits = n_visible * np.log2(model.visible.n_states)
    check_enumeration_size(int(np.ceil(n_replicas * bits - 1e-9)),
                           f"tempering_transition_matrix with {n_replicas} replicas of "
                           f"{n_visible} visible units", limit=MAX_TEMPERING_BITS)
    models = [tempered(model, beta) for beta in betas]
    K = np.ones((1, 1))
    for m in models:
        K = np.kron(K, gibbs_transition_matrix(m))
    n_states = model.visible.n_states ** n_visible
    V = all_states(n_visible) if model.is_binary else model.visible.states(0, n_states)
    log_weight = np.array([-m.free_energy(V) for m in models])      # (R, n_states)
    replica_state = np.array(np.unravel_index(np.arange(n_states**n_replicas),
                                              (n_states,) * n_replicas))   # (R, N)
    place = n_states ** np.arange(n_replicas - 1, -1, -1)
    for r in range(n_replicas - 1):
        x, y = replica_state[r], replica_state[r + 1]
        log_ratio = (log_weight[r, y] + log_weight[r + 1, x]
                     - log_weight[r, x] - log_weight[r + 1, y])
        accept = np.exp(np.minimum(log_ratio, 0.0))
        swapped = np.arange(len(x)) + (y - x) * place[r] + (x - y) * place[r + 1]
        # K S: the mass K sends to s moves on to swap(s) with probability a(s)
        moved = K * accept[None, :]
        K = K - moved
        np.add.at(K.T, swapped, moved.T)
    return K


def _free_energy(model, v, beta):
    r""":math:`F_\beta(v) = \beta E_\text{v}(v) - A_{\text{h},\beta}(s(v) W)` for checked rows."""
    return beta * model.visible.energy(v) - model.hidden.log_normaliser(model.input_hidden(v),
                                                                       beta)


class TemperedPCD:
    r"""Persistent CD whose chains are the cold replicas of parallel tempering.

    Every persistent chain has a replica at each inverse temperature of
    `betas`.  Each call of :meth:`gradient` advances every replica by ``k``
    block Gibbs steps of its tempered model, then proposes to exchange the
    states of neighbouring replicas, pair by pair, with the Metropolis
    probability of the module notes, and uses the replicas at
    :math:`\beta = 1` for the model term, as :class:`~rbm.estimators.PCD`
    uses its chains.  This is the tempered estimator of Desjardins et al. (2010)
    in its simplest form (a fixed ladder of temperatures); see
    :func:`tempering_transition_matrix` for the exact kernel of one step.

    Parameters
    ----------
    n_chains : int
        Persistent chains, each with one replica per temperature.
    betas : array_like of shape (n_replicas,)
        Inverse temperatures, :math:`\beta_1 = 1 > \beta_2 > \dots \ge 0`.
    k : int, default 1
        Gibbs steps of every replica per call.
    use_probabilities : bool, default True
        As in :class:`~rbm.estimators.CD`.

    Attributes
    ----------
    chains : ndarray of shape (n_replicas, n_chains, n_visible) or None
        The replicas' visible states, row 0 at :math:`\beta = 1`; ``None``
        until the first call, which starts every replica at rows of the data.

    Examples
    --------
    >>> from rbm import RBM
    >>> pt = TemperedPCD(n_chains=10, betas=[1.0, 0.5])
    >>> model = RBM.random(4, 3, scale=0.5, rng=0)
    >>> g = pt.gradient(model, [[1, 0, 1, 0], [0, 1, 0, 1]], rng=1)
    >>> pt.chains.shape
    (2, 10, 4)
    """

    def __init__(self, n_chains, betas, k=1, *, use_probabilities=True):
        self.n_chains = check_positive_int(n_chains, "n_chains")
        self.betas = _check_betas(betas)
        check_array_size(self.n_chains * len(self.betas), f"n_chains={self.n_chains} chains "
                         f"of {len(self.betas)} replicas")
        self.k = check_positive_int(k, "k")
        self.use_probabilities = check_bool(use_probabilities, "use_probabilities")
        self.chains = None
        self._proposed = 0
        self._accepted = np.zeros(len(self.betas) - 1)

    def __repr__(self):
        return (f"TemperedPCD(n_chains={self.n_chains}, betas={self.betas.tolist()}, "
                f"k={self.k}, use_probabilities={self.use_probabilities})")

    @property
    def accepted(self):
        """The fraction of accepted exchanges per neighbouring pair, over all calls so far."""
        return self._accepted / max(self._proposed, 1)

    def gradient(self, model, data, *, rng):
        r"""Advance every replica, exchange neighbours, and return the estimate of the cold chains.

        Parameters
        ----------
        model, data, rng
            As in :meth:`rbm.estimators.PCD.gradient`.

        Returns
        -------
        Gradient
        """
        v0, rng = checked_data(model, data, rng)
        if self.betas[-1] == 0.0:
            for side in ("visible", "hidden"):
                if not getattr(model, side).discrete:
                    raise ValueError(f"TemperedPCD needs betas > 0 with a continuous layer "
                                     f"(at beta = 0 it has no distribution); model.{side} "
                                     f"is {getattr(model, side)!r}")
        if self.chains is None:
            self.chains = v0[rng.integers(0, len(v0), size=(len(self.betas), self.n_chains))]
        elif self.chains.shape[2] != model.n_visible:
            raise ValueError(f"model has n_visible={model.n_visible}, but the persistent chains "
                             f"have {self.chains.shape[2]} visible units")
        for r, beta in enumerate(self.betas):
            self.chains[r] = gibbs_steps(model, self.chains[r], self.k, rng, beta)
        for r in range(len(self.betas) - 1):
            x, y = self.chains[r], self.chains[r + 1]
            b_x, b_y = self.betas[r], self.betas[r + 1]
            log_ratio = (_free_energy(model, x, b_x) + _free_energy(model, y, b_y)
                         - _free_energy(model, y, b_x) - _free_energy(model, x, b_y))
            swap = rng.random(self.n_chains) < np.exp(np.minimum(log_ratio, 0.0))
            x[swap], y[swap] = y[swap].copy(), x[swap].copy()
            self._accepted[r] += swap.mean()
        self._proposed += 1
        return data_minus_chains(model, v0, self.chains[0], self.use_probabilities, rng)
