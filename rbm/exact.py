r"""Exact quantities of small RBMs, by enumeration.

The partition function

.. math:: Z = \sum_{v, h} e^{-E(v, h)}

has a closed-form sum over either layer once the other is summed out, so
every function here enumerates only the **smaller** layer
(:math:`2^{\min(n_\text{visible}, n_\text{hidden})}` states), in chunks of
bounded memory and in log-space, which keeps it exact and finite for
weights of any size a model accepts (up to 1e100 in absolute value).  An
enumeration beyond :math:`2^{30}` states is refused at once with a
:class:`ValueError`; functions that hold one number per visible state
(distributions, KL) stop at :math:`2^{20}` visible states.

States of a layer with ``n`` units are ordered as the binary numbers
``0 .. 2**n - 1`` with the **first unit as the most significant bit**
(see :func:`all_states`).
"""

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from rbm._validation import (
    MAX_DENSE_BITS,
    MAX_ENUMERATION_BITS,
    check_model,
    as_float_array,
    check_binary,
    check_enumeration_size,
    check_positive_int,
)
from rbm.model import Gradient

__all__ = [
    "MAX_ENUMERATION_BITS",
    "MAX_DENSE_BITS",
    "Expectations",
    "all_states",
    "state_index",
    "log_partition",
    "log_prob",
    "log_likelihood",
    "visible_distribution",
    "empirical_distribution",
    "entropy",
    "kl_divergence",
    "data_expectations",
    "model_expectations",
    "gradient",
    "cd_expected_gradient",
    "gibbs_transition_matrix",
]

# Entries (states times units of the other layer) in one block of work: at most 8 MiB of
# float64 for large enumerations, at least 128 KiB; sizes that measured fastest here
# (benchmarks/bench_exact.py).
_CHUNK_ELEMENTS = 2**20
_MIN_CHUNK_ELEMENTS = 2**14
# Enumerations smaller than this (states times units of the other layer) run in one thread.
_THREADED_ELEMENTS = 2**22


@dataclass(frozen=True)
class Expectations:
    r"""Second and first moments of an RBM's units under some distribution.

    Attributes
    ----------
    vh : ndarray of shape (n_visible, n_hidden)
        :math:`\langle v h^\top \rangle`.
    v : ndarray of shape (n_visible,)
        :math:`\langle v \rangle`.
    h : ndarray of shape (n_hidden,)
        :math:`\langle h \rangle`.
    """

    vh: np.ndarray
    v: np.ndarray
    h: np.ndarray


def _states(start, stop, n):
    """Rows ``start .. stop - 1`` of :func:`all_states` (no checks)."""
    idx = np.arange(start, stop, dtype=np.int64)
    shifts = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ((idx[:, None] >> shifts) & 1).astype(float)


def all_states(n):
    """Every binary vector of length `n`, as the rows of an array.

    Row ``k`` is the binary representation of ``k`` with the first unit as
    the most significant bit.

    Parameters
    ----------
    n : int
        Number of units, at most ``MAX_DENSE_BITS``.

    Returns
    -------
    ndarray of shape (2**n, n)

    Examples
    --------
    >>> all_states(2)
    array([[0., 0.],
           [0., 1.],
           [1., 0.],
           [1., 1.]])
    """
    n = check_positive_int(n, "n")
    check_enumeration_size(n, "all_states", limit=MAX_DENSE_BITS)
    return _states(0, 2**n, n)


def state_index(states):
    """Index of each binary row in the order of :func:`all_states`.

    Parameters
    ----------
    states : array_like of shape (n,) or (n_samples, n)

    Returns
    -------
    int or ndarray of shape (n_samples,)

    Examples
    --------
    >>> state_index([[0, 1, 1], [1, 0, 0]]).tolist()
    [3, 4]
    """
    arr = as_float_array(states, "states")
    if arr.ndim not in (1, 2) or arr.shape[-1] < 1:
        raise ValueError(f"states must have shape (n,) or (n_samples, n), got {arr.shape}")
    arr2, single = check_binary(arr, "states", arr.shape[-1])
    if arr2.shape[1] > 62:
        raise ValueError(f"states has {arr2.shape[1]} columns; at most 62 fit an index")
    weights = 2 ** np.arange(arr2.shape[1] - 1, -1, -1, dtype=np.int64)
    idx = arr2.astype(np.int64) @ weights
    return int(idx[0]) if single else idx


