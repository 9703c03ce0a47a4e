r"""The exact Gibbs transition of a small RBM, and the exact expectation of CD-k.

The visible states of block Gibbs sampling form a Markov chain with

.. math:: T(v, v') = \sum_h p(h \mid v)\, p(v' \mid h),

that is ``T = A @ B`` with :math:`A_{vh} = p(h \mid v)` of shape
``(2**n_visible, 2**n_hidden)`` and :math:`B_{hv'} = p(v' \mid h)` of
shape ``(2**n_hidden, 2**n_visible)``.  Both layers are enumerated: the
visible layer is limited to ``MAX_TRANSITION_BITS`` units (distributions
over it are held whole) and both together to ``MAX_JOINT_BITS`` (every
pair is visited, in blocks of bounded memory).  States are ordered
as in :func:`rbm.exact.all_states`.

Any two discrete layers (±1 spins, Potts units) have the same chain over
their states, ordered as ``layer.states`` (first unit most significant);
their conditionals are the layers' own, :math:`p(h \mid v) \propto
e^{-E_\text{h}(h) + s(h)\cdot I(v)}`, and the expected CD-k gradient has one field per
parameter.  A continuous layer is refused with a ValueError naming it.
"""

import numpy as np

from rbm._validation import (
    MAX_DENSE_BITS,
    check_binary,
    check_enumeration_size,
    check_positive_int,
)
from rbm._enumeration import states
from rbm._kernels import discrete_bits, row_statistics
from rbm.exact import all_states, data_expectations, data_statistics, empirical_distribution
from rbm.model import Gradient, check_model
from rbm.special import sigmoid, softplus

__all__ = ["MAX_TRANSITION_BITS", "MAX_JOINT_BITS", "MAX_VARIANT_BITS", "gibbs_transition_matrix",
           "cd_expected_gradient", "cd1_variant_expected_gradient"]

# Distributions over visible states are held whole: at 14 visible units the
# (2**14, 2**14) float64 transition matrix already takes 2 GiB.
MAX_TRANSITION_BITS = 14
# Every (v, h) pair is visited (in blocks of bounded memory), once per step
# or once to form T: the time limit of the other exact functions applies.
MAX_JOINT_BITS = 30
# cd1_variant_expected_gradient holds a (2**n_hidden, 2**n_visible) matrix per data row.
MAX_VARIANT_BITS = 20
# Entries of a conditional-probability block built at once: 16 MiB of float64.
_CHUNK_ELEMENTS = 2**21
# Multiply-adds in one matrix product of the transition matrix: about 0.1 s here.
_PRODUCT_TERMS = 2**28


def _check_sizes(model, what):
    n_visible, n_hidden = model.n_visible, model.n_hidden
    check_enumeration_size(n_visible, f"{what} with n_visible={n_visible}",
                           limit=MAX_TRANSITION_BITS)
    check_enumeration_size(n_visible + n_hidden,
                           f"{what} with n_visible + n_hidden={n_visible + n_hidden}",
                           limit=MAX_JOINT_BITS)


def _conditional(pre, targets):
    r"""Matrix of :math:`p(y \mid x)` for rows of pre-activations and all target states.

    For factorised Bernoulli units with pre-activations :math:`a`,
    :math:`\log p(y \mid x) = y^\top a - \sum_j \operatorname{softplus}(a_j)`;
    working in log-space keeps every entry accurate for any weights.  (Not a copy of the
    per-unit conditionals of :class:`~rbm.model.RBM`: this is the probability of whole
    target vectors, which a product of per-unit probabilities would underflow.)
    """
    return np.exp(pre @ targets.T - softplus(pre).sum(axis=1, keepdims=True))


