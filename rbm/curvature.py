r"""The shape of the log-likelihood: exact curvature, symmetries, centering, natural gradient.

An RBM is an exponential family in its joint state: with the *sufficient
statistics* :math:`s(v, h) = (v h^\top, v, h)` (flattened in the order of
:meth:`rbm.model.Gradient.flat`: ``W`` row-major, then ``b``, then ``c``) the
energy is :math:`E(v, h) = -\theta^\top s(v, h)`.  Everything here follows
from that:

- the Hessian of :math:`\log Z` is the covariance of :math:`s` under
  :math:`p(v, h)`, so :math:`\log Z` is convex;
- the Fisher information of the visible marginal :math:`p(v)` is the
  covariance of :math:`\mathbb{E}[s \mid v]` under :math:`p(v)`;
- the Hessian of the mean log-likelihood is the average conditional
  covariance :math:`\mathrm{Cov}[s \mid v]` over the data minus the Hessian
  of :math:`\log Z`, which is why it is not negative definite.

Given :math:`v` the hidden units are independent Bernoulli variables, so
:math:`\mathbb{E}[s \mid v]` and :math:`\mathrm{Cov}[s \mid v]` have closed
forms, and the functions enumerate the :math:`2^{n_v}` visible states only.
Memory: the visible states and their conditional statistics, about
:math:`2^{n_v} (n_v n_h + n_v + n_h)` numbers, plus a few
:math:`d \times d` matrices with :math:`d = n_v n_h + n_v + n_h`.

:func:`n_parameters`, :func:`fisher_information`, :func:`log_partition_hessian`,
:func:`log_likelihood_hessian` and :func:`natural_gradient` take any two
discrete layers (±1 spins, Potts units): the statistics are then
:math:`-\partial E/\partial\theta` of every parameter, in the order of
:meth:`rbm.model.RBM.parameters`, and every joint state :math:`(v, h)` is enumerated
(at most ``2**MAX_CURVATURE_JOINT`` of them).  :func:`permute_hidden` takes any
two layers, :func:`flip_hidden` a hidden layer of two-state units ({0,1} or ±1),
:func:`to_centered` and :func:`from_centered` any two discrete layers;
:func:`add_hidden_unit`, :func:`saddle_model` and :func:`saddle_curvature` are
written for {0,1} units (the last two take binary data, not a model).
"""

import numpy as np

from rbm._kernels import discrete_bits
from rbm._validation import check_array_size, check_binary, check_enumeration_size
from rbm.exact import all_states, gradient, log_prob
from rbm.model import RBM, Gradient, check_model
from rbm.special import sigmoid

__all__ = [
    "MAX_CURVATURE_VISIBLE",
    "MAX_CURVATURE_JOINT",
    "n_parameters",
    "fisher_information",
    "log_partition_hessian",
    "log_likelihood_hessian",
    "flip_hidden",
    "permute_hidden",
    "from_centered",
    "to_centered",
    "centering_jacobian",
    "natural_gradient",
    "saddle_model",
    "saddle_curvature",
    "add_hidden_unit",
]

#: The largest visible layer the curvature functions enumerate (they sum over its states).
MAX_CURVATURE_VISIBLE = 16
#: The most joint states (as a power of two) the general path enumerates.
MAX_CURVATURE_JOINT = 18


def n_parameters(model):
    """:math:`d = n_v n_h + n_v + n_h`, the number of parameters (and of statistics)."""
    check_model(model)
    return int(sum(arr.size for arr in model.parameters().values()))


def _check_size(model, what):
    check_model(model, binary="curvature")
    check_enumeration_size(model.n_visible, what, limit=MAX_CURVATURE_VISIBLE)
    d = n_parameters(model)
    check_array_size(2**model.n_visible * d + 4 * d * d,
                     f"{what} of a {model.n_visible} x {model.n_hidden} RBM")
    return d


def _general(model, what):
    """Whether `model` takes the general path (two discrete layers, not both {0,1})."""
    bits = discrete_bits(model, what)
    if bits is None:
        return False
    bits = sum(bits)
    check_enumeration_size(int(np.ceil(bits - 1e-9)), what, limit=MAX_CURVATURE_JOINT)
    check_array_size(2**int(np.ceil(bits)) * n_parameters(model), what)
    return True