def _layer_setup(model, layer):
    """Express the model as (enumerated layer x, summed layer y).

    Returns ``(a_x, a_y, M, swapped)`` with
    :math:`E = -a_x^\\top x - a_y^\\top y - x^\\top M y`; ``swapped`` is
    True when ``x`` is the hidden layer.
    """
    if layer is None:
        layer = "hidden" if model.n_hidden <= model.n_visible else "visible"
    if layer == "visible":
        return model.b, model.c, model.W, False
    if layer == "hidden":
        return model.c, model.b, model.W.T, True
    raise ValueError(f"layer must be None, 'visible' or 'hidden', got {layer!r}")


def _default_threads():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


class _Accumulator:
    r"""Running sums over enumerated states, kept relative to the largest log-weight.

    Holds :math:`S = \sum_k e^{\ell_k - m}`, where :math:`m` is the largest
    log-weight seen so far, and for moments the weighted sums needed for
    :math:`\langle x\rangle`, :math:`\langle y\rangle` and
    :math:`\langle x y^\top\rangle`, all scaled by :math:`e^{-m}`, so
    nothing overflows whatever the weights.  Every block of states shares
    its low bits, so the visible-side sum of weights is kept per low state
    (``w_low``) and contracted with the low bits once, at the end; the sums
    behind the low-bit part of :math:`\langle x y^\top\rangle` are kept in
    ``low``, whose shape the enumeration chooses.
    """

    def __init__(self, n_high, n_y, n_low_states, low_shape, moments):
        self.shift = -np.inf
        self.total = 0.0
        self.moments = moments
        if moments:
            self.w_low = np.zeros(n_low_states)   # sum over blocks of w, per low state
            self.s_y = np.zeros(n_y)              # sum of w E[y | x]
            self.low = np.zeros(low_shape)
            self.s_x_high = np.zeros(n_high)
            self.s_xy_high = np.zeros((n_high, n_y))

    def _arrays(self):
        if not self.moments:
            return ()
        return (self.w_low, self.s_y, self.low, self.s_x_high, self.s_xy_high)

    def rescale_to(self, new_shift):
        """Express the sums relative to ``new_shift`` (>= the current shift)."""
        factor = np.exp(self.shift - new_shift) if np.isfinite(self.shift) else 0.0
        self.total *= factor
        for arr in self._arrays():
            arr *= factor
        self.shift = new_shift

    def merge(self, other):
        new_shift = max(self.shift, other.shift)
        self.rescale_to(new_shift)
        other.rescale_to(new_shift)
        self.total += other.total
        for mine, theirs in zip(self._arrays(), other._arrays()):
            mine += theirs