def _push(r, M, bias, chunk_size):
    r"""Distribution of the next layer, :math:`s(y) = \sum_x r(x)\, p(y \mid x)`.

    The source layer has ``M.shape[0]`` units and :math:`p(y_j = 1 \mid x) =
    \sigma((x^\top M)_j + \text{bias}_j)`.  Source states are taken in chunks
    so that the full conditional matrix is never held.
    """
    n_in, n_out = M.shape
    targets = all_states(n_out)
    out = np.zeros(2**n_out)
    for start in range(0, 2**n_in, chunk_size):
        stop = min(start + chunk_size, 2**n_in)
        out += r[start:stop] @ _conditional(states(start, stop, n_in) @ M + bias, targets)
    return out


def gibbs_transition_matrix(model, *, chunk_size=None):
    r"""The exact transition matrix of block Gibbs sampling on the visible states.

    .. math:: T(v, v') = \sum_h p(h \mid v)\, p(v' \mid h).

    Parameters
    ----------
    model : RBM
        With ``n_visible <= MAX_TRANSITION_BITS`` and ``n_visible + n_hidden <= MAX_JOINT_BITS``.

    chunk_size : int, optional
        Hidden states per block; the conditional matrices are built one
        block of hidden states at a time, so besides ``T`` itself memory
        holds about 2**21 numbers (16 MiB) by default.

    Returns
    -------
    ndarray of shape (2**n_visible, 2**n_visible)
        Row-stochastic, rows and columns in the order of
        :func:`rbm.exact.all_states`.  Its stationary distribution is
        :func:`rbm.exact.visible_distribution`.  At ``n_visible = 14`` it
        takes 2 GiB.

    Raises
    ------
    ValueError
        If the model exceeds those sizes.

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> T = gibbs_transition_matrix(model)
    >>> T.shape, bool(np.allclose(T.sum(axis=1), 1.0))
    ((8, 8), True)
    >>> p = exact.visible_distribution(model)
    >>> bool(np.allclose(p @ T, p))
    True
    """
    if not _general(model, "gibbs_transition_matrix"):
        _check_sizes(model, "gibbs_transition_matrix")
        return _transition_matrix(model, _chunk(chunk_size, 2**model.n_visible))
    return _general_conditionals(model)[0]