def _joint(model):
    r"""Every joint state's probability :math:`p(v, h)` (a ``(N_v, N_h)`` array) and its
    statistics :math:`-\partial E/\partial\theta` (``(N_v, N_h, d)``), flattened in the
    order of the model's parameters."""
    V = model.visible.states(0, model.visible.n_states ** model.n_visible)
    H = model.hidden.states(0, model.hidden.n_states ** model.n_hidden)
    nv, nh = len(V), len(H)
    VV, HH = np.repeat(V, nh, axis=0), np.tile(H, (nv, 1))
    log_p = -model.energy(VV, HH)
    p = np.exp(log_p - np.logaddexp.reduce(log_p)).reshape(nv, nh)
    Sv = model.visible.statistic(VV).reshape(nv * nh, -1)
    Sh = model.hidden.statistic(HH).reshape(nv * nh, -1)
    parts = [(Sv[:, :, None] * Sh[:, None, :]).reshape(nv * nh, -1)]
    for layer, X, I in ((model.visible, VV, model.input_visible(HH)),
                        (model.hidden, HH, model.input_hidden(VV))):
        for g in layer.potential_gradient(X, I).values():
            parts.append(g.reshape(nv * nh, -1))
    return V, H, p, np.concatenate(parts, axis=1).reshape(nv, nh, -1)


def _conditional(model, v):
    """E[s | v] for each row of v, and the conditional variances p (1 - p) of h."""
    p = model.prob_h_given_v(v)
    n = len(v)
    mean = np.concatenate([(v[:, :, None] * p[:, None, :]).reshape(n, -1), v, p], axis=1)
    return mean, p * (1.0 - p)


def _weighted_covariance(x, weights):
    """Covariance of the rows of x under the probability weights."""
    centred = x - weights @ x
    return centred.T @ (centred * weights[:, None])


def _mean_conditional_covariance(model, v, weights):
    r""":math:`\sum_n w_n \mathrm{Cov}[s \mid v_n]`, block by block.

    Given v, only the entries with h vary: cov(v_i h_j, v_k h_l) = v_i v_k var_j
    [j = l], cov(v_i h_j, h_l) = v_i var_j [j = l], var(h_j) = var_j; b is fixed.
    """
    n_v, n_h = model.n_visible, model.n_hidden
    _, var = _conditional(model, v)
    d = n_parameters(model)
    out = np.zeros((d, d))
    ww = np.einsum("n,nj,ni,nk->jik", weights, var, v, v)   # (n_h, n_v, n_v)
    wc = np.einsum("n,nj,ni->ji", weights, var, v)           # (n_h, n_v)
    cc = weights @ var                                        # (n_h,)
    w_index = np.arange(n_v * n_h).reshape(n_v, n_h)          # index of W_ij
    c_index = n_v * n_h + n_v + np.arange(n_h)
    for j in range(n_h):
        rows = w_index[:, j]
        out[np.ix_(rows, rows)] = ww[j]
        out[rows, c_index[j]] = wc[j]
        out[c_index[j], rows] = wc[j]
        out[c_index[j], c_index[j]] = cc[j]
    return out


def fisher_information(model):
    r"""Exact Fisher information of the visible marginal :math:`p(v)`, a ``(d, d)`` matrix.

    Since :math:`\nabla_\theta \log p(v) = \mathbb{E}[s \mid v] - \mathbb{E}_p[s]`,
    the Fisher matrix :math:`\mathbb{E}_{p(v)}[\nabla \log p\, \nabla \log p^\top]`
    is the covariance of :math:`\mathbb{E}[s \mid v]` under :math:`p(v)`.

    Raises
    ------
    ValueError
        If the model has more than ``MAX_CURVATURE_VISIBLE`` visible units, or
        the matrices would not fit the size limit.

    Examples
    --------
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> F = fisher_information(model)
    >>> F.shape, bool(np.all(np.linalg.eigvalsh(F) > -1e-12))
    ((11, 11), True)
    """
    if _general(model, "fisher_information"):
        V, H, p_vh, S = _joint(model)
        p_v = p_vh.sum(axis=1)
        mean = np.einsum("vh,vhd->vd", p_vh, S) / p_v[:, None]
        return _weighted_covariance(mean, p_v)
    _check_size(model, "fisher_information")
    v = all_states(model.n_visible)
    p_v = np.exp(log_prob(model, v))
    mean, _ = _conditional(model, v)
    return _weighted_covariance(mean, p_v)