class _Enumeration:
    r"""Exact sums over all states of one layer, with the other layer summed out.

    The enumerated layer ``x`` (``n_x`` units) and the summed layer ``y``
    (``n_y`` units) have energy :math:`E = -a_x^\top x - a_y^\top y - x^\top M y`,
    so that :math:`\log \sum_y e^{-E} = a_x^\top x + \sum_j \operatorname{softplus}(u_j)`
    with :math:`u = a_y + M^\top x`.

    State ``k`` is ``(high, low)`` in binary, so the pre-activations of a
    block of ``2**L`` consecutive states are a table ``t`` of the low bits
    (computed once) plus a vector ``o`` of the high bits: the blocks share
    all per-state work but one cheap pass.  Blocks are laid out
    units-by-states, so every reduction over units runs along contiguous
    rows (vectorised), and the high-bit range is split between threads
    (numpy releases the GIL in these loops).  Two ways to sum the softplus
    terms of a block, both exact to rounding:

    * **product** (:class:`_ProductEnumeration`, used whenever the weights
      allow it): :math:`1 + e^{t + o} = e^{o + c}\,(e^{t - c} + e^{-o - c})`
      with a per-unit centre :math:`c`, and :math:`e^{t - c}` is computed once
      for the whole enumeration.  A block then costs one addition and one
      multiplication per entry and one ``log`` per state and group of units,
      and **no** ``exp`` per entry; the conditional means come from one
      division per entry.
    * **stable** (:class:`_StableEnumeration`, for weights so large that a
      centred factor could overflow):
      :math:`\sum_j \operatorname{softplus}(u_j) = \tfrac12\sum_j (u_j + |u_j|)
      + \log \prod_j (1 + e^{-|u_j|})`: one ``exp`` per entry, and products
      of at most 1000 factors in (1, 2], which cannot overflow.
    """

    def __init__(self, a_x, a_y, M, block_size, moments):
        self.n_x, self.n_y = M.shape
        self.moments = moments
        self.low_bits = int(np.log2(block_size))
        self.high_bits = self.n_x - self.low_bits
        low = slice(self.high_bits, self.n_x)
        X_low = _states(0, 2**self.low_bits, self.low_bits)
        self.X_low = X_low
        # Units by states: reductions over units run along contiguous rows.
        self.table = np.ascontiguousarray((X_low @ M[low]).T + a_y[:, None])
        self.lin_low = X_low @ a_x[low]
        self.M_high = M[:self.high_bits]
        self.a_x_high = a_x[:self.high_bits]

    def run(self, high_start, high_stop):
        """Accumulate the blocks ``high_start .. high_stop - 1``."""
        shape = self.table.shape
        acc = _Accumulator(self.high_bits, self.n_y, shape[1], self._low_shape, self.moments)
        buffers = self._buffers(shape)
        for high in range(high_start, high_stop):
            x_high = _states(high, high + 1, self.high_bits)[0]
            offset = x_high @ self.M_high
            log_w = self._log_weights(offset, buffers)
            log_w += self.lin_low + x_high @ self.a_x_high
            block_max = float(log_w.max())
            if block_max > acc.shift:
                acc.rescale_to(block_max)
            w = np.exp(log_w - acc.shift)
            w_total = w.sum()
            acc.total += w_total
            if self.moments:
                # sum over the block of w E[y | x]; the low-bit sums go into acc.low
                s_y = self._weighted_means(w, w_total, acc.low, buffers)
                acc.s_y += s_y
                acc.w_low += w
                acc.s_x_high += w_total * x_high
                acc.s_xy_high += np.outer(x_high, s_y)
        return acc

    def moments_of(self, acc):
        """Normalised moments ``(<x>, <y>, <x y^T>)`` from a final accumulator.

        Means of 0/1 units, so clipped to [0, 1]: a difference such as
        ``1 - sigmoid(-u)`` can round to -1e-16.
        """
        s_x = np.concatenate([acc.s_x_high, acc.w_low @ self.X_low]) / acc.total
        s_y = acc.s_y / acc.total
        s_xy = np.concatenate([acc.s_xy_high, self._low_cross(acc.low).T]) / acc.total
        return tuple(np.clip(m, 0.0, 1.0, out=m) for m in (s_x, s_y, s_xy))


