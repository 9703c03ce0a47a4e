r"""What contrastive divergence optimises, computed exactly on small models.

Write :math:`q` for a distribution of the data over the visible states,
:math:`T` for the Gibbs transition of the visible chain (see
:mod:`rbm.transition`) and :math:`r_k = q\,T^k` for the distribution of
CD-k's negative samples.  Everything here is a function of the parameters
:math:`\theta = (W, b, c)` held as one vector in the order of
:meth:`rbm.model.Gradient.flat`:

* :func:`expected_update`, the exact expected CD-k update
  :math:`g_k(\theta) = \langle v\,\sigma^\top\rangle_q - \langle v\,\sigma^\top\rangle_{r_k}`
  (and its bias parts), or with ``k=None`` the exact gradient of the mean
  log-likelihood;
* :func:`cd_objective`, Hinton's contrastive divergence
  :math:`\mathrm{KL}(q\,\|\,p) - \mathrm{KL}(r_k\,\|\,p)`, and
  :func:`cd_objective_gradient`, its gradient;
* :func:`dropped_term`, the part of that gradient that CD-k leaves out,
  :math:`D_k = \sum_v \frac{\partial r_k(v)}{\partial\theta}\,\log\frac{r_k(v)}{p(v)}`,
  so that :math:`g_k = -\nabla_\theta\,\mathrm{CD}_k - D_k`;
* :func:`chain_divergence_gradient`, the gradient of
  :math:`\mathrm{KL}(r_k\,\|\,p)`, which equals :math:`D_k + g_k - g_\infty`;
* :func:`update_jacobian`, :func:`loop_integral` and :func:`fixed_point`,
  to ask whether :math:`g_k` is a gradient and where it vanishes.

Derivatives are exact to rounding: :func:`dropped_term` differentiates the
chain analytically (one backward pass through the :math:`k` steps), and
:func:`cd_objective_gradient` and :func:`update_jacobian` use the *complex
step*, :math:`f'(x) = \operatorname{Im} f(x + i\,h) / h + O(h^2)` with
:math:`h = 10^{-30}`, which has no subtractive cancellation and so no
rounding error beyond that of evaluating :math:`f` itself.  Every function
enumerates both layers and holds :math:`2^{n_\text{visible}}\times
2^{n_\text{hidden}}` numbers, so each layer is limited to
``MAX_THEORY_UNITS`` units.

Every function takes any two discrete layers ({0,1}, ±1 spins, Potts units;
:mod:`rbm.layers`): :math:`v` and :math:`h` above stand for the layers'
statistics :math:`s(v)`, :math:`s(h)` (one-hot vectors for Potts units),
:math:`\sigma` for the conditional mean :math:`\mathbb E[s(h) \mid v]`,
:math:`\theta` for the parameters in the order of
:meth:`rbm.model.RBM.parameters`, and a state space of :math:`q^n` states counts
:math:`n \log_2 q` units against ``MAX_THEORY_UNITS``; `q` is a distribution
over the visible states in the order of the layer's ``states``.  A continuous
layer is refused with a ValueError naming it; :func:`largest_flip_energy` also
refuses Potts units, which have no single flip.  (A Potts layer has a gauge
freedom, so the Jacobian of :func:`update_jacobian` is singular there and
:func:`fixed_point` needs the weight decay.)
"""

import numpy as np

from rbm._validation import (as_float_array, check_distribution, check_positive_float,
                              check_positive_int)
from rbm._kernels import discrete_bits
from rbm.exact import all_states
from rbm.model import RBM, Gradient, check_model
from rbm.special import softplus
from rbm.transition import gibbs_transition_matrix

__all__ = ["MAX_THEORY_UNITS", "transition_eigenvalues", "second_eigenvalue",
           "largest_flip_energy", "dobrushin_coefficient", "expected_update", "update_jacobian",
           "cd_objective", "cd_objective_gradient", "dropped_term",
           "chain_divergence_gradient", "loop_integral", "fixed_point"]

# Each function holds (2**n_visible, 2**n_hidden) complex numbers (bits of states), and the Jacobian
# costs one such pass per parameter: at 10 units a layer that is 16 MiB and seconds.
MAX_THEORY_UNITS = 10
# The complex step: Im f(x + ih) / h = f'(x) - h**2 f'''(x) / 6 + ..., exact in float64.
_STEP = 1e-30


# -- arguments --------------------------------------------------------------------------