def log_partition_hessian(model):
    r"""Exact Hessian of :math:`\log Z`: the covariance of :math:`s(v, h)` under :math:`p(v, h)`.

    By the law of total covariance it is the Fisher matrix of :math:`p(v)`
    plus the average conditional covariance :math:`\mathbb{E}_{p(v)}\mathrm{Cov}[s \mid v]`;
    a covariance matrix, so :math:`\log Z` is convex in the parameters.

    Examples
    --------
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> H = log_partition_hessian(model)
    >>> bool(np.allclose(H, H.T)), bool(np.linalg.eigvalsh(H).min() > 0)
    (True, True)
    """
    if _general(model, "log_partition_hessian"):
        _, _, p_vh, S = _joint(model)
        return _weighted_covariance(S.reshape(-1, S.shape[2]), p_vh.ravel())
    _check_size(model, "log_partition_hessian")
    v = all_states(model.n_visible)
    p_v = np.exp(log_prob(model, v))
    return fisher_information(model) + _mean_conditional_covariance(model, v, p_v)


def log_likelihood_hessian(model, data):
    r"""Exact Hessian of the mean log-likelihood :math:`\bar\ell` over `data`.

    :math:`\bar\ell = \frac1N \sum_n \log \sum_h e^{-E(v_n, h)} - \log Z`, and the
    Hessian of each :math:`\log \sum_h e^{-E(v_n, h)}` is :math:`\mathrm{Cov}[s \mid v_n]`, so

    .. math::

        \nabla^2 \bar\ell = \frac1N \sum_n \mathrm{Cov}[s \mid v_n] - \nabla^2 \log Z ,

    a difference of two positive semi-definite matrices, which can have
    eigenvalues of either sign.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Binary rows.
    """
    if _general(model, "log_likelihood_hessian"):
        rows, _ = model.visible.check_states(data, "data")
        V, H, p_vh, S = _joint(model)
        index = model.visible.index_of(rows)
        conditional = p_vh[index] / p_vh[index].sum(axis=1, keepdims=True)
        data_term = sum(_weighted_covariance(S[i], w) for i, w in zip(index, conditional))
        return data_term / len(rows) - _weighted_covariance(S.reshape(-1, S.shape[2]),
                                                            p_vh.ravel())
    _check_size(model, "log_likelihood_hessian")
    rows, _ = check_binary(data, "data", model.n_visible)
    weights = np.full(len(rows), 1.0 / len(rows))
    return _mean_conditional_covariance(model, rows, weights) - log_partition_hessian(model)


def flip_hidden(model, j):
    r"""The RBM with hidden unit `j` relabelled :math:`h_j \to 1 - h_j`; the same :math:`p(v)`.

    :math:`(c_j + \sum_i W_{ij} v_i) h_j = (c_j + \sum_i W_{ij} v_i) - (c_j + \sum_i W_{ij} v_i)(1 - h_j)`,
    so column `j` of ``W`` and ``c[j]`` change sign and ``b`` gains column `j`
    of ``W``; the constant :math:`c_j` only rescales :math:`Z`.

    Any hidden layer of two-state units and any visible layer: with a unit's
    statistic :math:`s = \alpha x + \beta` of a bit :math:`x`, the relabelled
    statistic is :math:`\kappa - s` with :math:`\kappa = \alpha + 2\beta` (1 for
    {0,1} units, 0 for ±1 units: :math:`h_j \to -h_j`), and the visible layer's
    input gains :math:`\kappa` times column `j` of ``W`` (its ``input_shift``).

    Raises
    ------
    ValueError
        If the hidden layer's units do not have two states, or `j` is no unit.

    Examples
    --------
    >>> from rbm import exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> v = exact.all_states(3)
    >>> bool(np.allclose(exact.log_prob(flip_hidden(model, 1), v), exact.log_prob(model, v)))
    True
    """
    check_model(model)
    if model.hidden.bits is None:
        raise ValueError(f"flip_hidden relabels units of two states ({{0,1}} or ±1); "
                         f"model.hidden is {model.hidden!r}")
    if not isinstance(j, (int, np.integer)) or isinstance(j, bool) or not 0 <= j < model.n_hidden:
        raise ValueError(f"j must be an integer in [0, {model.n_hidden}), got {j!r}")
    alpha, beta = model.hidden.bits
    W, visible, hidden = model.W.copy(), model.visible.copy(), model.hidden.copy()
    for key, change in visible.input_shift((alpha + 2.0 * beta) * W[..., j]).items():
        getattr(visible, key)[...] += change
    W[..., j] *= -1.0
    hidden.bias[j] *= -1.0
    return RBM(W, visible, hidden)


