r"""Sampling estimates of the log-likelihood gradient: contrastive divergence (CD-k) and persistent CD.

The exact gradient of the mean log-likelihood (:func:`rbm.exact.gradient`)
is a data term minus a model term,

.. math::
    \frac{\partial \bar\ell}{\partial W} = \langle v h^\top\rangle_\text{data}
    - \langle v h^\top\rangle_\text{model},

and likewise for ``b`` (with :math:`v`) and ``c`` (with :math:`h`).  The
estimators here keep the data term and replace the model term by
statistics of short Gibbs chains: started at the data (CD-k) or kept
between calls (persistent CD).  Both return a :class:`~rbm.model.Gradient` in the
ascent direction.

Every estimator here is an object with one method, ``gradient(model, data, *,
rng) -> Gradient``: :class:`CD`, :class:`PCD`, :class:`FastPCD` (persistent
chains that sample the model plus decaying fast weights) and
:class:`ExactGradient` (the exact gradient, for comparison and for training
small models exactly).
:func:`rbm.training.train` accepts any object with that method.

The **hidden statistic** can be the sampled :math:`h` or its conditional
mean :math:`p(h{=}1 \mid v)`.  Both have the same expectation, because
:math:`h` enters the statistics linearly and
:math:`\mathbb{E}[h \mid v] = p(h{=}1 \mid v)`; the probabilities are the
default because they remove the sampling noise of :math:`h` given
:math:`v` (Rao-Blackwellisation).  The visible states of the chains are
always sampled.

The estimators are written once against the layer interface
(:mod:`rbm.layers`), so they take a model of any two layers: its chains
alternate the layers' own conditionals, the statistics are
:math:`\langle -\partial E/\partial\theta\rangle` of every parameter, and the
estimates are :class:`~rbm.model.Gradient` objects with one field per
parameter (``W``, ``b``, ``c`` for the binary model).
"""

import numpy as np

from rbm._kernels import (checked_data, contrast, data_minus_chains, gibbs_steps,
                          row_statistics)
from rbm._validation import (
    check_array_size,
    check_bool,
    check_positive_float,
    check_positive_int,
)
from rbm.exact import gradient as exact_gradient
from rbm.model import Gradient

__all__ = ["CD", "PCD", "FastPCD", "ExactGradient"]


_INITS = ("data", "uniform")


def _check_init(init):
    """The initialisation of persistent chains, one of ``_INITS``."""
    if init not in _INITS:
        raise ValueError(f"init must be 'data' or 'uniform', got {init!r}")
    return init


class CD:
    r"""Contrastive divergence, CD-k: chains started at the data, run for `k` Gibbs steps.

    One chain starts at each data row :math:`v_0`:
    :math:`h_0 \sim p(h \mid v_0)`, then for :math:`t = 1, \dots, k`:
    :math:`v_t \sim p(v \mid h_{t-1})`, :math:`h_t \sim p(h \mid v_t)`.
    The estimate is

    .. math::
        \Delta W = \langle v_0 \tilde h_0^\top \rangle - \langle v_k \tilde h_k^\top\rangle,\quad
        \Delta b = \langle v_0\rangle - \langle v_k\rangle,\quad
        \Delta c = \langle \tilde h_0\rangle - \langle \tilde h_k\rangle,

    averaged over the data rows, where :math:`\tilde h_t` is
    :math:`p(h{=}1 \mid v_t)` (``use_probabilities=True``) or the sample
    :math:`h_t` (``False``).  Its exact expectation is
    :func:`rbm.transition.cd_expected_gradient`; it is biased for the true
    gradient at finite ``k``.

    Parameters
    ----------
    k : int, default 1
        Number of Gibbs steps, at least 1.
    use_probabilities : bool, default True
        Use :math:`p(h{=}1 \mid v)` in place of the sampled hidden states
        in the statistics.  This is the default because it has the same
        expectation and removes the noise of sampling ``h`` given ``v``.
        The chain itself is always driven by the sampled :math:`h_0`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=0.5, rng=0)
    >>> cd = CD(k=1)
    >>> cd
    CD(k=1, use_probabilities=True)
    >>> g = cd.gradient(model, [[1, 0, 1, 0], [0, 1, 0, 1]], rng=1)
    >>> g.W.shape, g.b.shape, g.c.shape
    ((4, 3), (4,), (3,))
    """

    def __init__(self, k=1, *, use_probabilities=True):
        self.k = check_positive_int(k, "k")
        self.use_probabilities = check_bool(use_probabilities, "use_probabilities")

    def __repr__(self):
        return f"CD(k={self.k}, use_probabilities={self.use_probabilities})"

    def gradient(self, model, data, *, rng):
        """The CD-k estimate for `data`, in the ascent direction.

        Parameters
        ----------
        model : RBM
        data : array_like of shape (n_samples, n_visible)
            Zeros and ones; each row starts one chain.
        rng : numpy.random.Generator or int

        Returns
        -------
        Gradient
            One field per parameter of the model.
        """
        v0, rng = checked_data(model, data, rng)
        h0 = model.hidden.sample(model.input_hidden(v0), rng=rng)
        v = model.visible.sample(model.input_visible(h0), rng=rng)
        if self.k > 1:  # h_k itself is drawn below, only when the statistics need it
            v = gibbs_steps(model, v, self.k - 1, rng)
        n, divide = v0.shape[0], not model.is_binary
        if self.use_probabilities:
            pos, neg = row_statistics(model, v0), row_statistics(model, v)
        else:
            hk = model.hidden.sample(model.input_hidden(v), rng=rng)
            pos, neg = row_statistics(model, v0, h0), row_statistics(model, v, hk)
        return contrast(pos, n, neg, n, divide=divide)


