r"""Short-run, non-persistent chains started from a fixed distribution ("Rdm-k"), exactly.

Contrastive divergence starts its chains at the data; the *short-run*
estimator starts them afresh at every update from a fixed distribution
:math:`p_0` (uniform, or the data's independent marginals), runs them for
:math:`k` block Gibbs steps and uses their states for the model term.  Its
negative samples are then distributed as

.. math:: r_k = p_0\,T^k,

the exact :math:`k`-step law of the chain (:math:`T` the visible Gibbs
transition of :func:`rbm.transition.gibbs_transition_matrix`), and its
expected update is

.. math::
    g_k(\theta) = \big\langle v\,\sigma(v)^\top\big\rangle_q
    - \big\langle v\,\sigma(v)^\top\big\rangle_{p_0 T^k},
    \qquad \sigma(v) = p(h{=}1 \mid v),

with the bias parts :math:`\langle v\rangle_q - \langle v\rangle_{r_k}` and
:math:`\langle\sigma\rangle_q - \langle\sigma\rangle_{r_k}`.  Its zeros are
the models whose :math:`k`-step law matches the data's moments; the
model's own equilibrium :math:`p` plays no part.

This module holds:

* :class:`ShortRunCD`, the estimator (an object that
  :func:`rbm.training.train` accepts), written against the layer interface;
* :func:`start_distribution` and :func:`independent_marginals`, the start
  :math:`p_0`;
* :func:`k_step_distribution`, :func:`expected_update` and
  :func:`kl_to_k_step`, exact on small {0,1} models;
* :func:`kl_gradient`, the exact gradient of
  :math:`\mathrm{KL}(q\,\|\,p_0T^k)` through the :math:`k` steps, and
  :func:`update_jacobian`, the Jacobian of :math:`g_k`;
* :func:`fixed_point`, a zero of either field (the update's, or the
  divergence's gradient) by damped Newton steps;
* :func:`noisy_prototypes`, a small data set of another structure than bars
  and stripes (clusters around a few prototypes).

The exact functions enumerate both layers of a model of {0,1} units and hold
:math:`2^{n_\text{visible}} \times 2^{n_\text{hidden}}` numbers, so each
layer is limited to ``MAX_SHORT_RUN_BITS`` units.
"""

import numpy as np

from rbm._kernels import checked_data, data_minus_chains, gibbs_steps
from rbm._validation import (as_float_array, check_bool, check_distribution, check_positive_float,
                              check_positive_int, check_rng)
from rbm.cd_theory import update_jacobian as cd_update_jacobian
from rbm.exact import all_states
from rbm.model import RBM, Gradient, check_model
from rbm.special import sigmoid, softplus

__all__ = ["MAX_SHORT_RUN_BITS", "ShortRunCD", "independent_marginals", "start_distribution",
           "k_step_distribution", "expected_update", "kl_to_k_step", "kl_gradient",
           "update_jacobian", "fixed_point", "noisy_prototypes"]

# the exact functions hold (2**n_visible, 2**n_hidden) matrices: 12 units a layer is 128 MiB
MAX_SHORT_RUN_BITS = 12


# -- the start ----------------------------------------------------------------------------

def independent_marginals(data):
    r"""The data's independent marginals: the mean of each visible unit.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.

    Returns
    -------
    ndarray of shape (n_visible,)
        :math:`\hat p_i = \frac1n \sum_\mu v_i^{(\mu)}`, in :math:`[0, 1]`.

    Examples
    --------
    >>> independent_marginals([[1, 0, 1], [1, 1, 0]])
    array([1. , 0.5, 0.5])
    """
    data = as_float_array(data, "data")
    if data.ndim != 2 or data.shape[0] == 0:
        raise ValueError(f"data must have shape (n_samples, n_visible) with n_samples >= 1, "
                         f"got {data.shape}")
    if not np.isin(data, (0.0, 1.0)).all():
        raise ValueError("data must hold zeros and ones only")
    return data.mean(axis=0)