class _ProductEnumeration(_Enumeration):
    r"""The product path: no ``exp`` per entry (see :class:`_Enumeration`).

    For unit ``j`` the table ``t_j`` ranges over ``[t_lo, t_hi]`` (exactly, from
    the table) and ``o_j`` over ``[o_lo, o_hi]`` (sums of the negative and of
    the positive high-bit weights), so the centred factor
    :math:`F_j = e^{t_j - c_j} + e^{-o_j - c_j}` has
    :math:`\log F_j \in [m_\text{lo} - c_j, m_\text{hi} - c_j + \log 2]` with
    :math:`m_\text{lo} = \max(t_\text{lo}, -o_\text{hi})` and
    :math:`m_\text{hi} = \max(t_\text{hi}, -o_\text{lo})`, so
    :math:`|\log F_j| \le r_j = \max(|m_\text{lo} - c_j|, |m_\text{hi} + \log 2 - c_j|)`.
    The midpoint :math:`c_j = (m_\text{lo} + m_\text{hi})/2` makes :math:`r_j`
    smallest, but :math:`\log Z` then carries an absolute rounding error of
    about :math:`\epsilon \sum_j |c_j|`; so a midpoint farther than 30 from 0
    moves towards 0 as far as :math:`r_j` may double.  Units are grouped so
    that each group's :math:`\sum r_j` stays within ``LOG_BUDGET``: each
    group's product is a finite, normal number.
    """

    LOG_BUDGET = 600.0  # e**600 < 1.8e308 and e**-600 > 2.3e-308, with room for rounding
    _NEAR_ZERO = 30.0   # centres this close to 0 cost at most 30 eps each in log Z

    def __init__(self, a_x, a_y, M, block_size, moments):
        super().__init__(a_x, a_y, M, block_size, moments)
        m_lo = np.maximum(self.table.min(axis=1), -np.maximum(self.M_high, 0.0).sum(axis=0))
        m_hi = np.maximum(self.table.max(axis=1), -np.minimum(self.M_high, 0.0).sum(axis=0))
        log2 = np.log(2.0)
        # False when one unit alone could overflow: the caller takes the stable path.
        self.feasible = bool(np.all(0.5 * (m_hi - m_lo) + log2 <= self.LOG_BUDGET))
        if not self.feasible:
            return
        # The midpoint makes the bound smallest, but log Z then carries an absolute error
        # of about eps * sum |c|: a midpoint far from 0 moves towards 0 as far as a bound
        # of twice the smallest one allows (log F in [m_lo - c, m_hi - c + log 2]).
        centre = 0.5 * (m_lo + m_hi)
        allowed = np.minimum(m_hi - m_lo + 2 * log2, self.LOG_BUDGET)
        towards_zero = np.clip(0.0, m_hi + log2 - allowed, m_lo + allowed)
        self.centre = np.where(np.abs(centre) <= self._NEAR_ZERO, centre, towards_zero)
        radius = np.maximum(np.abs(m_lo - self.centre), np.abs(m_hi + log2 - self.centre))
        self.centre_sum = float(self.centre.sum())
        # exp(t - c), computed once; terms below 1e-300 are flushed to zero (the other
        # term of the factor is at least e**-600, so nothing measurable is lost, and no
        # subnormal numbers slow the additions down).
        self.exp_table = np.exp(self.table - self.centre[:, None])
        self.exp_table[self.exp_table < 1e-300] = 0.0
        groups, start, used = [], 0, 0.0
        for j, r in enumerate(radius):
            if used + r > self.LOG_BUDGET:
                groups.append(slice(start, j))
                start, used = j, 0.0
            used += r
        groups.append(slice(start, self.n_y))
        self.groups = groups

    @property
    def _low_shape(self):
        return self.table.shape  # sum over blocks of w / F, per unit and low state

    def _buffers(self, shape):
        return {"factors": np.empty(shape), "scale": np.empty(shape[0]), "ones": np.ones(shape[1])}

    def _log_weights(self, offset, buffers):
        factors, scale = buffers["factors"], buffers["scale"]
        np.negative(offset, out=scale)
        scale -= self.centre
        np.exp(scale, out=scale)  # e**(-o - c), one per unit
        scale[scale < 1e-300] = 0.0
        np.add(self.exp_table, scale[:, None], out=factors)
        log_w = np.log(np.multiply.reduce(factors[self.groups[0]], axis=0))
        for group in self.groups[1:]:
            log_w += np.log(np.multiply.reduce(factors[group], axis=0))
        log_w += offset.sum() + self.centre_sum
        return log_w

    def _weighted_means(self, w, w_total, low, buffers):
        # E[y_j | x] = sigmoid(u) = e**(t - c) / F = 1 - e**(-o - c) / F. The first
        # factor does not depend on the block, so the low-bit sums need only
        # sum_blocks w / F, contracted with e**(t - c) and the low bits at the end.
        factors = buffers["factors"]
        np.divide(w, factors, out=factors)
        low += factors
        # Row sums by BLAS (a third of the cost of np.add.reduce here). The difference
        # below is exact to about eps * w_total: a mean near 0 gets a small absolute
        # error (1e-15 after normalising), not a small relative one.
        return w_total - buffers["scale"] * (factors @ buffers["ones"])

    def _low_cross(self, low):
        return (self.exp_table * low) @ self.X_low