class _Space:
    """The states of both layers of a model, their statistics, and the layout of theta.

    Fixed per model; the parameters themselves are passed to :class:`_Chain` as a flat
    vector (real or complex) in the order of :meth:`rbm.model.RBM.parameters`.
    """

    def __init__(self, model):
        self.visible, self.hidden = model.visible, model.hidden
        if model.is_binary:
            self.V, self.H = all_states(model.n_visible), all_states(model.n_hidden)
        else:
            self.V = self.visible.states(0, self.visible.n_states ** model.n_visible)
            self.H = self.hidden.states(0, self.hidden.n_states ** model.n_hidden)
        # the statistics of every state, (N_v, d_v) and (N_h, d_h); for {0,1} units the states
        self.Sv = self.visible.statistic(self.V).reshape(len(self.V), -1)
        self.Sh = self.hidden.statistic(self.H).reshape(len(self.H), -1)
        self.shapes = {name: arr.shape for name, arr in model.parameters().items()}
        self.size = sum(int(np.prod(shape)) for shape in self.shapes.values())

    def split(self, theta):
        """W as a (d_v, d_h) matrix and the two biases as vectors, views of `theta`."""
        dv, dh = self.Sv.shape[1], self.Sh.shape[1]
        return (theta[:dv * dh].reshape(dv, dh), theta[dv * dh:dv * dh + dv],
                theta[dv * dh + dv:])

    def gradient(self, flat):
        """The flat vector as a Gradient with the model's fields."""
        fields, start = {}, 0
        for name, shape in self.shapes.items():
            stop = start + int(np.prod(shape))
            fields[name] = flat[start:stop].reshape(shape)
            start = stop
        return Gradient.from_fields(fields)

    def model(self, theta):
        """The model with parameters `theta` (real)."""
        W, b, c = self.split(theta)
        visible, hidden = self.visible.copy(), self.hidden.copy()
        visible.bias[...] = b.reshape(visible.bias.shape)
        hidden.bias[...] = c.reshape(hidden.bias.shape)
        return RBM(W.reshape(self.shapes["W"]).copy(), visible, hidden)


def _check(model, q, k):
    """The model's _Space, `q` checked as a distribution over its visible states, and `k`."""
    bits = discrete_bits(model, "rbm.cd_theory")
    if bits is None:
        bits = (model.n_visible, model.n_hidden)
    for side, n in zip(("n_visible", "n_hidden"), bits):
        if n > MAX_THEORY_UNITS + 1e-9:
            raise ValueError(f"model has {side}={getattr(model, side)} ({n:g} bits); "
                             f"rbm.cd_theory enumerates both layers and allows at most "
                             f"{MAX_THEORY_UNITS} bits (units of two states) in each")
    space = _Space(model)
    if q is not None:
        q = check_distribution(q, "q", len(space.V))
    if k is not None:
        k = check_positive_int(k, "k")
    return space, q, k


def _direction(x, n_params, name):
    x = x.flat() if isinstance(x, Gradient) else as_float_array(x, name)
    if x.shape != (n_params,):
        raise ValueError(f"{name} must be a Gradient or have shape ({n_params},), one entry "
                         f"per parameter, got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} must be finite")
    return x


# -- the chain, for real or complex parameters ------------------------------------------
# Complex parameters carry the complex step: every function below is analytic in them.

def _softplus(x):
    """log(1 + e^x), stable, for real or complex x (branch chosen by the real part)."""
    if not np.iscomplexobj(x):
        return softplus(x)
    out = np.empty_like(x)
    pos = x.real > 0
    out[pos] = x[pos] + np.log1p(np.exp(-x[pos]))
    out[~pos] = np.log1p(np.exp(x[~pos]))
    return out


def _sigmoid(x):
    return np.exp(-_softplus(-x))