def _check_start(start, n_visible=None):
    """'uniform', or a probability per visible unit as a float array."""
    if isinstance(start, str):
        if start != "uniform":
            raise ValueError(f"start must be 'uniform' or one probability per visible unit, "
                             f"got {start!r}")
        return start
    p = as_float_array(start, "start")
    if p.ndim != 1 or (n_visible is not None and p.shape != (n_visible,)):
        raise ValueError(f"start must be 'uniform' or have shape (n_visible,)"
                         f"{'' if n_visible is None else f' = ({n_visible},)'}, got {p.shape}")
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError("start must hold probabilities in [0, 1]")
    return p


def start_distribution(start, n_visible):
    r"""The start :math:`p_0` as a distribution over all :math:`2^{n}` visible states.

    Parameters
    ----------
    start : "uniform" or array_like of shape (n_visible,)
        ``"uniform"``: every state has :math:`2^{-n}`; an array of
        probabilities :math:`m_i`: the product of Bernoulli(:math:`m_i`)
        (for instance :func:`independent_marginals` of the data).
    n_visible : int
        At most ``MAX_SHORT_RUN_BITS``.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        In the order of :func:`rbm.exact.all_states`.

    Examples
    --------
    >>> start_distribution([0.5, 1.0], 2)
    array([0. , 0.5, 0. , 0.5])
    >>> start_distribution("uniform", 2)
    array([0.25, 0.25, 0.25, 0.25])
    """
    n_visible = check_positive_int(n_visible, "n_visible")
    if n_visible > MAX_SHORT_RUN_BITS:
        raise ValueError(f"n_visible={n_visible} exceeds MAX_SHORT_RUN_BITS={MAX_SHORT_RUN_BITS}")
    start = _check_start(start, n_visible)
    if isinstance(start, str):
        return np.full(2 ** n_visible, 2.0 ** -n_visible)
    V = all_states(n_visible)
    return np.prod(np.where(V == 1, start, 1 - start), axis=1)


# -- the estimator ------------------------------------------------------------------------