class PCD:
    r"""Persistent contrastive divergence (PCD): Gibbs chains kept between gradient estimates.

    Each call of :meth:`gradient` advances the stored fantasy chains by
    ``k`` block Gibbs steps under the *current* model and uses their states
    for the model term, so over many small parameter updates the chains
    stay close to the model distribution instead of restarting at the data.
    Use a new estimator for each training run.

    Parameters
    ----------
    n_chains : int
        Number of persistent chains, at least 1.
    k : int, default 1
        Gibbs steps per call, at least 1.
    use_probabilities : bool, default True
        As in :class:`CD`: use :math:`p(h{=}1 \mid v)` instead of
        sampled hidden states in both statistics (same expectation, less
        noise).
    init : {"data", "uniform"}, default "data"
        How the chains start, on the first call: ``"data"`` draws
        ``n_chains`` rows of that call's data uniformly with replacement;
        ``"uniform"`` draws every unit as a fair coin.

    Attributes
    ----------
    chains : ndarray of shape (n_chains, n_visible) or None
        The chains' current visible states; ``None`` until the first call.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=0.5, rng=0)
    >>> pcd = PCD(n_chains=10, k=1)
    >>> pcd
    PCD(n_chains=10, k=1, use_probabilities=True, init='data')
    >>> pcd.chains is None
    True
    >>> g = pcd.gradient(model, [[1, 0, 1, 0], [0, 1, 0, 1]], rng=1)
    >>> pcd.chains.shape
    (10, 4)
    """

    def __init__(self, n_chains, k=1, *, use_probabilities=True, init="data"):
        self.n_chains = check_positive_int(n_chains, "n_chains")
        check_array_size(self.n_chains, f"n_chains={self.n_chains}")
        self.k = check_positive_int(k, "k")
        self.use_probabilities = check_bool(use_probabilities, "use_probabilities")
        self.init = _check_init(init)
        self.chains = None

    def __repr__(self):
        return (f"PCD(n_chains={self.n_chains}, k={self.k}, "
                f"use_probabilities={self.use_probabilities}, init={self.init!r})")

    def gradient(self, model, data, *, rng):
        r"""Advance the chains `k` steps and return the PCD gradient estimate.

        .. math::
            \Delta W = \langle v \tilde h^\top\rangle_\text{data}
            - \langle v \tilde h^\top\rangle_\text{chains},

        and likewise for ``b`` and ``c``, with :math:`\tilde h` as in
        :class:`CD`.  The chains are advanced first, with
        ``gibbs_chain(model, self.chains, self.k, rng=rng)``, and the
        model term uses their new states.

        Parameters
        ----------
        model : RBM
            Its ``n_visible`` must match the chains'.
        data : array_like of shape (n_samples, n_visible)
            Zeros and ones.
        rng : numpy.random.Generator or int
            Drives the chains; pass the same generator at every call (an
            int seed would restart the same draws each time).

        Returns
        -------
        Gradient
            One field per parameter of the model.
        """
        v0, rng = checked_data(model, data, rng)
        self.chains = gibbs_steps(model, self.current_chains(model, v0, rng=rng), self.k, rng)
        return self._estimate(model, v0, rng)

    def _estimate(self, model, v0, rng):
        """The data's statistics minus the chains'."""
        return data_minus_chains(model, v0, self.chains, self.use_probabilities, rng)

    def current_chains(self, model, v0, *, rng):
        """The chains' states before this call's steps: as stored, or initialised from `v0`
        (drawn as the first call of :meth:`gradient` draws them; the fused trainer uses it too)."""
        if self.chains is None:
            check_array_size(self.n_chains * model.n_visible,
                             f"n_chains={self.n_chains} chains of {model.n_visible} units")
            if self.init == "data":
                return v0[rng.integers(0, v0.shape[0], size=self.n_chains)]
            return model.visible.random_states(self.n_chains, rng=rng)
        if self.chains.shape[1] != model.n_visible:
            raise ValueError(
                f"model has n_visible={model.n_visible}, but the persistent chains have "
                f"{self.chains.shape[1]} visible units"
            )
        return self.chains