def _layer_terms(layer, pre):
    r"""For rows of total inputs `pre` (input plus bias, ``(N, d)``, real or complex) of a
    discrete layer: the log-normaliser of each row and the conditional mean statistic.

    Units whose statistic is :math:`\alpha x + \beta` of a bit :math:`x` (``layer.bits``;
    {0,1} and ±1) have :math:`\beta t + \operatorname{softplus}(\alpha t)` and
    :math:`\beta + \alpha\sigma(\alpha t)`; Potts units a log-sum-exp and a softmax over
    their categories.
    """
    if layer.bits == (1.0, 0.0):
        return _softplus(pre).sum(axis=1), _sigmoid(pre)
    if layer.bits is not None:
        alpha, beta = layer.bits
        return (beta * pre + _softplus(alpha * pre)).sum(axis=1), beta + alpha * _sigmoid(
            alpha * pre)
    z = pre.reshape((len(pre),) + layer.shape)
    top = z.real.max(axis=-1, keepdims=True)
    e = np.exp(z - top)
    total = e.sum(axis=-1, keepdims=True)
    return (top + np.log(total)).reshape(len(pre), -1).sum(axis=1), (e / total).reshape(
        len(pre), -1)


class _Chain:
    """Conditionals of a model with parameters `theta` (flat, real or complex), all states."""

    def __init__(self, theta, space):
        self.W, self.b, self.c = space.split(theta)
        self.V, self.H = space.Sv, space.Sh                    # statistics of all states
        pre_h = self.V @ self.W + self.c                       # (N_v, d_h)
        pre_v = self.H @ self.W.T + self.b                     # (N_h, d_v)
        log_z_h, self.S = _layer_terms(space.hidden, pre_h)    # S = E[s(h) | v]
        log_z_v, self.R = _layer_terms(space.visible, pre_v)   # R = E[s(v) | h]
        self.A = np.exp(pre_h @ self.H.T - log_z_h[:, None])   # p(h | v)
        self.B = np.exp(pre_v @ self.V.T - log_z_v[:, None])   # p(v | h)
        self.F = -(self.V @ self.b) - log_z_h

    def step(self, r):
        """r T, through the hidden layer."""
        return (r @ self.A) @ self.B

    def after(self, q, k):
        """r_k = q T^k, or the model's p(v) for k None."""
        if k is None:
            log_p = -self.F - np.max(-self.F.real)
            p = np.exp(log_p)
            return p / p.sum()
        r = q
        for _ in range(k):
            r = self.step(r)
        return r

    def update(self, q, r):
        """<s(v) E[s(h)|v]^T>_q - <...>_r and the bias parts, flat."""
        d = q - r
        return np.concatenate([((self.V * d[:, None]).T @ self.S).ravel(), d @ self.V,
                               d @ self.S])


def _theta(model):
    return np.concatenate([np.ravel(a) for a in model.parameters().values()])


def _complex_step(f, theta):
    """Jacobian of f at theta by the complex step: column j is Im f(theta + ih e_j) / h."""
    columns = []
    for j in range(theta.size):
        x = theta.astype(complex)
        x[j] += 1j * _STEP
        columns.append(np.imag(f(x)) / _STEP)
    return np.stack(columns, axis=-1)


def _transition(model):
    """The Gibbs transition matrix and p(v) of a model within this module's limits."""
    space, _, _ = _check(model, None, None)
    return gibbs_transition_matrix(model), _Chain(_theta(model), space).after(None, None)


def transition_eigenvalues(model):
    r"""All eigenvalues of the visible Gibbs transition :math:`T`, in ascending order.

    :math:`T = AB` with :math:`A(v, h) = p(h \mid v)` and
    :math:`B(h, v') = p(v' \mid h)`: a step to the hidden layer and back.
    With :math:`D_v = \operatorname{diag}(p(v))` and
    :math:`D_h = \operatorname{diag}(p(h))`, :math:`D_v A = (D_h B)^\top`
    (both are the joint :math:`p(v, h)`), so
    :math:`D_v^{1/2} T D_v^{-1/2} = C C^\top` with
    :math:`C = D_v^{1/2} A D_h^{-1/2}`: symmetric *and* positive
    semi-definite.  The eigenvalues lie in :math:`[0, 1]`, the largest is 1.
    This is the two-block (data-augmentation) structure of
    Liu, Wong and Kong (1994); reversibility alone would allow
    eigenvalues down to :math:`-1`.

    Parameters
    ----------
    model : RBM
        At most ``MAX_THEORY_UNITS`` units in each layer ({0,1} layers), or
        two discrete layers within the limits of
        :func:`rbm.transition.gibbs_transition_matrix`.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        Computed from the symmetrised matrix, so real; the smallest may be
        negative by a rounding error.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 2, scale=2.0, rng=0)
    >>> eigenvalues = transition_eigenvalues(model)
    >>> bool(abs(eigenvalues[-1] - 1) < 1e-12 and eigenvalues[0] > -1e-12)
    True
    """
    T, p = _transition(model)
    root = np.sqrt(p)
    symmetric = root[:, None] * T / root[None, :]
    return np.linalg.eigvalsh((symmetric + symmetric.T) / 2)