class ShortRunCD:
    r"""Short-run CD ("Rdm-k"): fresh chains from a fixed :math:`p_0`, `k` Gibbs steps, every call.

    At every call, `n_chains` chains start at :math:`v_0 \sim p_0`
    (uniform states of a discrete visible layer, or independent units with
    the probabilities `start`; fixed, whatever the model's parameters), run :math:`k` block Gibbs steps
    (:math:`h \sim p(h\mid v)`, then :math:`v \sim p(v \mid h)`), and the
    estimate is

    .. math::
        \Delta\theta = \big\langle -\partial_\theta E\big\rangle_\text{data}
        - \big\langle -\partial_\theta E\big\rangle_{v_k},

    with the hidden statistic Rao-Blackwellised as in
    :class:`rbm.estimators.CD` (``use_probabilities=True``) or sampled.
    Nothing is kept between calls.  Its exact expectation is
    :func:`expected_update`.

    Parameters
    ----------
    k : int, default 1
        Gibbs steps, at least 1.
    start : "uniform" or array_like of shape (n_visible,), default "uniform"
        :math:`p_0`: uniform states of a discrete visible layer, or one
        probability per {0,1} visible unit.  A continuous (Gaussian) layer
        has no uniform distribution, and drawing its states "with zero
        input" would follow the layer's own bias and scale, which move in
        training, so that :math:`p_0` would not be fixed: it is refused.
    n_chains : int, optional
        Chains per call; by default one per data row of the call.
    use_probabilities : bool, default True
        Use :math:`p(h{=}1 \mid v)` in place of sampled hidden states in the
        statistics (same expectation, less noise).

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=0.5, rng=0)
    >>> est = ShortRunCD(k=5)
    >>> est
    ShortRunCD(k=5, start='uniform', n_chains=None, use_probabilities=True)
    >>> g = est.gradient(model, [[1, 0, 1, 0], [0, 1, 0, 1]], rng=1)
    >>> g.W.shape, g.b.shape, g.c.shape
    ((4, 3), (4,), (3,))
    """

    def __init__(self, k=1, *, start="uniform", n_chains=None, use_probabilities=True):
        self.k = check_positive_int(k, "k")
        self.start = _check_start(start)
        self.n_chains = None if n_chains is None else check_positive_int(n_chains, "n_chains")
        self.use_probabilities = check_bool(use_probabilities, "use_probabilities")

    def __repr__(self):
        start = self.start if isinstance(self.start, str) else "marginals"
        return (f"ShortRunCD(k={self.k}, start={start!r}, n_chains={self.n_chains}, "
                f"use_probabilities={self.use_probabilities})")

    def initial_states(self, model, n, *, rng):
        """`n` visible states drawn from :math:`p_0`, shape ``(n, n_visible)``.

        Examples
        --------
        >>> from rbm import RBM
        >>> model = RBM.random(3, 2, rng=0)
        >>> ShortRunCD(start=[1.0, 0.0, 1.0]).initial_states(model, 2, rng=0)
        array([[1., 0., 1.],
               [1., 0., 1.]])
        """
        check_model(model)
        n = check_positive_int(n, "n")
        rng = check_rng(rng)
        if isinstance(self.start, str):
            if not model.visible.discrete:
                raise ValueError("start='uniform' needs a discrete visible layer: a continuous "
                                 "layer has no uniform distribution, and its states drawn with "
                                 "zero input follow the model's own bias and scale, so p0 "
                                 "would move with training")
            return model.visible.random_states(n, rng=rng)
        if not model.is_binary:
            raise ValueError("a start given as probabilities needs {0,1} visible units; "
                             "use start='uniform' for other layers")
        if self.start.shape != (model.n_visible,):
            raise ValueError(f"start has {self.start.shape[0]} probabilities, but the model has "
                             f"n_visible={model.n_visible}")
        return (rng.random((n, model.n_visible)) < self.start).astype(float)

    def gradient(self, model, data, *, rng):
        """The short-run estimate for `data`, in the ascent direction.

        Parameters
        ----------
        model : RBM
        data : array_like of shape (n_samples, n_visible)
            Valid visible states (the data term).
        rng : numpy.random.Generator or int
            Draws the starts and drives the chains.

        Returns
        -------
        Gradient
            One field per parameter of the model.
        """
        v0, rng = checked_data(model, data, rng)
        m = self.n_chains or v0.shape[0]
        v = gibbs_steps(model, self.initial_states(model, m, rng=rng), self.k, rng)
        return data_minus_chains(model, v0, v, self.use_probabilities, rng)


# -- exact quantities ---------------------------------------------------------------------

def _check_exact(model, q=None, start="uniform"):
    """The model checked ({0,1}, small), q as a distribution, p0 as a distribution."""
    check_model(model)
    if not model.is_binary:
        raise ValueError("rbm.short_run's exact functions take a model of {0,1} units; "
                         f"model has {model.visible!r} and {model.hidden!r}")
    for side in ("n_visible", "n_hidden"):
        if getattr(model, side) > MAX_SHORT_RUN_BITS:
            raise ValueError(f"model has {side}={getattr(model, side)}; rbm.short_run enumerates "
                             f"both layers and allows at most {MAX_SHORT_RUN_BITS} units in each")
    if q is not None:
        q = check_distribution(q, "q", 2 ** model.n_visible)
    return q, start_distribution(start, model.n_visible)


def _steps(k, name="k", minimum=1):
    """k as a tuple of ints, and whether it was a single int."""
    if isinstance(k, (list, tuple, np.ndarray)):
        ks = tuple(check_positive_int(int(x) if isinstance(x, np.integer) else x, name, minimum)
                   for x in k)
        if not ks:
            raise ValueError(f"{name} must not be empty")
        return ks, False
    return (check_positive_int(k, name, minimum),), True