def _chunk(chunk_size, n_targets):
    """Source states per block: given, or enough to fill _CHUNK_ELEMENTS with n_targets columns."""
    if chunk_size is None:
        return max(1, _CHUNK_ELEMENTS // n_targets)
    return check_positive_int(chunk_size, "chunk_size")


def _transition_matrix(model, chunk_size):
    """T = A @ B, summed over blocks of hidden states so that A and B are never held whole."""
    V = all_states(model.n_visible)
    pre_h = V @ model.W + model.c
    n_states = 2**model.n_visible
    T = np.zeros((n_states, n_states))
    for start in range(0, 2**model.n_hidden, chunk_size):
        H = states(start, min(start + chunk_size, 2**model.n_hidden), model.n_hidden)
        B = _conditional(H @ model.W.T + model.b, V)
        # One BLAS call cannot be interrupted: rows of T in slices of at most
        # _PRODUCT_TERMS multiply-adds (so that Ctrl-C is seen within a fraction of a
        # second) and _CHUNK_ELEMENTS entries (so that the product's temporary stays small).
        rows = max(1, min(_PRODUCT_TERMS // (len(H) * n_states), _CHUNK_ELEMENTS // n_states))
        for row in range(0, n_states, rows):
            T[row:row + rows] += _conditional(pre_h[row:row + rows], H) @ B
    return T


def cd_expected_gradient(model, data, k, *, chunk_size=None):
    r"""The exact expectation of the CD-k gradient estimate, by enumeration.

    CD-k starts one chain at each data row, so after ``k`` Gibbs steps the
    visible states are distributed as :math:`r_k = q\,T^k`, with ``q`` the
    empirical distribution of the data and ``T`` the Gibbs transition
    (applied as :math:`r \to r A \to (r A) B`, or through ``T`` formed once; see Notes).  Then

    .. math::
        \mathbb{E}[\Delta W] = \langle v\, p(h{=}1 \mid v)^\top\rangle_q
            - \sum_{v'} r_k(v')\, v'\, p(h{=}1 \mid v')^\top,

    and likewise :math:`\Delta b` with :math:`v` and :math:`\Delta c` with
    :math:`p(h{=}1 \mid v)`.  This is the expectation of
    :class:`rbm.estimators.CD` with either ``use_probabilities``
    setting (the hidden units enter linearly).  As ``k`` grows,
    :math:`r_k \to p(v)` for a mixing chain and the result tends to
    :func:`rbm.exact.gradient`; the difference at finite ``k`` is the
    bias of CD-k.

    Parameters
    ----------
    model : RBM
        With ``n_visible <= MAX_TRANSITION_BITS`` and ``n_visible + n_hidden <= MAX_JOINT_BITS``.
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.
    k : int or sequence of int
        Number of Gibbs steps, at least 1; a sequence gives the expectation
        for each of its entries, computed along one chain of distributions
        (the cost is that of the largest ``k``).
    chunk_size : int, optional
        Source states per block of conditional probabilities; by default a
        block holds about 2**21 numbers (16 MiB).

    Returns
    -------
    Gradient or list of Gradient
        One per entry of `k` when `k` is a sequence.

    Raises
    ------
    ValueError
        If the model exceeds those sizes, if
        ``k < 1``, or if `data` is not binary with ``n_visible`` columns.

    Notes
    -----
    Pushing the distribution through the two conditionals costs
    :math:`O(2^{n_\text{visible} + n_\text{hidden}}(n_\text{visible} +
    n_\text{hidden}))` per step.  When the largest ``k`` is at least
    :math:`2^{n_\text{visible}} / 64`, the transition matrix ``T`` is
    formed once instead (one matrix product over all
    :math:`(v, h, v')`), and each step is a vector-matrix product.

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> model = RBM.random(4, 3, scale=0.1, rng=0)
    >>> data = [[1, 0, 1, 0], [0, 1, 0, 1]]
    >>> bias = cd_expected_gradient(model, data, k=50) - exact.gradient(model, data)
    >>> bias.max_abs() < 1e-10  # weak weights mix fast
    True
    >>> curve = cd_expected_gradient(model, data, k=range(1, 4))  # k = 1, 2, 3 in one pass
    >>> len(curve)
    3
    """
    general = _general(model, "cd_expected_gradient")
    if general:
        data, _ = model.visible.check_states(data, "data", allow_1d=False)
    else:
        _check_sizes(model, "cd_expected_gradient")
        data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    single = not isinstance(k, (list, tuple, np.ndarray, range))
    ks = [check_positive_int(k, "k")] if single else [
        check_positive_int(int(x) if isinstance(x, np.integer) else x, "k") for x in k]
    if not ks:
        raise ValueError("k must hold at least one number of steps")
    if general:
        return _general_cd(model, data, ks, single)
    # Forming T costs one product over all (v, h, v') but makes each step cheap;
    # pushing through the two conditionals costs an exp per (v, h) at every step.
    # (T is also the only way when the hidden states are too many to list: n_visible is then small.)
    if 2**model.n_visible <= 64 * max(ks) or model.n_hidden > MAX_DENSE_BITS:
        T = _transition_matrix(model, _chunk(chunk_size, 2**model.n_visible))
    else:
        T = None
        chunk_size = _chunk(chunk_size, 2 ** max(model.n_visible, model.n_hidden))
    V = all_states(model.n_visible)
    P = model.prob_h_given_v(V)
    pos = data_expectations(model, data)
    r = empirical_distribution(data)
    done = 0
    results = {}
    for target in sorted(set(ks)):
        for _ in range(target - done):
            if T is not None:
                r = r @ T
            else:
                s = _push(r, model.W, model.c, chunk_size)
                r = _push(s, model.W.T, model.b, chunk_size)
        done = target
        results[target] = Gradient(W=pos.vh - (V * r[:, None]).T @ P, b=pos.v - r @ V,
                                   c=pos.h - r @ P)
    return results[ks[0]] if single else [results[x] for x in ks]


_RECONSTRUCTIONS = ("sample", "probabilities")
_NEGATIVE_HIDDEN = ("reconstruction", "data")


def cd1_variant_expected_gradient(model, data, *, reconstruction="sample",
                                  negative_hidden="reconstruction"):
    r"""The exact expectation of CD-1 and of two common variants of it, by enumeration.

    From each data row :math:`v_0`, CD-1 draws :math:`h_0 \sim p(h \mid v_0)`
    and a reconstruction :math:`v_1`, and subtracts negative statistics from
    the positive ones :math:`v_0\, p(h{=}1 \mid v_0)^\top`:

    .. math::
        \mathbb{E}[\Delta W] = \langle v_0\, p(h{=}1 \mid v_0)^\top\rangle_q
            - \Big\langle \sum_{h_0} p(h_0 \mid v_0)\,
              \mathbb{E}\big[v_1\, s^\top \mid h_0\big] \Big\rangle_q ,

    and likewise :math:`\Delta b` with :math:`v` and :math:`\Delta c` with
    the hidden statistic.  The variants differ in the reconstruction and in
    the hidden statistic :math:`s` of the negative phase:

    * ``reconstruction="sample"``: :math:`v_1 \sim p(v \mid h_0)` (CD-1);
      ``"probabilities"``: :math:`v_1 = p(v{=}1 \mid h_0)`, the mean-field
      reconstruction, deterministic given :math:`h_0`;
    * ``negative_hidden="reconstruction"``: :math:`s = p(h{=}1 \mid v_1)`
      (CD-1); ``"data"``: :math:`s = h_0`, the hidden state of the data step.

    With the defaults this is :func:`cd_expected_gradient` with ``k=1``,
    computed independently here by enumerating every pair
    :math:`(h_0, v_1)` for each data row.

    Parameters
    ----------
    model : RBM
        With ``n_visible + n_hidden <= MAX_VARIANT_BITS``.
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones; each row starts one chain.
    reconstruction : {"sample", "probabilities"}, default "sample"
    negative_hidden : {"reconstruction", "data"}, default "reconstruction"

    Returns
    -------
    Gradient
        The expectation of the estimate, in the ascent direction.

    Raises
    ------
    ValueError
        For an unknown variant, a model beyond ``MAX_VARIANT_BITS``, or data
        that are not binary with ``n_visible`` columns.

    Notes
    -----
    With ``negative_hidden="data"`` the expected hidden-bias update is zero
    for every model: both phases then average :math:`h_0`, whose mean is
    :math:`p(h{=}1 \mid v_0)`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=1.0, rng=0)
    >>> data = [[1, 0, 1, 0], [0, 1, 0, 1]]
    >>> cd1 = cd1_variant_expected_gradient(model, data)
    >>> bool((cd1 - cd_expected_gradient(model, data, k=1)).max_abs() < 1e-12)
    True
    >>> mean_field = cd1_variant_expected_gradient(model, data, reconstruction="probabilities")
    >>> bool((mean_field - cd1).max_abs() > 1e-3)
    True
    >>> wrong_step = cd1_variant_expected_gradient(model, data, negative_hidden="data")
    >>> bool(np.abs(wrong_step.c).max() < 1e-12)
    True
    """
    check_model(model, binary="cd1_variant_expected_gradient")
    if reconstruction not in _RECONSTRUCTIONS:
        raise ValueError(f"reconstruction must be 'sample' or 'probabilities', got {reconstruction!r}")
    if negative_hidden not in _NEGATIVE_HIDDEN:
        raise ValueError(
            f"negative_hidden must be 'reconstruction' or 'data', got {negative_hidden!r}")
    check_enumeration_size(model.n_visible + model.n_hidden,
                           f"cd1_variant_expected_gradient with n_visible + n_hidden="
                           f"{model.n_visible + model.n_hidden}", limit=MAX_VARIANT_BITS)
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    H = all_states(model.n_hidden)
    V = all_states(model.n_visible)
    pos = data_expectations(model, data)
    # Weight of each hidden state h0 over the data, the mean of p(h0 | v0) over the rows,
    # taken in blocks of rows so that memory does not grow with the data.
    rows = max(1, _CHUNK_ELEMENTS // 2**model.n_hidden)
    w_h0 = sum(_conditional(data[start:start + rows] @ model.W + model.c, H).sum(axis=0)
               for start in range(0, len(data), rows)) / len(data)
    if reconstruction == "probabilities":
        V1 = model.prob_v_given_h(H)                    # v1 as a function of h0
        S = sigmoid(V1 @ model.W + model.c) if negative_hidden == "reconstruction" else H
        w = w_h0                           # weight of each h0, over the data
        neg_vh, neg_v, neg_h = V1.T @ (w[:, None] * S), w @ V1, w @ S
    else:
        p_v1 = _conditional(H @ model.W.T + model.b, V)  # p(v1 | h0), (2**n_h, 2**n_v)
        w = w_h0[:, None] * p_v1           # weight of each pair (h0, v1)
        r = w.sum(axis=0)                               # distribution of v1
        if negative_hidden == "reconstruction":
            P = model.prob_h_given_v(V)
            neg_vh, neg_h = (V * r[:, None]).T @ P, r @ P
        else:
            neg_vh, neg_h = V.T @ w.T @ H, w.sum(axis=1) @ H
        neg_v = r @ V
    return Gradient(W=pos.vh - neg_vh, b=pos.v - neg_v, c=pos.h - neg_h)


# -- any two discrete layers ------------------------------------------------------------------

def _general(model, what):
    """Whether `model` takes the general path (not two {0,1} layers); refuses continuous ones."""
    bits = discrete_bits(model, what)
    if bits is None:
        return False
    bits_v, bits_h = bits
    check_enumeration_size(int(np.ceil(bits_v - 1e-9)), f"{what} over the visible states",
                           limit=MAX_TRANSITION_BITS)
    check_enumeration_size(int(np.ceil(bits_v + bits_h - 1e-9)),
                           f"{what} over the joint states", limit=MAX_DENSE_BITS + 2)
    return True


def _all(layer):
    return layer.states(0, layer.n_states ** layer.n_units)


def _conditional_matrix(model, X, source, target):
    r""":math:`p(y \mid x)` for every row of `X` (states of `source`) and every state of `target`."""
    if source == "visible":
        I, layer = model.input_hidden(X), model.hidden
    else:
        I, layer = model.input_visible(X), model.visible
    Y = _all(layer)
    S = layer.statistic(Y).reshape(len(Y), -1)
    log_p = I.reshape(len(X), -1) @ S.T - layer.energy(Y)[None, :] \
        - layer.log_normaliser(I)[:, None]
    return np.exp(log_p)


def _general_conditionals(model):
    """T = A B for two discrete layers, with A and B held whole (within the size limits)."""
    V, H = _all(model.visible), _all(model.hidden)
    A = _conditional_matrix(model, V, "visible", "hidden")
    B = _conditional_matrix(model, H, "hidden", "visible")
    return A @ B, V


def _general_cd(model, data, ks, single):
    T, V = _general_conditionals(model)
    pos = data_statistics(model, data)
    r = np.bincount(model.visible.index_of(data), minlength=len(V)) / len(data)
    done, results = 0, {}
    for target in sorted(set(ks)):
        for _ in range(target - done):
            r = r @ T
        done = target
        neg = row_statistics(model, V, weights=r, accurate=True)
        results[target] = pos - Gradient.from_fields(neg)
    return results[ks[0]] if single else [results[x] for x in ks]