class _StableEnumeration(_Enumeration):
    """The stable path: one ``exp`` per entry (see :class:`_Enumeration`)."""

    _PRODUCT_BLOCK = 1000  # 2**1000 < 1.8e308: a product of 1000 factors in (1, 2] is finite

    def __init__(self, a_x, a_y, M, block_size, moments):
        super().__init__(a_x, a_y, M, block_size, moments)
        self.table_sum = self.table.sum(axis=0)
        self.ones_and_low = np.hstack([np.ones((self.X_low.shape[0], 1)), self.X_low])

    @property
    def _low_shape(self):
        return (self.n_y, self.low_bits)

    def _buffers(self, shape):
        buffers = {"pre": np.empty(shape), "work": np.empty(shape)}
        if self.moments:
            buffers["prob"] = np.empty(shape)
            buffers["negative"] = np.empty(shape, dtype=bool)
            buffers["weights"] = np.empty((shape[1], 1 + self.low_bits))
        return buffers

    def _log_weights(self, offset, buffers):
        pre, work = buffers["pre"], buffers["work"]
        np.add(self.table, offset[:, None], out=pre)
        np.abs(pre, out=work)
        sum_abs = np.add.reduce(work, axis=0)
        np.negative(work, out=work)
        np.exp(work, out=work)  # e = exp(-|u|) <= 1
        work += 1.0
        log_prod = np.zeros(pre.shape[1])
        for start in range(0, pre.shape[0], self._PRODUCT_BLOCK):
            log_prod += np.log(np.multiply.reduce(work[start:start + self._PRODUCT_BLOCK],
                                                  axis=0))
        return 0.5 * (self.table_sum + offset.sum() + sum_abs) + log_prod

    def _weighted_means(self, w, w_total, low, buffers):
        prob, negative, weights = buffers["prob"], buffers["negative"], buffers["weights"]
        # sigmoid(u) = 1 / (1 + e) for u >= 0, and 1 - 1 / (1 + e) for u < 0
        np.reciprocal(buffers["work"], out=prob)
        np.less(buffers["pre"], 0.0, out=negative)
        np.subtract(1.0, prob, out=prob, where=negative)
        # One product gives the weighted sum of E[y | x] over the block (first
        # column) and its products with the low bits (the rest): prob is read once.
        np.multiply(self.ones_and_low, w[:, None], out=weights)
        block = prob @ weights
        low += block[:, 1:]
        return block[:, 0]

    def _low_cross(self, low):
        return low


def _make_enumeration(a_x, a_y, M, block_size, moments, method):
    """The product path when the weights allow it (or `method` asks), else the stable one."""
    if method not in (None, "product", "stable"):
        raise ValueError(f"method must be None, 'product' or 'stable', got {method!r}")
    if method != "stable":
        enumeration = _ProductEnumeration(a_x, a_y, M, block_size, moments)
        if enumeration.feasible:
            return enumeration
        if method == "product":
            raise ValueError("method='product' cannot be used: the weights are too large "
                             "for a finite product of centred factors")
    return _StableEnumeration(a_x, a_y, M, block_size, moments)