class _Conditionals:
    """p(h|v) as A (N_v, N_h), p(v|h) as B (N_h, N_v), sigma(v) as S, sigma(h) as R."""

    def __init__(self, model):
        W, b, c = model.W, model.b, model.c
        self.V, self.H = all_states(model.n_visible), all_states(model.n_hidden)
        pre_h, pre_v = self.V @ W + c, self.H @ W.T + b
        self.S, self.R = sigmoid(pre_h), sigmoid(pre_v)
        self.A = np.exp(pre_h @ self.H.T - softplus(pre_h).sum(axis=1)[:, None])
        self.B = np.exp(pre_v @ self.V.T - softplus(pre_v).sum(axis=1)[:, None])

    def step(self, r):
        return (r @ self.A) @ self.B

    def laws(self, p0, k):
        """[p0, p0 T, ..., p0 T^k]."""
        out = [p0]
        for _ in range(k):
            out.append(self.step(out[-1]))
        return out

    def statistics(self, d):
        """<v sigma^T>_d and the bias parts, as a Gradient, for a signed measure d."""
        return Gradient((self.V * d[:, None]).T @ self.S, d @ self.V, d @ self.S)


def k_step_distribution(model, k, *, start="uniform"):
    r"""The exact law :math:`p_0 T^k` of the visible state after `k` Gibbs steps from :math:`p_0`.

    Parameters
    ----------
    model : RBM
        {0,1} units, at most ``MAX_SHORT_RUN_BITS`` in each layer.
    k : int or sequence of int
        Steps, at least 0 (``0`` gives :math:`p_0`).
    start : "uniform" or array_like of shape (n_visible,), default "uniform"
        As in :func:`start_distribution`.

    Returns
    -------
    ndarray of shape (2**n_visible,), or (len(k), 2**n_visible) for a sequence

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> r = k_step_distribution(model, [1, 400])
    >>> r.shape, bool(abs(r[0].sum() - 1) < 1e-12)
    ((2, 8), True)
    >>> bool(np.abs(r[1] - exact.visible_distribution(model)).max() < 1e-12)
    True
    """
    _, p0 = _check_exact(model, None, start)
    ks, single = _steps(k, minimum=0)
    laws = _Conditionals(model).laws(p0, max(ks))
    out = np.array([laws[j] for j in ks])
    return out[0] if single else out


def expected_update(model, q, k, *, start="uniform"):
    r"""The exact expectation of the :class:`ShortRunCD` estimate for data distributed as `q`.

    .. math::
        g_k = \big\langle v\,\sigma(v)^\top\big\rangle_q
        - \big\langle v\,\sigma(v)^\top\big\rangle_{p_0T^k},

    and likewise :math:`\langle v\rangle` and :math:`\langle\sigma\rangle`
    for the biases.  The same for either ``use_probabilities`` setting and
    any number of chains (the estimate is linear in each chain's statistics).

    Parameters
    ----------
    model : RBM
        {0,1} units, at most ``MAX_SHORT_RUN_BITS`` in each layer.
    q : array_like of shape (2**n_visible,)
        The data's distribution over the visible states in the order of
        :func:`rbm.exact.all_states` (:func:`rbm.exact.empirical_distribution`).
    k : int or sequence of int
        Steps, at least 1.
    start : "uniform" or array_like of shape (n_visible,), default "uniform"

    Returns
    -------
    Gradient, or list of Gradient for a sequence `k`
        The ascent direction.

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> q = exact.empirical_distribution([[1, 0, 1], [0, 1, 1]])
    >>> far = expected_update(model, q, 500)       # the chain has mixed: the ML gradient
    >>> bool((far - exact.gradient(model, [[1, 0, 1], [0, 1, 1]])).max_abs() < 1e-12)
    True
    """
    q, p0 = _check_exact(model, q, start)
    ks, single = _steps(k)
    cond = _Conditionals(model)
    laws = cond.laws(p0, max(ks))
    out = [cond.statistics(q - laws[j]) for j in ks]
    return out[0] if single else out