def second_eigenvalue(model):
    r"""The second largest eigenvalue :math:`\lambda_2` of the visible Gibbs transition :math:`T`.

    As every eigenvalue of :math:`T` lies in :math:`[0, 1]` (see
    :func:`transition_eigenvalues`: the chain goes through the hidden layer
    and back), :math:`\lambda_2` is also the second largest in absolute
    value, and it sets how fast :math:`qT^k` approaches :math:`p`, like
    :math:`\lambda_2^k`.

    Parameters
    ----------
    model : RBM
        At most ``MAX_THEORY_UNITS`` units in each layer.

    Returns
    -------
    float

    Examples
    --------
    >>> weak = RBM.random(4, 2, scale=0.1, rng=0)  # nearly independent units
    >>> bool(0.0 <= second_eigenvalue(weak) < 0.01)
    True
    """
    return float(transition_eigenvalues(model)[-2])


def largest_flip_energy(model):
    r"""The largest change of energy that flipping one unit can cause, :math:`\Delta`.

    Flipping hidden unit :math:`j` changes the energy by its total input
    :math:`c_j + \sum_i v_i W_{ij}` in absolute value, and flipping visible
    unit :math:`i` by :math:`b_i + \sum_j W_{ij} h_j`; over all states of
    the other layer the largest is reached with only the positive or only
    the negative weights switched on:

    .. math::
        \Delta = \max\Big(\max_j \max_\pm \big|c_j + \textstyle\sum_i [\pm W_{ij} > 0]\,W_{ij}\big|,\;
                  \max_i \max_\pm \big|b_i + \textstyle\sum_j [\pm W_{ij} > 0]\,W_{ij}\big|\Big).

    This is the quantity in the contraction factor
    :math:`1 - e^{-(n_\text{visible} + n_\text{hidden})\Delta}` of the bias
    bound of Fischer and Igel (2011).

    Parameters
    ----------
    model : RBM

    Returns
    -------
    float

    Examples
    --------
    >>> model = RBM(W=np.array([[1.0, -2.0]]), b=np.array([0.5]), c=np.zeros(2))
    >>> largest_flip_energy(model)  # hidden unit 2 with v = 1: |0 - 2|
    2.0
    """
    check_model(model)
    for side in ("visible", "hidden"):
        layer = getattr(model, side)
        if layer.bits is None:
            raise ValueError(f"largest_flip_energy flips units of two states ({{0,1}} or ±1); "
                             f"model.{side} is {layer!r}, which has no such units")
    # a ±1 model is a {0,1} model of its bits, with the same energy differences
    W, b, c = (model if model.is_binary else model.to_binary()[0]).parameters().values()
    up, down = np.clip(W, 0, None), np.clip(W, None, 0)
    hidden = np.maximum(np.abs(c + up.sum(axis=0)), np.abs(c + down.sum(axis=0)))
    visible = np.maximum(np.abs(b + up.sum(axis=1)), np.abs(b + down.sum(axis=1)))
    return float(max(hidden.max(initial=0.0), visible.max(initial=0.0)))


def dobrushin_coefficient(model):
    r"""Dobrushin's contraction coefficient of the visible Gibbs transition :math:`T`.

    .. math::
        \delta(T) = \max_{v, v'} \tfrac12 \sum_{w} |T(v, w) - T(v', w)|,

    the largest total-variation distance between two rows.  For any two
    distributions :math:`a, b`, :math:`\mathrm{TV}(aT, bT) \le \delta(T)\,
    \mathrm{TV}(a, b)`, so :math:`\mathrm{TV}(qT^k, p) \le \delta(T)^k\,
    \mathrm{TV}(q, p)`.  As every entry of :math:`T` is positive,
    :math:`\delta(T) < 1`, though it may be 1 to rounding.

    Parameters
    ----------
    model : RBM
        As in :func:`second_eigenvalue`.

    Returns
    -------
    float
        In :math:`[0, 1]`.

    Examples
    --------
    >>> from rbm import RBM
    >>> independent = RBM(W=np.zeros((3, 2)), b=np.ones(3), c=np.zeros(2))
    >>> dobrushin_coefficient(independent)  # every row of T is p
    0.0
    """
    T, _ = _transition(model)
    # TV(T_v, T_v') = 1 - sum_w min(T(v, w), T(v', w)), one row against all at a time
    overlap = min(np.minimum(row[None, :], T).sum(axis=1).min() for row in T)
    return float(max(0.0, 1.0 - overlap))