class FastPCD(PCD):
    r"""Persistent CD with fast weights: the chains sample a model pushed away from their states.

    Besides the model's parameters :math:`\theta`, the estimator keeps fast
    parameters :math:`\phi` of the same shape, and advances its chains
    under :math:`\theta + \phi` instead of :math:`\theta`.  After each
    estimate :math:`\hat g`,

    .. math:: \phi \leftarrow \rho\, \phi + \eta_\text{fast}\, \hat g ,

    so :math:`\phi` follows recent estimates and decays by :math:`\rho` per
    call.  As :math:`\hat g` lowers the probability of the states the chains
    sit in, the fast parameters push the chains out of them, and the chains
    explore faster than the model changes (Tieleman and Hinton, 2009).  The
    estimate itself is that of :class:`PCD`, with the statistics of the
    model :math:`\theta`.

    Parameters
    ----------
    n_chains, k, use_probabilities, init
        As in :class:`PCD`.
    fast_learning_rate : float
        :math:`\eta_\text{fast} \ge 0`; with 0 this is :class:`PCD`.
    fast_decay : float, default 0.95
        :math:`\rho \in [0, 1]`.

    Attributes
    ----------
    chains : ndarray of shape (n_chains, n_visible) or None
        As in :class:`PCD`.
    fast : Gradient or None
        The fast parameters :math:`\phi`; ``None`` until the first call.

    Examples
    --------
    >>> from rbm import RBM
    >>> fpcd = FastPCD(10, fast_learning_rate=1.0)
    >>> g = fpcd.gradient(RBM.random(4, 3, scale=0.5, rng=0), [[1, 0, 1, 0]], rng=1)
    >>> bool((fpcd.fast - g).max_abs() == 0)  # after one call: phi = 1.0 * g
    True
    """

    def __init__(self, n_chains, k=1, *, fast_learning_rate, fast_decay=0.95,
                 use_probabilities=True, init="data"):
        super().__init__(n_chains, k, use_probabilities=use_probabilities, init=init)
        self.fast_learning_rate = check_positive_float(fast_learning_rate, "fast_learning_rate",
                                                       allow_zero=True)
        self.fast_decay = check_positive_float(fast_decay, "fast_decay", allow_zero=True)
        if self.fast_decay > 1:
            raise ValueError(f"fast_decay must lie in [0, 1], got {self.fast_decay}")
        self.fast = None

    def __repr__(self):
        return (f"FastPCD(n_chains={self.n_chains}, k={self.k}, "
                f"fast_learning_rate={self.fast_learning_rate}, fast_decay={self.fast_decay}, "
                f"use_probabilities={self.use_probabilities}, init={self.init!r})")

    def gradient(self, model, data, *, rng):
        r"""Advance the chains under the model plus the fast parameters; return the PCD estimate.

        Parameters
        ----------
        model, data, rng
            As in :meth:`PCD.gradient`.

        Returns
        -------
        Gradient
        """
        v0, rng = checked_data(model, data, rng)
        start = self.current_chains(model, v0, rng=rng)
        params = model.parameters()
        if self.fast is None or {k: v.shape for k, v in self.fast.fields.items()} != {
                k: v.shape for k, v in params.items()}:
            self.fast = Gradient.from_fields({k: np.zeros_like(v) for k, v in params.items()})
        shifted = model.copy()
        for name, arr in shifted.parameters().items():
            arr += self.fast.fields[name]
        self.chains = gibbs_steps(shifted, start, self.k, rng)
        g = self._estimate(model, v0, rng)
        self.fast = self.fast_decay * self.fast + self.fast_learning_rate * g
        return g


class ExactGradient:
    r"""The exact gradient as an estimator: :func:`rbm.exact.gradient` (`rng` is unused).

    For comparing estimators with the truth, and for training small models
    exactly (the smaller layer must be enumerable).

    Examples
    --------
    >>> from rbm import RBM
    >>> ExactGradient().gradient(RBM.random(3, 2, rng=0), [[1, 0, 1]], rng=0).b.shape
    (3,)
    """

    def __repr__(self):
        return "ExactGradient()"

    def gradient(self, model, data, *, rng=None):
        """:func:`rbm.exact.gradient` of `data`; `rng` is accepted and ignored."""
        return exact_gradient(model, data)