def _enumerate(model, layer=None, moments=False, chunk_size=None, n_threads=None,
               method=None):
    r"""log Z and, optionally, the model moments, in one pass over the enumerated layer."""
    a_x, a_y, M, swapped = _layer_setup(model, layer)
    n_x, n_y = M.shape
    check_enumeration_size(
        n_x, "exact enumeration of the " + ("hidden" if swapped else "visible") + " layer")
    if n_threads is None:
        # Starting threads (and capping BLAS) costs milliseconds: small sums run in one.
        n_threads = _default_threads() if 2**n_x * n_y >= _THREADED_ELEMENTS else 1
    else:
        n_threads = check_positive_int(n_threads, "n_threads")
    if chunk_size is None:
        # Large blocks amortise the per-block Python work and let threads run in
        # parallel; small problems keep small blocks, which stay in cache.
        elements = min(_CHUNK_ELEMENTS, max(_MIN_CHUNK_ELEMENTS,
                                            2**n_x * n_y // (64 * n_threads)))
        chunk_size = max(1, elements // n_y)
    else:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    block_size = 2 ** min(n_x, chunk_size.bit_length() - 1)
    enumeration = _make_enumeration(a_x, a_y, M, block_size, moments, method)
    n_blocks = 2**enumeration.high_bits
    n_threads = min(n_threads, n_blocks)
    bounds = np.linspace(0, n_blocks, n_threads + 1).astype(int)
    if n_threads == 1:
        parts = [enumeration.run(0, n_blocks)]
    else:
        # Each thread's per-block matrix products are small: BLAS threads on top of
        # ours would only oversubscribe the cores (measured: twice as slow).
        with threadpool_limits(limits=1, user_api="blas"), \
                ThreadPoolExecutor(max_workers=n_threads) as pool:
            parts = list(pool.map(enumeration.run, bounds[:-1], bounds[1:]))
    acc = parts[0]
    for part in parts[1:]:
        acc.merge(part)
    log_z = acc.shift + np.log(acc.total)
    if not moments:
        return log_z, None
    s_x, s_y, s_xy = enumeration.moments_of(acc)
    if swapped:
        return log_z, Expectations(vh=s_xy.T.copy(), v=s_y, h=s_x)
    return log_z, Expectations(vh=s_xy, v=s_x, h=s_y)


def log_partition(model, *, layer=None, chunk_size=None, n_threads=None):
    r"""Exact :math:`\log Z`, enumerating one layer.

    With the hidden layer summed out in closed form,

    .. math:: \log Z = \log \sum_v \exp\Big(b^\top v + \sum_j
              \operatorname{softplus}(c_j + (v^\top W)_j)\Big),

    and symmetrically with the visible layer summed out.

    Parameters
    ----------
    model : RBM
    layer : {None, "visible", "hidden"}
        The layer to enumerate; ``None`` (default) takes the smaller one.
    chunk_size : int, optional
        States per block of work, rounded down to a power of two; by
        default a block holds between 2**14 and 2**20 numbers (128 KiB to
        8 MiB, growing with the enumeration), so memory is
        bounded by the block size and not by the number of states.
    n_threads : int, optional
        Threads that share the blocks; by default one per available core
        (one for small enumerations, below 2**22 states times units).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the enumerated layer has more than ``MAX_ENUMERATION_BITS`` units.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((3, 2)), b=np.zeros(3), c=np.zeros(2))
    >>> bool(abs(log_partition(model) - 5 * np.log(2)) < 1e-12)  # 2**5 joint states of energy 0
    True
    """
    check_model(model)
    return float(_enumerate(model, layer=layer, chunk_size=chunk_size, n_threads=n_threads)[0])


def log_prob(model, v):
    r"""Exact :math:`\log p(v) = -F(v) - \log Z` for each row of `v`.

    Parameters
    ----------
    model : RBM
    v : array_like of shape (n_visible,) or (n_samples, n_visible)

    Returns
    -------
    float or ndarray of shape (n_samples,)
    """
    check_model(model)
    return -model.free_energy(v) - log_partition(model)


def log_likelihood(model, data):
    r"""Mean log-likelihood :math:`\frac{1}{N}\sum_n \log p(v^{(n)})` of a data set.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.

    Returns
    -------
    float

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((2, 1)), b=np.zeros(2), c=np.zeros(1))
    >>> round(float(log_likelihood(model, [[0, 1], [1, 1]])), 6)  # uniform over 4 states
    -1.386294
    """
    check_model(model)
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    return float(np.mean(log_prob(model, data)))


def visible_distribution(model):
    r"""Exact :math:`p(v)` for every visible state, in the order of :func:`all_states`.

    Returns
    -------
    ndarray of shape (2**n_visible,)
    """
    check_model(model)
    check_enumeration_size(model.n_visible, "visible_distribution", limit=MAX_DENSE_BITS)
    return np.exp(log_prob(model, all_states(model.n_visible)))


def empirical_distribution(data):
    r"""The empirical distribution :math:`q(v) = \frac{1}{N}\sum_n [v = v^{(n)}]`.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones; ``n_visible`` at most ``MAX_DENSE_BITS``.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        Probabilities in the order of :func:`all_states`.

    Examples
    --------
    >>> empirical_distribution([[0, 1], [0, 1], [1, 1], [0, 0]]).tolist()
    [0.25, 0.5, 0.0, 0.25]
    """
    arr = as_float_array(data, "data")
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"data must have shape (n_samples, n_visible), got {arr.shape}")
    n_visible = arr.shape[1]
    check_enumeration_size(n_visible, "empirical_distribution", limit=MAX_DENSE_BITS)
    arr, _ = check_binary(arr, "data", n_visible, allow_1d=False)
    counts = np.bincount(state_index(arr), minlength=2**n_visible)
    return counts / arr.shape[0]


def _check_distribution(q, name, size):
    q = as_float_array(q, name)
    if q.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), one entry per visible state, "
                         f"got {q.shape}")
    if not np.all(np.isfinite(q)) or np.any(q < 0):
        raise ValueError(f"{name} must hold finite, non-negative probabilities")
    if abs(q.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, got {q.sum()!r}")
    return q


def entropy(q):
    r"""Shannon entropy :math:`H(q) = -\sum_v q(v) \log q(v)` in nats (with :math:`0 \log 0 = 0`).

    Examples
    --------
    >>> round(float(entropy([0.5, 0.5, 0.0, 0.0])), 6)
    0.693147
    """
    q = as_float_array(q, "q")
    q = _check_distribution(q, "q", q.size if q.ndim == 1 else -1)
    nz = q > 0
    return float(-np.sum(q[nz] * np.log(q[nz])))


def kl_divergence(q, model):
    r"""Exact :math:`\mathrm{KL}(q \,\|\, p) = \sum_v q(v) \log q(v) - \sum_v q(v) \log p(v)`.

    Parameters
    ----------
    q : array_like of shape (2**n_visible,)
        A distribution over all visible states, in the order of
        :func:`all_states` (for a data set, :func:`empirical_distribution`).
    model : RBM

    Returns
    -------
    float
        Non-negative; zero only when ``q`` equals the model's ``p(v)``.

    Notes
    -----
    The first sum is :math:`-H(q)` and does not depend on the model, so
    :math:`\mathrm{KL}(q\|p) = -H(q) - \langle \log p \rangle_q`: minimising
    it over the parameters maximises the mean log-likelihood.
    """
    check_model(model)
    check_enumeration_size(model.n_visible, "kl_divergence", limit=MAX_DENSE_BITS)
    q = _check_distribution(q, "q", 2**model.n_visible)
    nz = q > 0
    log_p = log_prob(model, all_states(model.n_visible)[nz])
    return float(np.sum(q[nz] * (np.log(q[nz]) - log_p)))


def data_expectations(model, data):
    r"""Moments under the data with the hidden units inferred: :math:`q(v)\,p(h \mid v)`.

    Uses :math:`p(h_j = 1 \mid v)` in place of :math:`h_j` (exact, as
    :math:`h_j` enters linearly).

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    Expectations
    """
    check_model(model)
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    P = model.prob_h_given_v(data)
    n = data.shape[0]
    return Expectations(vh=data.T @ P / n, v=data.mean(axis=0), h=P.mean(axis=0))


def model_expectations(model, *, layer=None, chunk_size=None, n_threads=None):
    r"""Exact moments under the model: :math:`\langle v h^\top\rangle`, :math:`\langle v\rangle`, :math:`\langle h\rangle`.

    One chunked pass over the smaller layer, with the other layer's
    conditional means in closed form.

    Parameters
    ----------
    model : RBM
    layer, chunk_size, n_threads
        As in :func:`log_partition`.

    Returns
    -------
    Expectations
    """
    check_model(model)
    return _enumerate(model, layer=layer, moments=True, chunk_size=chunk_size,
                      n_threads=n_threads)[1]


def gradient(model, data, *, layer=None, chunk_size=None, n_threads=None):
    r"""Exact gradient of the mean log-likelihood: data term minus model term.

    .. math::
        \frac{\partial \bar\ell}{\partial W} = \langle v h^\top\rangle_\text{data}
        - \langle v h^\top\rangle_\text{model},\quad
        \frac{\partial \bar\ell}{\partial b} = \langle v\rangle_\text{data} - \langle v\rangle_\text{model},\quad
        \frac{\partial \bar\ell}{\partial c} = \langle h\rangle_\text{data} - \langle h\rangle_\text{model}.

    This is the ascent direction: a small step along it raises
    :func:`log_likelihood`.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
    layer, chunk_size, n_threads
        As in :func:`log_partition`.

    Returns
    -------
    Gradient
        Fields ``W``, ``b``, ``c`` shaped like the parameters.
    """
    pos = data_expectations(model, data)
    neg = model_expectations(model, layer=layer, chunk_size=chunk_size, n_threads=n_threads)
    return Gradient(W=pos.vh - neg.vh, b=pos.v - neg.v, c=pos.h - neg.h)


# The exact CD-k expectation lives in rbm.transition (it enumerates both layers); it is
# offered here too because it is an exact quantity. Imported last: it builds on this module.
from rbm.transition import cd_expected_gradient, gibbs_transition_matrix  # noqa: E402