def kl_to_k_step(q, model, k, *, start="uniform"):
    r""":math:`\mathrm{KL}(q\,\|\,p_0T^k)`, in nats: how well the `k`-step law fits the data.

    Parameters
    ----------
    q : array_like of shape (2**n_visible,)
        The data's distribution.
    model : RBM
        {0,1} units, at most ``MAX_SHORT_RUN_BITS`` in each layer.
    k : int or sequence of int
        Steps, at least 0.
    start : "uniform" or array_like of shape (n_visible,), default "uniform"

    Returns
    -------
    float, or ndarray of shape (len(k),) for a sequence

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(2, 1, rng=0)
    >>> q = np.array([0.5, 0.0, 0.0, 0.5])
    >>> bool(abs(kl_to_k_step(q, model, 0) - np.log(2)) < 1e-12)  # KL(q || uniform)
    True
    """
    q, p0 = _check_exact(model, q, start)
    ks, single = _steps(k, minimum=0)
    laws = _Conditionals(model).laws(p0, max(ks))
    nz = q > 0
    out = np.array([float(np.sum(q[nz] * (np.log(q[nz]) - np.log(laws[j][nz])))) for j in ks])
    return float(out[0]) if single else out


def kl_gradient(model, q, k, *, start="uniform"):
    r"""The exact gradient :math:`\nabla_\theta\,\mathrm{KL}(q\,\|\,p_0T^k)`, through the chain.

    With :math:`r_k = p_0T^k`,
    :math:`\nabla\mathrm{KL} = -\sum_v \frac{q(v)}{r_k(v)}\,\nabla r_k(v)`,
    computed backwards through the :math:`k` steps: with :math:`a_j = p_0T^j`,
    :math:`\ell = q / r_k` and :math:`b_j = T^{k-1-j}\ell`,
    :math:`\sum_v \ell(v) \nabla r_k(v) = \sum_{j<k} a_j^\top (\nabla T)\, b_j`, and
    :math:`\nabla T(v, v') = \sum_h p(h\mid v)\,p(v'\mid h)\,
    [\nabla\log p(h\mid v) + \nabla\log p(v'\mid h)]` with
    :math:`\partial_{W_{ij}}\log p(h\mid v) = v_i(h_j - \sigma_j(v))`,
    :math:`\partial_{c_j}\log p(h\mid v) = h_j - \sigma_j(v)`,
    :math:`\partial_{W_{ij}}\log p(v'\mid h) = h_j(v'_i - \sigma_i(h))` and
    :math:`\partial_{b_i}\log p(v'\mid h) = v'_i - \sigma_i(h)`.
    The model's equilibrium does not enter.  Minus this is the ascent
    direction of the :math:`k`-step law's likelihood, to compare with
    :func:`expected_update`.

    Parameters
    ----------
    model, q, k, start
        As in :func:`expected_update`; `k` a single int.

    Returns
    -------
    Gradient
        The direction of steepest *increase* of the divergence.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> q = np.array([0.3, 0, 0, 0.2, 0, 0.1, 0, 0.4])
    >>> g = kl_gradient(model, q, 2)
    >>> e = np.zeros(6); e[0] = 1e-6
    >>> plus = model.copy(); plus.W += e[:6].reshape(3, 2)
    >>> minus = model.copy(); minus.W -= e[:6].reshape(3, 2)
    >>> fd = (kl_to_k_step(q, plus, 2) - kl_to_k_step(q, minus, 2)) / 2e-6
    >>> bool(abs(fd - g.W[0, 0]) < 1e-8)
    True
    """
    q, p0 = _check_exact(model, q, start)
    k = check_positive_int(k, "k")
    cond = _Conditionals(model)
    V, H, A, B, S, R = cond.V, cond.H, cond.A, cond.B, cond.S, cond.R
    forward = cond.laws(p0, k)
    r = forward[-1]
    back = np.where(q > 0, q / np.where(q > 0, r, 1.0), 0.0)   # b_{k-1} = q / r_k
    M = np.zeros_like(A)
    N = np.zeros_like(B)
    for j in range(k - 1, -1, -1):
        Bb = B @ back
        M += forward[j][:, None] * A * Bb[None, :]
        N += (forward[j] @ A)[:, None] * B * back[None, :]
        back = A @ Bb
    hidden = M @ H - M.sum(axis=1)[:, None] * S
    visible = N @ V - N.sum(axis=1)[:, None] * R
    ascent = Gradient(V.T @ hidden + visible.T @ H, visible.sum(axis=0), hidden.sum(axis=0))
    return -ascent