# -- the update field ---------------------------------------------------------------------

def _update(theta, space, q, k, decay=0.0):
    chain = _Chain(theta, space)
    return chain.update(q, chain.after(q, k)) - decay * theta


def expected_update(model, q, k, *, weight_decay=0.0):
    r"""The exact expected CD-k update for data distributed as `q`; with ``k=None``, the exact gradient.

    .. math::
        g_k(\theta) = \big\langle v\,p(h{=}1 \mid v)^\top\big\rangle_q
        - \big\langle v\,p(h{=}1 \mid v)^\top\big\rangle_{q T^k},

    with the bias parts :math:`\langle v\rangle_q - \langle v\rangle_{qT^k}`
    and :math:`\langle p(h{=}1\mid v)\rangle_q - \langle p(h{=}1\mid v)\rangle_{qT^k}`.
    For ``k=None`` the negative distribution is the model's :math:`p(v)`, and
    :math:`g` is the gradient of the mean log-likelihood
    :math:`\sum_v q(v) \log p(v)`.  For an empirical `q` this is
    :func:`rbm.transition.cd_expected_gradient` (computed there by other code).
    With `weight_decay` :math:`\lambda`, :math:`-\lambda\theta` is added
    to every parameter's entry: the gradient of the penalty
    :math:`-\frac{\lambda}{2}\|\theta\|^2`, which keeps the zeros of
    :math:`g` finite when the data would drive the weights to infinity.

    Parameters
    ----------
    model : RBM
        At most ``MAX_THEORY_UNITS`` units in each layer.
    q : array_like of shape (2**n_visible,)
        A distribution over the visible states in the order of
        :func:`rbm.exact.all_states` (for a data set,
        :func:`rbm.exact.empirical_distribution`); it may put mass on every state.
    k : int or None
        Gibbs steps, at least 1; ``None`` for the exact log-likelihood gradient.
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, applied to all parameters.

    Returns
    -------
    Gradient
        The ascent direction.

    Raises
    ------
    ValueError
        If a layer is too large, `q` is no distribution over the visible states, or ``k < 1``.

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> q = exact.empirical_distribution([[1, 0, 1], [0, 1, 1]])
    >>> ml = expected_update(model, q, None)
    >>> exact_ml = exact.gradient(model, [[1, 0, 1], [0, 1, 1]])
    >>> bool((ml - exact_ml).max_abs() < 1e-14)
    True
    """
    space, q, k = _check(model, q, k)
    decay = check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    return space.gradient(_update(_theta(model), space, q, k, decay))


def update_jacobian(model, q, k, *, weight_decay=0.0):
    r"""The Jacobian :math:`J_{ab} = \partial g_a / \partial \theta_b` of :func:`expected_update`.

    By the complex step (see the module notes): each entry is exact to
    about the rounding error of :math:`g` itself, with no step to tune.  A
    gradient field has a symmetric Jacobian (for ``k=None`` it is the
    Hessian of the mean log-likelihood).

    Parameters
    ----------
    model, q, k, weight_decay
        As in :func:`expected_update`.

    Returns
    -------
    ndarray of shape (n_params, n_params)
        Rows and columns in the order of :meth:`rbm.model.Gradient.flat`
        (``W`` row-major, then ``b``, then ``c``); ``n_params`` is
        ``n_visible * n_hidden + n_visible + n_hidden``.

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> q = np.full(8, 1 / 8)
    >>> H = update_jacobian(model, q, None)
    >>> bool(np.abs(H - H.T).max() < 1e-14)
    True
    """
    space, q, k = _check(model, q, k)
    decay = check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    return _complex_step(lambda t: _update(t, space, q, k, decay), _theta(model))


# -- the objective ----------------------------------------------------------------------

def _objective(theta, space, q, k):
    r"""KL(q||p) - KL(r||p) = sum q log q - sum r log r + sum (q - r) F: log Z cancels."""
    chain = _Chain(theta, space)
    r = chain.after(q, k)
    nz = q > 0
    return np.sum(q[nz] * np.log(q[nz])) - np.sum(r * np.log(r)) + np.sum((q - r) * chain.F)