def permute_hidden(model, order):
    """The RBM with its hidden units reordered by `order` (a permutation); the same :math:`p(v)`.

    Any two layers: the hidden units' parameters and their weights are reordered together.
    """
    check_model(model)
    order = np.asarray(order)
    if order.shape != (model.n_hidden,) or not np.array_equal(np.sort(order),
                                                              np.arange(model.n_hidden)):
        raise ValueError(f"order must be a permutation of range({model.n_hidden}), "
                         f"got {order.tolist()}")
    hidden = model.hidden.copy()
    for key, value in model.hidden.parameters().items():
        getattr(hidden, key)[...] = value[order]
    return RBM(np.take(model.W, order, axis=len(model.visible.shape)), model.visible, hidden)


def _check_offsets(mu, lam, visible_shape, hidden_shape):
    mu, lam = np.asarray(mu, dtype=float), np.asarray(lam, dtype=float)
    if mu.shape != tuple(visible_shape) or lam.shape != tuple(hidden_shape):
        raise ValueError(f"mu must have shape {tuple(visible_shape)} and lam "
                         f"{tuple(hidden_shape)}, got {mu.shape} and {lam.shape}")
    if not (np.isfinite(mu).all() and np.isfinite(lam).all()):
        raise ValueError("mu and lam must be finite")
    return mu, lam


def _centering_layers(model, what):
    """Both layers, refused unless discrete (energy -bias . s, which centering rewrites)."""
    for side in ("visible", "hidden"):
        layer = getattr(model, side)
        if not layer.discrete:
            raise ValueError(f"{what} centres the statistics of layers with energy "
                             f"-bias . s(x) (discrete units); model.{side} is {layer!r}, "
                             f"which is continuous")
    return model.visible.shape, model.hidden.shape


def _shift(W, mu, lam):
    r""":math:`W\lambda` and :math:`W^\top\mu` over the layers' statistics, in their shapes."""
    dv, dh = mu.size, lam.size
    W2 = W.reshape(dv, dh)
    return (W2 @ lam.ravel()).reshape(mu.shape), (W2.T @ mu.ravel()).reshape(lam.shape)


def from_centered(centered, mu, lam, *, like=None):
    r"""The ordinary RBM of a centered one; the same distribution.

    A centered RBM has the energy
    :math:`E = -(v - \mu)^\top \tilde b - (h - \lambda)^\top \tilde c - (v - \mu)^\top \tilde W (h - \lambda)`.
    Expanding it and dropping constants gives :math:`W = \tilde W`,
    :math:`b = \tilde b - \tilde W \lambda`, :math:`c = \tilde c - \tilde W^\top \mu`.
    For discrete layers ({0,1}, ±1, Potts) :math:`v` and :math:`h` stand for
    the statistics :math:`s(v)`, :math:`s(h)` and the offsets have their shapes.

    Parameters
    ----------
    centered : Gradient
        The centered parameters :math:`(\tilde W, \tilde b, \tilde c)` (a
        :class:`~rbm.model.Gradient` is the parameter-shaped container).
    mu, lam : array_like
        The visible and hidden offsets, of the shapes of ``b`` and ``c``
        (lengths ``n_visible`` and ``n_hidden`` for the binary model).
    like : RBM, optional
        A model whose layers the result takes (their biases replaced); by
        default two {0,1} layers.
    """
    if not isinstance(centered, Gradient):
        raise TypeError(f"centered must be an rbm.Gradient, got {type(centered).__name__}")
    if like is None:
        mu, lam = _check_offsets(mu, lam, *((n,) for n in centered.W.shape))
        b_shift, c_shift = _shift(centered.W, mu, lam)
        return RBM(centered.W.copy(), centered.b - b_shift, centered.c - c_shift)
    check_model(like, "like")
    mu, lam = _check_offsets(mu, lam, *_centering_layers(like, "from_centered"))
    b_shift, c_shift = _shift(centered.W, mu, lam)
    visible, hidden = like.visible.copy(), like.hidden.copy()
    visible.bias[...] = centered.b - b_shift
    hidden.bias[...] = centered.c - c_shift
    return RBM(centered.W.copy(), visible, hidden)


def to_centered(model, mu, lam):
    """The centered parameters of `model` for the offsets `mu`, `lam`; inverse of :func:`from_centered`.

    Any two discrete layers ({0,1}, ±1, Potts; pass ``like=model`` to
    :func:`from_centered` to return); a continuous layer is refused with a
    ValueError naming it.
    """
    check_model(model)
    mu, lam = _check_offsets(mu, lam, *_centering_layers(model, "to_centered"))
    b_shift, c_shift = _shift(model.W, mu, lam)
    return Gradient(model.W.copy(), model.b + b_shift, model.c + c_shift)