def update_jacobian(model, q, k, *, start="uniform"):
    r"""The Jacobian :math:`J_{ab} = \partial (g_k)_a / \partial\theta_b` of :func:`expected_update`.

    The data term :math:`\langle v\sigma^\top\rangle_q` is minus the gradient
    of :math:`\sum_v q(v) F(v)` (free energy :math:`F`), so its Jacobian is
    symmetric, and

    .. math::
        J = J^{CD}_k(p_0) + J^{ML}(q) - J^{ML}(p_0),

    with :math:`J^{CD}_k(p_0)` the Jacobian of the expected CD-k update for
    data distributed as :math:`p_0` and :math:`J^{ML}` that of the
    likelihood gradient, all three from :func:`rbm.cd_theory.update_jacobian`
    (exact to rounding, by the complex step).  A gradient field has a
    symmetric Jacobian.

    Parameters
    ----------
    model, q, start
        As in :func:`expected_update`; at most
        ``rbm.cd_theory.MAX_THEORY_UNITS`` units a layer.
    k : int
        Steps, at least 1.

    Returns
    -------
    ndarray of shape (n_params, n_params)
        In the order of :meth:`rbm.model.Gradient.flat`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> q = np.array([0.3, 0, 0, 0.2, 0, 0.1, 0, 0.4])
    >>> J = update_jacobian(model, q, 2)
    >>> J.shape, bool(np.abs(J - J.T).max() > 1e-6)   # not symmetric: no gradient
    ((11, 11), True)
    """
    q, p0 = _check_exact(model, q, start)
    k = check_positive_int(k, "k")
    return (cd_update_jacobian(model, p0, k) + cd_update_jacobian(model, q, None)
            - cd_update_jacobian(model, p0, None))


def _model_at(theta, n_visible, n_hidden):
    """The {0,1} model with the flat parameters theta (order of Gradient.flat)."""
    g = Gradient.from_flat(theta, n_visible, n_hidden)
    return RBM(np.array(g.W, dtype=float), b=np.array(g.b, dtype=float),
               c=np.array(g.c, dtype=float))


