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
"""

import numpy as np

from rbm._validation import (
    check_binary,
    check_enumeration_size,
    check_model,
    check_positive_int,
)
from rbm.exact import (
    _states,
    all_states,
    data_expectations,
    empirical_distribution,
)
from rbm.model import Gradient
from rbm.special import softplus

__all__ = ["MAX_TRANSITION_BITS", "MAX_JOINT_BITS", "gibbs_transition_matrix",
           "cd_expected_gradient"]

# Distributions over visible states are held whole: at 14 visible units the
# (2**14, 2**14) float64 transition matrix already takes 2 GiB.
MAX_TRANSITION_BITS = 14
# Every (v, h) pair is visited (in blocks of bounded memory), once per step
# or once to form T: the time limit of the other exact functions applies.
MAX_JOINT_BITS = 30
# Entries of a conditional-probability block built at once: 16 MiB of float64.
_CHUNK_ELEMENTS = 2**21


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
    working in log-space keeps every entry accurate for any weights.
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
        out += r[start:stop] @ _conditional(_states(start, stop, n_in) @ M + bias, targets)
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
    check_model(model)
    _check_sizes(model, "gibbs_transition_matrix")
    return _transition_matrix(model, _chunk(chunk_size, 2**model.n_visible))


def _chunk(chunk_size, n_targets):
    """Source states per block: given, or enough to fill _CHUNK_ELEMENTS with n_targets columns."""
    if chunk_size is None:
        return max(1, _CHUNK_ELEMENTS // n_targets)
    return check_positive_int(chunk_size, "chunk_size")


def _transition_matrix(model, chunk_size):
    """T = A @ B, summed over blocks of hidden states so that A and B are never held whole."""
    V = all_states(model.n_visible)
    pre_h = V @ model.W + model.c
    T = np.zeros((2**model.n_visible, 2**model.n_visible))
    for start in range(0, 2**model.n_hidden, chunk_size):
        H = _states(start, min(start + chunk_size, 2**model.n_hidden), model.n_hidden)
        T += _conditional(pre_h, H) @ _conditional(H @ model.W.T + model.b, V)
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
    :func:`rbm.estimators.cd_gradient` with either ``use_probabilities``
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
    check_model(model)
    _check_sizes(model, "cd_expected_gradient")
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    single = not isinstance(k, (list, tuple, np.ndarray, range))
    ks = [check_positive_int(k, "k")] if single else [
        check_positive_int(int(x) if isinstance(x, np.integer) else x, "k") for x in k]
    if not ks:
        raise ValueError("k must hold at least one number of steps")
    # Forming T costs one product over all (v, h, v') but makes each step cheap;
    # pushing through the two conditionals costs an exp per (v, h) at every step.
    if 2**model.n_visible <= 64 * max(ks):
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