def cd_objective(model, q, k):
    r"""Hinton's contrastive divergence :math:`\mathrm{CD}_k = \mathrm{KL}(q\,\|\,p) - \mathrm{KL}(qT^k\,\|\,p)`.

    Computed as
    :math:`\sum_v q \log q - \sum_v r_k \log r_k + \sum_v (q - r_k)\,F(v)`
    with :math:`r_k = qT^k` and :math:`F` the free energy: :math:`\log Z`
    cancels between the two divergences.  It is non-negative, since a step
    of a chain whose stationary distribution is :math:`p` never moves a
    distribution away from :math:`p` in KL.

    Parameters
    ----------
    model, q
        As in :func:`expected_update`.
    k : int
        Gibbs steps, at least 1.

    Returns
    -------
    float

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> q = exact.empirical_distribution([[1, 0, 1], [0, 1, 1]])
    >>> value = cd_objective(model, q, 1)
    >>> from rbm.transition import gibbs_transition_matrix
    >>> r = q @ gibbs_transition_matrix(model)
    >>> kl = exact.kl_divergence
    >>> bool(abs(value - (kl(q, model) - kl(r, model))) < 1e-12)
    True
    """
    space, q, k = _check(model, q, check_positive_int(k, "k"))
    return float(_objective(_theta(model), space, q, k))


def cd_objective_gradient(model, q, k):
    r"""The gradient :math:`\nabla_\theta\,\mathrm{CD}_k` of :func:`cd_objective`, exact to rounding.

    By the complex step through the whole computation of
    :math:`\mathrm{CD}_k` (the chain included), with no use of the formula
    it is compared with in :func:`dropped_term`.

    Parameters
    ----------
    model, q, k
        As in :func:`cd_objective`.

    Returns
    -------
    Gradient
        The direction of steepest *increase* of :math:`\mathrm{CD}_k`
        (CD's update goes the other way).
    """
    return _gradient_of(_objective, model, q, k)


def dropped_term(model, q, k):
    r"""The term of :math:`-\nabla\mathrm{CD}_k` that CD-k leaves out.

    .. math::
        D_k = \sum_v \frac{\partial r_k(v)}{\partial \theta}\,
              \log\frac{r_k(v)}{p(v)},\qquad r_k = q\,T^k,

    so that :math:`-\nabla_\theta\,\mathrm{CD}_k = g_k + D_k` with
    :math:`g_k` the expected CD-k update (:func:`expected_update`).

    Computed analytically, backwards through the chain: with
    :math:`\ell = \log(r_k / p)`, :math:`a_j = q T^j` and
    :math:`b_j = T^{k-1-j}\ell`,
    :math:`D_k = \sum_{j<k} a_j^\top\,(\partial T/\partial\theta)\,b_j`, and
    :math:`\partial T(v, v') = \sum_h p(h\mid v)\,p(v'\mid h)\,
    [\partial \log p(h\mid v) + \partial \log p(v'\mid h)]` with
    :math:`\partial_{W_{ij}} \log p(h\mid v) = v_i (h_j - \sigma_j(v))`,
    :math:`\partial_{c_j} \log p(h\mid v) = h_j - \sigma_j(v)`,
    :math:`\partial_{W_{ij}} \log p(v'\mid h) = h_j (v'_i - \sigma_i(h))` and
    :math:`\partial_{b_i} \log p(v'\mid h) = v'_i - \sigma_i(h)`.
    The cost is that of :math:`2k` passes through the chain.

    Parameters
    ----------
    model, q, k
        As in :func:`cd_objective`.

    Returns
    -------
    Gradient

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> q = exact.empirical_distribution([[1, 0, 1], [0, 1, 1]])
    >>> lhs = -cd_objective_gradient(model, q, 2)
    >>> rhs = expected_update(model, q, 2) + dropped_term(model, q, 2)
    >>> bool((lhs - rhs).max_abs() < 1e-13)
    True
    """
    space, q, k = _check(model, q, check_positive_int(k, "k"))
    chain = _Chain(_theta(model), space)
    V, H, A, B, S, R = chain.V, chain.H, chain.A, chain.B, chain.S, chain.R
    forward = [q]
    for _ in range(k):
        forward.append(chain.step(forward[-1]))
    r = forward[-1]
    shift = np.max(-chain.F)
    log_p = -chain.F - shift - np.log(np.sum(np.exp(-chain.F - shift)))
    back = np.log(r) - log_p                               # b_{k-1} = l
    M = np.zeros_like(A)                                   # sum_j a_j(v) A(v,h) (B b_j)(h)
    N = np.zeros_like(B)                                   # sum_j (a_j A)(h) B(h,v') b_j(v')
    for j in range(k - 1, -1, -1):
        Bb = B @ back
        M += forward[j][:, None] * A * Bb[None, :]
        N += (forward[j] @ A)[:, None] * B * back[None, :]
        back = A @ Bb                                      # b_{j-1} = T b_j
    # d log p(h|v): W_ij -> v_i (h_j - S_vj), c_j -> h_j - S_vj
    hidden = M @ H - M.sum(axis=1)[:, None] * S            # sum_h M(v,h) (h_j - S_vj)
    # d log p(v'|h): W_ij -> h_j (v'_i - R_hi), b_i -> v'_i - R_hi
    visible = N @ V - N.sum(axis=1)[:, None] * R           # sum_v' N(h,v') (v'_i - R_hi)
    return space.gradient(np.concatenate([(V.T @ hidden + visible.T @ H).ravel(),
                                          visible.sum(axis=0), hidden.sum(axis=0)]))