def fixed_point(model, q, k, *, objective="update", start="uniform", tol=1e-10, max_iter=200):
    r"""A zero of the Rdm-`k` expected update, or of the gradient of its `k`-step divergence.

    Damped Newton (Levenberg--Marquardt) steps on the field :math:`F(\theta)`,
    started at `model`:
    :math:`\delta = -(J^\top J + \lambda I)^{-1} J^\top F`, taken when it
    lowers :math:`\|F\|` (then :math:`\lambda \leftarrow \lambda/10`), else
    :math:`\lambda \leftarrow 10\lambda`.  With ``objective="update"``,
    :math:`F` is :func:`expected_update` (its zeros: the `k`-step law
    matches the data's moments) and :math:`J` is :func:`update_jacobian`;
    with ``objective="kl"``, :math:`F` is :func:`kl_gradient` (its zeros:
    the stationary points of the divergence of the `k`-step law) and
    :math:`J`, its Hessian, is taken by central differences of
    :func:`kl_gradient` (step ``1e-5``).  The residual is always the exact
    field.  A zero is a fixed point of the training dynamics, of any kind:
    inspect the eigenvalues of :math:`J` there for its stability.

    Parameters
    ----------
    model : RBM
        {0,1} units, at most ``rbm.cd_theory.MAX_THEORY_UNITS`` a layer; the
        start of the search (not changed).
    q : array_like of shape (2**n_visible,)
        The data's distribution.
    k : int
        Steps, at least 1.
    objective : {"update", "kl"}, default "update"
    start : "uniform" or array_like of shape (n_visible,), default "uniform"
        :math:`p_0`, as in :func:`start_distribution`.
    tol : float, default 1e-10
        Converged when the largest :math:`|F_a|` is at most `tol`.
    max_iter : int, default 200
        Newton steps at most.

    Returns
    -------
    point : RBM
        The last iterate.
    info : dict
        ``converged`` (bool), ``residual`` (largest :math:`|F_a|` at
        `point`), ``iterations`` (int) and ``history`` (the residual before
        each step and at the end, a list of float).

    Examples
    --------
    >>> from rbm import RBM
    >>> q = np.array([0.3, 0.1, 0.1, 0.5])
    >>> point, info = fixed_point(RBM.random(2, 1, scale=0.1, rng=0), q, 2)
    >>> info["converged"], bool(expected_update(point, q, 2).max_abs() < 1e-10)
    (True, True)
    """
    q, _ = _check_exact(model, q, start)
    k = check_positive_int(k, "k")
    if objective not in ("update", "kl"):
        raise ValueError(f"objective must be 'update' or 'kl', got {objective!r}")
    tol = check_positive_float(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    nv, nh = model.n_visible, model.n_hidden

    if objective == "update":
        def field(t):
            return expected_update(_model_at(t, nv, nh), q, k, start=start).flat()

        def jacobian(t):
            return update_jacobian(_model_at(t, nv, nh), q, k, start=start)
    else:
        def field(t):
            return kl_gradient(_model_at(t, nv, nh), q, k, start=start).flat()

        def jacobian(t, h=1e-5):
            return np.stack([(field(t + h * e) - field(t - h * e)) / (2 * h)
                             for e in np.eye(t.size)], axis=1)

    theta = np.concatenate([model.W.ravel(), model.b, model.c]).astype(float)
    F = field(theta)
    history = [float(np.abs(F).max())]
    damping, done = 1e-3, 0
    while history[-1] > tol and done < max_iter:
        J = jacobian(theta)
        JtJ, JtF = J.T @ J, J.T @ F
        while damping <= 1e10:
            step = -np.linalg.solve(JtJ + damping * np.eye(theta.size), JtF)
            F_new = field(theta + step)
            if np.linalg.norm(F_new) < np.linalg.norm(F):
                theta, F, damping = theta + step, F_new, max(damping / 10, 1e-12)
                break
            damping *= 10
        done += 1
        history.append(float(np.abs(F).max()))
        if damping > 1e10:      # no step lowers the residual
            break
    return _model_at(theta, nv, nh), {"converged": history[-1] <= tol, "residual": history[-1],
                                      "iterations": done, "history": history}


# -- a second data set --------------------------------------------------------------------

def noisy_prototypes(n_samples=300, *, n_visible=9, n_prototypes=3, noise=0.1, rng=0):
    r"""Clusters around a few random prototypes: each row a prototype with bits flipped.

    Draw `n_prototypes` prototypes of `n_visible` fair coins; each row picks
    one uniformly and flips each bit with probability `noise`.  Unlike bars
    and stripes (a few states of equal mass, far apart, all marginals 1/2),
    its mass is spread over balls around the prototypes and its marginals are
    not 1/2.

    Parameters
    ----------
    n_samples : int, default 300
    n_visible : int, default 9
    n_prototypes : int, default 3
    noise : float, default 0.1
        In :math:`[0, 1/2]`.
    rng : numpy.random.Generator or int, default 0

    Returns
    -------
    (ndarray of shape (n_samples, n_visible), ndarray of shape (n_prototypes, n_visible))
        The rows and the prototypes, zeros and ones as floats.

    Examples
    --------
    >>> X, P = noisy_prototypes(5, rng=0)
    >>> X.shape, P.shape, set(X.ravel().tolist()) <= {0.0, 1.0}
    ((5, 9), (3, 9), True)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_visible = check_positive_int(n_visible, "n_visible")
    n_prototypes = check_positive_int(n_prototypes, "n_prototypes")
    noise = float(as_float_array(noise, "noise"))
    if not 0 <= noise <= 0.5:
        raise ValueError(f"noise must lie in [0, 1/2], got {noise}")
    rng = check_rng(rng)
    prototypes = (rng.random((n_prototypes, n_visible)) < 0.5).astype(float)
    rows = prototypes[rng.integers(0, n_prototypes, size=n_samples)]
    flip = rng.random(rows.shape) < noise
    return np.where(flip, 1 - rows, rows), prototypes