def centering_jacobian(n_visible, n_hidden, mu, lam):
    r"""The matrix :math:`J = \partial\theta / \partial\tilde\theta` of :func:`from_centered`, ``(d, d)``.

    The map is linear, so :math:`\theta = J \tilde\theta`; gradients transform as
    :math:`\nabla_{\tilde\theta} = J^\top \nabla_\theta` and the Fisher matrix as
    :math:`J^\top F J`.
    """
    mu, lam = _check_offsets(mu, lam, (n_visible,), (n_hidden,))
    n_w = n_visible * n_hidden
    d = n_w + n_visible + n_hidden
    J = np.eye(d)
    w_index = np.arange(n_w).reshape(n_visible, n_hidden)
    for i in range(n_visible):
        J[n_w + i, w_index[i, :]] = -lam          # b_i = b~_i - sum_j W~_ij lam_j
    for j in range(n_hidden):
        J[n_w + n_visible + j, w_index[:, j]] = -mu  # c_j = c~_j - sum_i W~_ij mu_i
    return J


def natural_gradient(model, data, *, damping=1e-4):
    r"""The natural gradient :math:`(F + \delta I)^{-1} \nabla_\theta \bar\ell`, as a :class:`~rbm.model.Gradient`.

    `damping` :math:`\delta > 0` keeps the solve well posed where the Fisher
    matrix is nearly singular.
    """
    if not (isinstance(damping, (int, float)) and np.isfinite(damping) and damping > 0):
        raise ValueError(f"damping must be a positive finite number, got {damping!r}")
    F = fisher_information(model)
    g = gradient(model, data).flat()
    step = np.linalg.solve(F + damping * np.eye(len(g)), g)
    if model.is_binary:
        return Gradient.from_flat(step, model.n_visible, model.n_hidden)
    fields, start = {}, 0
    for name, arr in model.parameters().items():
        fields[name] = step[start:start + arr.size].reshape(arr.shape)
        start += arr.size
    return Gradient.from_fields(fields)


def _binary_rows(data):
    rows = np.asarray(data)
    if rows.ndim != 2:
        raise ValueError(f"data must have shape (n_samples, n_visible), got {rows.shape}")
    return check_binary(rows, "data", rows.shape[1], allow_1d=False)[0]


def _data_log_odds(rows):
    freq = rows.mean(axis=0)
    if np.any(freq <= 0.0) or np.any(freq >= 1.0):
        raise ValueError("data must have every pixel both on and off in some row "
                         "(the log-odds of its frequency must be finite)")
    return freq, np.log(freq / (1.0 - freq))


def saddle_model(data, c):
    r"""The RBM with :math:`W = 0`, visible biases at the data's log-odds and hidden biases `c`.

    Its visible units are independent with the data's pixel frequencies, so the
    gradient of the mean log-likelihood vanishes there for every `c`: a
    critical point of :math:`\bar\ell`, and a saddle whenever two of the
    data's pixels are correlated (see :func:`saddle_curvature`).  With pairwise
    uncorrelated pixels the second-order test is silent, and the point need
    not be a maximum: on the parity data ``{000, 011, 101, 110}``
    :math:`\bar\ell` still rises along a weight column, at third order.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Binary rows; every pixel must be on in some row and off in another.
    c : array_like of shape (n_hidden,)
        The hidden biases.

    Returns
    -------
    RBM

    Raises
    ------
    ValueError
        If a pixel is constant in the data, or `c` is not a finite 1-d array.

    Examples
    --------
    >>> from rbm import exact
    >>> data = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0]])
    >>> model = saddle_model(data, [0.0, 2.0])
    >>> float(np.abs(exact.gradient(model, data).flat()).max()) < 1e-12
    True
    """
    rows = _binary_rows(data)
    c = np.asarray(c, dtype=float)
    if c.ndim != 1 or len(c) == 0 or not np.isfinite(c).all():
        raise ValueError(f"c must be a non-empty 1-d array of finite numbers, got shape {c.shape}")
    _, b = _data_log_odds(rows)
    return RBM(np.zeros((rows.shape[1], len(c))), b, c.copy())