def _chain_divergence(theta, space, q, k):
    r"""KL(r_k || p) = sum r log r + sum r F + log Z, for real or complex theta."""
    chain = _Chain(theta, space)
    r = chain.after(q, k)
    shift = np.max(-chain.F.real)
    log_z = shift + np.log(np.sum(np.exp(-chain.F - shift)))
    return np.sum(r * np.log(r)) + np.sum(r * chain.F) + log_z


def chain_divergence_gradient(model, q, k):
    r"""The gradient of :math:`\mathrm{KL}(qT^k\,\|\,p)` with respect to the parameters, exact to rounding.

    Both arguments depend on :math:`\theta`: :math:`r_k = qT^k` through the
    chain and :math:`p` through the model.  By the complex step through
    :math:`\sum_v r_k \log r_k + \sum_v r_k F + \log Z`, sharing no formula
    with :func:`dropped_term` or :func:`expected_update`.  Step 2 of the
    derivation of :func:`dropped_term` gives the exact identity

    .. math::
        \nabla_\theta\, \mathrm{KL}(r_k\,\|\,p) = D_k + (g_k - g_\infty),

    with :math:`g_\infty` the likelihood gradient: the left-out term and
    minus the bias of CD-k differ by the gradient of a divergence that is
    of second order in :math:`r_k - p`.

    Parameters
    ----------
    model, q, k
        As in :func:`cd_objective`.

    Returns
    -------
    Gradient

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> q = exact.empirical_distribution([[1, 0, 1], [0, 1, 1]])
    >>> lhs = chain_divergence_gradient(model, q, 2)
    >>> rhs = (dropped_term(model, q, 2) + expected_update(model, q, 2)
    ...        - expected_update(model, q, None))
    >>> bool((lhs - rhs).max_abs() < 1e-13)
    True
    """
    return _gradient_of(_chain_divergence, model, q, k)


def _gradient_of(f, model, q, k):
    """The gradient of ``f(theta, space, q, k)`` at the model's parameters, by the complex step."""
    space, q, k = _check(model, q, check_positive_int(k, "k"))
    return space.gradient(_complex_step(lambda t: f(t, space, q, k), _theta(model)))


# -- is it a gradient, and where does it stop? ------------------------------------------

def loop_integral(model, q, k, u, w, *, radius, n_points=64):
    r"""The work :math:`\oint g_k \cdot d\theta` of the update field around a circle.

    The circle is :math:`\theta(t) = \theta_0 + \rho\,(\cos t\,u + \sin t\,w)`,
    :math:`t \in [0, 2\pi)`, around the model's parameters :math:`\theta_0`,
    traversed once counter-clockwise from `u` towards `w`.  The integral
    :math:`\int_0^{2\pi} g_k(\theta(t)) \cdot \theta'(t)\,dt` is taken with
    the trapezoidal rule, whose error for a smooth periodic integrand falls
    faster than any power of `n_points` (compare two values of `n_points` to
    see it).  A gradient field gives zero; for a small circle Stokes' theorem
    gives :math:`\pi\rho^2\,(w^\top J u - u^\top J w)` with :math:`J` from
    :func:`update_jacobian`.

    Parameters
    ----------
    model, q, k
        As in :func:`expected_update`.
    u, w : Gradient or array_like of shape (n_params,)
        The directions that span the plane of the circle (in the order of
        :meth:`rbm.model.Gradient.flat`).
    radius : float
        :math:`\rho > 0`.
    n_points : int, default 64
        Points on the circle, at least 3.

    Returns
    -------
    float

    Examples
    --------
    >>> model = RBM.random(2, 1, scale=1.0, rng=0)
    >>> q = np.array([0.4, 0.1, 0.1, 0.4])
    >>> u, w = np.eye(5)[0], np.eye(5)[2]
    >>> bool(abs(loop_integral(model, q, None, u, w, radius=0.5)) < 1e-14)
    True
    """
    space, q, k = _check(model, q, k)
    u, w = _direction(u, space.size, "u"), _direction(w, space.size, "w")
    radius = check_positive_float(radius, "radius")
    n_points = check_positive_int(n_points, "n_points", minimum=3)
    theta0 = _theta(model)
    total = 0.0
    for t in 2 * np.pi * np.arange(n_points) / n_points:
        point = theta0 + radius * (np.cos(t) * u + np.sin(t) * w)
        velocity = radius * (-np.sin(t) * u + np.cos(t) * w)
        total += _update(point, space, q, k) @ velocity
    return float(total * 2 * np.pi / n_points)


def fixed_point(model, q, k, *, weight_decay=0.0, ascent_steps=0, learning_rate=0.5,
                tol=1e-12, max_iter=50):
    r"""A zero of the expected update :math:`g_k`: ascent along it, then Newton's method.

    First `ascent_steps` steps :math:`\theta \leftarrow \theta + \eta\, g_k(\theta)`
    (the expected course of CD-k with learning rate :math:`\eta`), which
    lead towards a zero that attracts training; then Newton's method, each
    step solving :math:`J\,\delta = -g_k` with the exact Jacobian of
    :func:`update_jacobian` and halving :math:`\delta` until :math:`\|g_k\|`
    falls (at most 30 times).  Newton's method alone converges to whatever
    zero is near, a saddle included: look at the eigenvalues of :math:`J`
    at the result.

    Parameters
    ----------
    model, q, k, weight_decay
        As in :func:`expected_update`; `model` is the starting point and is
        not changed.
    ascent_steps : int, default 0
    learning_rate : float, default 0.5
        :math:`\eta` of the ascent steps.
    tol : float, default 1e-12
        Stop when every entry of :math:`g_k` is at most `tol` in absolute value.
    max_iter : int, default 50
        Newton steps at most.

    Returns
    -------
    RBM
        A model at which :math:`\max |g_k| \le` `tol`.

    Raises
    ------
    RuntimeError
        If that is not reached in `max_iter` Newton steps (the zero may lie at
        infinity, or the start be too far from it), or :math:`J` is singular.

    Examples
    --------
    >>> from rbm import RBM
    >>> q = np.array([0.4, 0.1, 0.1, 0.4])
    >>> start = RBM.random(2, 1, scale=1.0, rng=0)
    >>> ml = fixed_point(start, q, None)
    >>> bool(expected_update(ml, q, None).max_abs() <= 1e-12)
    True
    """
    space, q, k = _check(model, q, k)
    decay = check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    ascent_steps = check_positive_int(ascent_steps, "ascent_steps", minimum=0)
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    tol = check_positive_float(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")

    def field(t):
        return _update(t, space, q, k, decay)

    theta = _theta(model)
    for _ in range(ascent_steps):
        theta = theta + learning_rate * field(theta)
    g = field(theta)
    for _ in range(max_iter):
        if np.abs(g).max() <= tol:
            break
        try:
            delta = np.linalg.solve(_complex_step(field, theta), -g)
        except np.linalg.LinAlgError:
            raise RuntimeError("the Jacobian of the update is singular: the zero is not "
                               "isolated (a unit without weights, or a symmetry)") from None
        for _ in range(30):
            trial = theta + delta
            g_trial = field(trial)
            if np.linalg.norm(g_trial) < np.linalg.norm(g):
                break
            delta = delta / 2
        theta, g = trial, g_trial
    if not np.abs(g).max() <= tol:
        raise RuntimeError(f"Newton's method did not reach max |g| <= {tol:g} in {max_iter} "
                           f"steps (max |g| = {np.abs(g).max():.3g})")
    return space.model(theta)