def saddle_curvature(data, c):
    r"""Curvature of :math:`\bar\ell` along each weight column at :func:`saddle_model`, ``(n_hidden, n_v, n_v)``.

    Move column :math:`j` of :math:`W` by :math:`t x` and the visible biases by
    :math:`-t\,\sigma(c_j)\,x` (which cancels the unit's first-order effect,
    a shift of the visible biases).  Then

    .. math::

        \frac{d^2 \bar\ell}{dt^2}\Big|_{t=0}
        = \sigma(c_j)\,(1 - \sigma(c_j))\; x^\top (C_q - \operatorname{diag} C_q)\, x ,

    with :math:`C_q` the data's covariance of the pixels.  Returned: the
    matrices :math:`K_j = \sigma(c_j)(1 - \sigma(c_j))(C_q - \operatorname{diag} C_q)`.

    Notes
    -----
    Along that direction :math:`\log \tilde p(v)` changes by
    :math:`\mathrm{softplus}(c_j + t x^\top v) - t\sigma(c_j) x^\top v
    = \mathrm{softplus}(c_j) + \tfrac12 \sigma'(c_j) t^2 (x^\top v)^2 + O(t^3)`;
    its first derivative in :math:`t` vanishes, so the curvature of
    :math:`\bar\ell = \mathbb{E}_q \log\tilde p - \log Z` is
    :math:`\sigma'(c_j)(\mathbb{E}_q - \mathbb{E}_p)[(x^\top v)^2]`.  The data
    and the model share the pixel means, and the model's pixels are
    independent, so only the off-diagonal covariances remain.  Since the trace
    of :math:`C_q - \operatorname{diag} C_q` is zero, it has a positive
    eigenvalue unless the pixels are pairwise uncorrelated; then every
    curvature here is zero, and whether :math:`W = 0` is a maximum is decided
    at higher order.

    Examples
    --------
    >>> data = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 0]])
    >>> K = saddle_curvature(data, [0.0])
    >>> K.shape, bool(np.allclose(np.diag(K[0]), 0.0))
    ((1, 3, 3), True)
    """
    rows = _binary_rows(data)
    model = saddle_model(rows, c)
    cov = np.cov(rows.T, bias=True)
    off_diagonal = cov - np.diag(np.diag(cov))
    s = sigmoid(model.c)
    return (s * (1.0 - s))[:, None, None] * off_diagonal[None, :, :]


def add_hidden_unit(model, state, log_gain, *, sharpness=30.0):
    r"""The RBM with one more hidden unit that raises the weight of one visible `state`.

    The construction of Le Roux and Bengio (2008): a hidden unit with weights
    :math:`w_i = a\,(2\hat v_i - 1)` and bias :math:`c = \gamma - a \sum_i \hat v_i`
    multiplies the unnormalised probability of every :math:`v` by
    :math:`1 + e^{w^\top v + c}`.  Its input is :math:`\gamma` at :math:`v = \hat v`
    and at most :math:`\gamma - a` elsewhere, so the factor is
    :math:`1 + e^{\gamma}` for :math:`\hat v` and within :math:`e^{\gamma - a}` of 1
    for every other state: in the limit of large `sharpness` :math:`a`, only
    :math:`\hat v` gains weight.

    Parameters
    ----------
    model : RBM
    state : array_like of shape (n_visible,)
        The binary state :math:`\hat v` whose weight is raised.
    log_gain : float
        :math:`\gamma`; the unnormalised weight of `state` is multiplied by
        :math:`1 + e^{\gamma}`.
    sharpness : float, default 30
        :math:`a > 0`; every other state's weight changes by a factor within
        :math:`e^{\gamma - a}` of 1.

    Examples
    --------
    >>> from rbm import exact
    >>> model = RBM.random(3, 1, scale=0.5, rng=0)
    >>> bigger = add_hidden_unit(model, [1, 0, 1], np.log(3.0))
    >>> v = exact.all_states(3)
    >>> ratio = np.exp(exact.log_prob(bigger, v) - exact.log_prob(model, v))
    >>> bool(np.allclose(ratio / ratio[0], [1, 1, 1, 1, 1, 4, 1, 1]))
    True
    """
    check_model(model, binary="add_hidden_unit")
    state, _ = check_binary(state, "state", model.n_visible)
    state = state[0]
    for name, value in (("log_gain", log_gain), ("sharpness", sharpness)):
        if not (isinstance(value, (int, float, np.floating)) and np.isfinite(value)):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not sharpness > 0:
        raise ValueError(f"sharpness must be positive, got {sharpness!r}")
    w = sharpness * (2.0 * state - 1.0)
    c = log_gain - sharpness * state.sum()
    return RBM(np.column_stack([model.W, w]), model.b.copy(), np.append(model.c, c))
