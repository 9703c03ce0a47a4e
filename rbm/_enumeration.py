r"""The engine behind :mod:`rbm.exact`: sums over every state of one layer.

A model is written as an enumerated layer ``x`` (``n_x`` units) and a summed
layer ``y`` (``n_y`` units) with energy :math:`E = -a_x^\top x - a_y^\top y -
x^\top M y`, so that :math:`\log \sum_y e^{-E} = a_x^\top x + \sum_j
\operatorname{softplus}(u_j)` with :math:`u = a_y + M^\top x`.  This module
sums that over all :math:`2^{n_x}` states of ``x``, and optionally the
moments :math:`\langle x\rangle`, :math:`\langle y\rangle`,
:math:`\langle x y^\top\rangle`.

How the work is laid out, step by step:

1. **Blocks.** State ``k`` is ``(high, low)`` in binary.  The pre-activations
   of the ``2**low_bits`` states of one block are a table ``t`` of the low
   bits (computed once) plus a vector ``o`` of the high bits, so blocks share
   all per-state work but one cheap pass.  The block size depends on the
   problem's size alone (:func:`block_size`).
2. **Segments.** Consecutive blocks are grouped into at most ``SEGMENTS``
   segments, again fixed by the problem alone (:func:`segments`).  A segment
   is summed by :meth:`Enumeration.run` into an :class:`Accumulator`.
3. **Threads.** Threads only share out whole segments; the segments' sums are
   combined in segment order (:func:`run_segments`), and BLAS runs on one
   thread (:func:`one_blas_thread`; OpenBLAS splits some products differently
   on more threads).  The result is therefore the same to the last bit
   whatever the number of threads or cores.
4. **Stopping.** Workers check a cancel flag between blocks, and the main
   thread waits with a timeout, so Ctrl-C (or a notebook interrupt) stops an
   enumeration within one block's time (milliseconds) and leaves no thread
   running.
5. **Memory.** A block holds at most ``CHUNK_ELEMENTS`` numbers (8 MiB);
   each running segment holds a few such arrays, and at most ``2 * n_threads``
   segments are in flight: about ``(16 + 48 n_threads)`` MiB in all.
6. **Executors.** Instead of local threads, any
   :class:`concurrent.futures.Executor` (a process pool, or a Dask cluster's
   ``Client.get_executor()``) can run the segments (:func:`run_on_executor`):
   each segment is one task, :func:`segment_sums`, which rebuilds the
   enumeration from a small description of the problem and returns its
   :class:`Accumulator`; the main process combines them in segment order, so
   the result is again the same to the last bit.  All segments are submitted
   at once, so at most ``SEGMENTS`` results wait in the caller: a few numbers
   each for log Z, and with the moments about one block's table each (at most
   ``CHUNK_ELEMENTS`` numbers, 8 MiB), so at most 128 MiB in all.

Two ways to sum the softplus terms of a block, both exact to rounding:

* **product** (:class:`ProductEnumeration`, used whenever the weights allow
  it): :math:`1 + e^{t + o} = e^{o + c}\,(e^{t - c} + e^{-o - c})` with a
  per-unit centre :math:`c`, and :math:`e^{t - c}` is computed once for the
  whole enumeration.  A block then costs one addition and one multiplication
  per entry and one ``log`` per state and group of units, and **no** ``exp``
  per entry; the conditional means come from one division per entry.
* **stable** (:class:`StableEnumeration`, for weights so large that a centred
  factor could overflow): :math:`\sum_j \operatorname{softplus}(u_j) =
  \tfrac12\sum_j (u_j + |u_j|) + \log \prod_j (1 + e^{-|u_j|})`: one ``exp``
  per entry, and products of at most 1000 factors in (1, 2], which cannot
  overflow.
"""

import contextlib
import functools
import itertools
import os
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from concurrent.futures import wait as wait_futures

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_limits

from rbm import _compiled
from rbm._validation import check_positive_int

# Entries (states times units of the other layer) in one block of work: at most 8 MiB of
# float64 for large enumerations, at least 128 KiB; sizes that measured fastest here
# (benchmarks/bench_exact.py).
CHUNK_ELEMENTS = 2**20
MIN_CHUNK_ELEMENTS = 2**14
# Enumerations smaller than this (states times units of the other layer) are one segment,
# summed in one thread by default.
THREADED_ELEMENTS = 2**22
# Larger ones are split into this many segments (or one per block, if fewer): enough for
# an even share between a few threads, few enough that combining them costs little.
SEGMENTS = 16
# The running sums are kept relative to a shift that follows the largest log-weight only
# once a block exceeds it by this much: weights up to e**300 (1e130) sum safely over any
# enumeration, and rescaling the sums (megabytes each) at every new maximum cost 20% of a
# single-threaded gradient at 784 x 20.
_HEADROOM = 300.0
# Enumerations smaller than this hand BLAS only arrays that OpenBLAS multiplies on one thread
# anyway (it threads a matrix-vector product from 9216 entries): they skip limiting it to
# one thread, which costs about 50 us a call (measured: 15% of log Z at 9 x 16).
SERIAL_BLAS_ELEMENTS = 2**13
_LOG2 = float(np.log(2.0))
# How often the waiting main thread wakes up to let a signal handler run (seconds).
_POLL = 0.05


def states(start, stop, n):
    """Rows ``start .. stop - 1`` of all binary vectors of length `n`, first unit most significant.

    No checks: the callers bound the sizes.
    """
    idx = np.arange(start, stop, dtype=np.int64)
    shifts = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ((idx[:, None] >> shifts) & 1).astype(float)


def layer_setup(model, layer):
    r"""Express the model as (enumerated layer x, summed layer y).

    Returns ``(a_x, a_y, M, swapped)`` with
    :math:`E = -a_x^\top x - a_y^\top y - x^\top M y`; ``swapped`` is
    True when ``x`` is the hidden layer.  ``layer=None`` takes the smaller one.
    """
    if layer is None:
        layer = "hidden" if model.n_hidden <= model.n_visible else "visible"
    if layer == "visible":
        return model.b, model.c, model.W, False
    if layer == "hidden":
        return model.c, model.b, model.W.T, True
    raise ValueError(f"layer must be None, 'visible' or 'hidden', got {layer!r}")


def default_threads():
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def block_size(n_x, n_y, chunk_size=None):
    """States per block, a power of two that depends on the problem (or `chunk_size`) alone.

    Large blocks amortise the per-block Python work; small problems keep small
    blocks, which stay in cache.
    """
    if chunk_size is None:
        elements = min(CHUNK_ELEMENTS, max(MIN_CHUNK_ELEMENTS, 2**n_x * n_y // 64))
        chunk_size = max(1, elements // n_y)
    else:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    return 2 ** min(n_x, chunk_size.bit_length() - 1)


def segments(n_blocks, n_elements):
    """Fixed ranges of blocks ``[(start, stop), ...]``, the unit of work and of summation order."""
    n_segments = 1 if n_elements < THREADED_ELEMENTS else min(n_blocks, SEGMENTS)
    bounds = np.linspace(0, n_blocks, n_segments + 1).astype(int)
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


class _ShiftedSums:
    """A total relative to a shift, and arrays of sums: rescaling and merging (both
    accumulators).  ``_shifted()`` are the arrays scaled with the total, ``_arrays()``
    those added when two accumulators merge."""

    def _shifted(self):
        return ()

    def rescale_to(self, new_shift):
        """Express the total (and the shifted sums) relative to ``new_shift`` (>= the current)."""
        factor = np.exp(self.shift - new_shift) if np.isfinite(self.shift) else 0.0
        self.total *= factor
        for arr in self._shifted():
            arr *= factor
        self.shift = new_shift

    def merge(self, other):
        """Add `other`'s sums to these (both are rescaled to the larger shift); returns self."""
        new_shift = max(self.shift, other.shift)
        self.rescale_to(new_shift)
        other.rescale_to(new_shift)
        self.total += other.total
        for mine, theirs in zip(self._arrays(), other._arrays()):
            mine += theirs
        return self


class Accumulator(_ShiftedSums):
    r"""Running sums over enumerated states, kept relative to the largest log-weight.

    Holds :math:`S = \sum_k e^{\ell_k - m}`, where the shift :math:`m` is within
    ``_HEADROOM`` of the largest log-weight seen so far, and for moments the weighted sums for
    :math:`\langle x\rangle`, :math:`\langle y\rangle` and
    :math:`\langle x y^\top\rangle`, all scaled by :math:`e^{-m}`, so
    nothing overflows whatever the weights.  Every block of states shares
    its low bits, so the sum of weights is kept per low state (``w_low``)
    and contracted with the low bits once, at the end; the sums behind the
    low-bit part of :math:`\langle x y^\top\rangle` are kept in ``low``,
    whose shape the enumeration chooses.
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

    _shifted = _arrays


class Enumeration:
    """Exact sums over all states of the layer ``x``, in blocks (see the module docstring).

    Subclasses provide the two steps that differ between the paths:
    ``log_weights(offset, work)`` returns the log-weights of a block's states
    and the per-block arrays ``block`` that ``weighted_means(w, w_total,
    block, low)`` needs for the moments; ``work`` holds that path's scratch
    arrays, made by ``work_arrays()`` once per segment.
    """

    def __init__(self, a_x, a_y, M, block_size, moments):
        self.n_x, self.n_y = M.shape
        self.moments = moments
        self.low_bits = int(np.log2(block_size))
        self.high_bits = self.n_x - self.low_bits
        low = slice(self.high_bits, self.n_x)
        X_low = states(0, 2**self.low_bits, self.low_bits)
        self.X_low = X_low
        # Units by states: reductions over units run along contiguous rows.
        self.table = np.ascontiguousarray((X_low @ M[low]).T + a_y[:, None])
        self.lin_low = X_low @ a_x[low]
        self.M_high = M[:self.high_bits]
        self.a_x_high = a_x[:self.high_bits]
        self._scratch = threading.local()

    @property
    def n_blocks(self):
        return 2**self.high_bits

    def run(self, high_start, high_stop, cancel=None):
        """Sum the blocks ``high_start .. high_stop - 1`` into a new :class:`Accumulator`.

        Returns None, having stopped early, when `cancel` (a :class:`threading.Event`)
        is set.
        """
        acc = Accumulator(self.high_bits, self.n_y, self.table.shape[1], self.low_shape,
                          self.moments)
        # Scratch arrays are kept per thread: made afresh for every segment, their pages
        # would be faulted in again each time (measured: 15% of a gradient at 784 x 20).
        work = getattr(self._scratch, "work", None)
        if work is None:
            work = self._scratch.work = self.work_arrays()
        for high in range(high_start, high_stop):
            if cancel is not None and cancel.is_set():
                return None
            x_high = states(high, high + 1, self.high_bits)[0]
            offset = x_high @ self.M_high
            log_w, block = self.log_weights(offset, work)
            log_w += self.lin_low + x_high @ self.a_x_high
            block_max = float(log_w.max())
            if block_max > acc.shift + _HEADROOM or not np.isfinite(acc.shift):
                acc.rescale_to(block_max)
            w = np.exp(log_w - acc.shift)
            w_total = w.sum()
            acc.total += w_total
            if self.moments:
                # sum over the block of w E[y | x]; the low-bit sums go into acc.low
                s_y = self.weighted_means(w, w_total, block, acc.low)
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
        s_xy = np.concatenate([acc.s_xy_high, self.low_cross(acc.low).T]) / acc.total
        return tuple(np.clip(m, 0.0, 1.0, out=m) for m in (s_x, s_y, s_xy))


class ProductEnumeration(Enumeration):
    r"""The product path: no ``exp`` per entry (see the module docstring).

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
        self.centre = self.centres(m_lo, m_hi)
        radius = np.maximum(np.abs(m_lo - self.centre), np.abs(m_hi + log2 - self.centre))
        self.centre_sum = float(self.centre.sum())
        # exp(t - c), computed once; terms below 1e-300 are flushed to zero (the other
        # term of the factor is at least e**-600, so nothing measurable is lost, and no
        # subnormal numbers slow the additions down).
        self.exp_table = np.exp(self.table - self.centre[:, None])
        self.exp_table[self.exp_table < 1e-300] = 0.0
        self.groups = self.group_units(radius)

    @classmethod
    def centres(cls, m_lo, m_hi):
        """Per-unit centres: the midpoint, or a point nearer 0 with at most twice its radius."""
        log2 = np.log(2.0)
        centre = 0.5 * (m_lo + m_hi)
        allowed = np.minimum(m_hi - m_lo + 2 * log2, cls.LOG_BUDGET)
        towards_zero = np.clip(0.0, m_hi + log2 - allowed, m_lo + allowed)
        return np.where(np.abs(centre) <= cls._NEAR_ZERO, centre, towards_zero)

    @classmethod
    def group_units(cls, radius):
        """Consecutive units in slices whose radii sum to at most ``LOG_BUDGET``."""
        groups, start, used = [], 0, 0.0
        for j, r in enumerate(radius):
            if used + r > cls.LOG_BUDGET:
                groups.append(slice(start, j))
                start, used = j, 0.0
            used += r
        groups.append(slice(start, len(radius)))
        return groups

    @property
    def low_shape(self):
        return self.table.shape  # sum over blocks of w / F, per unit and low state

    def work_arrays(self):
        shape = self.table.shape
        return (np.empty(shape), np.empty(shape[0]), np.ones(shape[1]))

    def log_weights(self, offset, work):
        """Log-weights of the block; ``block = (F, e**(-o - c), ones)`` for the moments."""
        factors, scale, _ = work
        np.negative(offset, out=scale)
        scale -= self.centre
        np.exp(scale, out=scale)  # e**(-o - c), one per unit
        scale[scale < 1e-300] = 0.0
        np.add(self.exp_table, scale[:, None], out=factors)
        log_w = np.log(np.multiply.reduce(factors[self.groups[0]], axis=0))
        for group in self.groups[1:]:
            log_w += np.log(np.multiply.reduce(factors[group], axis=0))
        log_w += offset.sum() + self.centre_sum
        return log_w, work

    def weighted_means(self, w, w_total, block, low):
        # E[y_j | x] = sigmoid(u) = e**(t - c) / F = 1 - e**(-o - c) / F. The first
        # factor does not depend on the block, so the low-bit sums need only
        # sum_blocks w / F, contracted with e**(t - c) and the low bits at the end.
        factors, scale, ones = block
        np.divide(w, factors, out=factors)
        low += factors
        # Row sums by BLAS (a third of the cost of np.add.reduce here). The difference
        # below is exact to about eps * w_total: a mean near 0 gets a small absolute
        # error (1e-15 after normalising), not a small relative one.
        return w_total - scale * (factors @ ones)

    def low_cross(self, low):
        return (self.exp_table * low) @ self.X_low


class StableEnumeration(Enumeration):
    """The stable path: one ``exp`` per entry (see the module docstring)."""

    _PRODUCT_BLOCK = 1000  # 2**1000 < 1.8e308: a product of 1000 factors in (1, 2] is finite

    def __init__(self, a_x, a_y, M, block_size, moments):
        super().__init__(a_x, a_y, M, block_size, moments)
        self.table_sum = self.table.sum(axis=0)
        self.ones_and_low = np.hstack([np.ones((self.X_low.shape[0], 1)), self.X_low])

    @property
    def low_shape(self):
        return (self.n_y, self.low_bits)

    def work_arrays(self):
        shape = self.table.shape
        if not self.moments:
            return (np.empty(shape), np.empty(shape))
        return (np.empty(shape), np.empty(shape), np.empty(shape), np.empty(shape, dtype=bool),
                np.empty((shape[1], 1 + self.low_bits)))

    def log_weights(self, offset, work):
        """Log-weights of the block; ``block = work``, with ``u`` and ``1 + e**-|u|`` first."""
        pre, factors = work[:2]
        np.add(self.table, offset[:, None], out=pre)
        np.abs(pre, out=factors)
        sum_abs = np.add.reduce(factors, axis=0)
        np.negative(factors, out=factors)
        np.exp(factors, out=factors)  # e = exp(-|u|) <= 1
        factors += 1.0
        log_prod = np.zeros(pre.shape[1])
        for start in range(0, pre.shape[0], self._PRODUCT_BLOCK):
            log_prod += np.log(np.multiply.reduce(factors[start:start + self._PRODUCT_BLOCK],
                                                  axis=0))
        return 0.5 * (self.table_sum + offset.sum() + sum_abs) + log_prod, work

    def weighted_means(self, w, w_total, block, low):
        pre, factors, prob, negative, weights = block
        # sigmoid(u) = 1 / (1 + e) for u >= 0, and 1 - 1 / (1 + e) for u < 0
        np.reciprocal(factors, out=prob)
        np.less(pre, 0.0, out=negative)
        np.subtract(1.0, prob, out=prob, where=negative)
        # One product gives the weighted sum of E[y | x] over the block (first
        # column) and its products with the low bits (the rest): prob is read once.
        np.multiply(self.ones_and_low, w[:, None], out=weights)
        block_sums = prob @ weights
        low += block_sums[:, 1:]
        return block_sums[:, 0]

    def low_cross(self, low):
        return low


class CompiledProductEnumeration(ProductEnumeration):
    """The product path with its two inner loops compiled (:mod:`rbm._compiled`).

    The same centres, groups and sums as :class:`ProductEnumeration`, but the
    blocks are taken ``BATCH`` at a time: the compiled loops read each row of
    the table once for the whole batch, form the factors on the fly (they are
    never stored), and the per-block Python work is done once per batch.  A
    running segment holds a few arrays of ``BATCH`` times the block's states or
    units (under 100 KiB at 784 units), not a block-sized table.  The batches
    start at the segment's first block, so, like the segments, they depend on
    the problem alone; the cancel flag is checked between batches (about a
    millisecond apart).
    """

    BATCH = 8

    def __init__(self, a_x, a_y, M, block_size, moments):
        super().__init__(a_x, a_y, M, block_size, moments)
        if self.feasible:
            # the groups' first units and the last one's end, for the compiled loop
            self.bounds = np.array([g.start for g in self.groups] + [self.groups[-1].stop],
                                   dtype=np.int64)

    def run(self, high_start, high_stop, cancel=None):
        """Sum the blocks ``high_start .. high_stop - 1``, as :meth:`Enumeration.run` does."""
        acc = Accumulator(self.high_bits, self.n_y, self.table.shape[1], self.low_shape,
                          self.moments)
        n_states = self.table.shape[1]
        for first in range(high_start, high_stop, self.BATCH):
            if cancel is not None and cancel.is_set():
                return None
            x_high = states(first, min(first + self.BATCH, high_stop), self.high_bits)
            offsets = x_high @ self.M_high                 # (batch, n_y)
            scales = np.exp(-offsets - self.centre)        # e**(-o - c), per block and unit
            scales[scales < 1e-300] = 0.0
            products = np.empty((x_high.shape[0], n_states))
            exponents = np.empty((x_high.shape[0], n_states), dtype=np.int64)
            _compiled.batch_products(self.exp_table, scales, self.bounds, products, exponents)
            log_w = np.log(products)
            log_w += exponents * _LOG2
            log_w += (offsets.sum(axis=1) + self.centre_sum + x_high @ self.a_x_high)[:, None]
            log_w += self.lin_low
            batch_max = float(log_w.max())
            if batch_max > acc.shift + _HEADROOM or not np.isfinite(acc.shift):
                acc.rescale_to(batch_max)
            w = np.exp(log_w - acc.shift)
            w_totals = w.sum(axis=1)
            acc.total += w_totals.sum()
            if self.moments:
                # E[y_j | x] = 1 - e**(-o - c) / F: one division per entry, in the loop
                row_sums = np.empty((x_high.shape[0], self.n_y))
                _compiled.batch_reciprocals(self.exp_table, scales, w, acc.low, row_sums)
                s_y = w_totals[:, None] - scales * row_sums
                acc.s_y += s_y.sum(axis=0)
                acc.w_low += w.sum(axis=0)
                acc.s_x_high += w_totals @ x_high
                acc.s_xy_high += x_high.T @ s_y
        return acc


ENGINES = (None, "numpy", "numba")


def check_engine(engine):
    """`engine` as a choice of class for the product path; a clear error if it cannot run."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be None, 'numpy' or 'numba', got {engine!r}")
    if engine == "numba" and not _compiled.AVAILABLE:
        raise ValueError("engine='numba' needs the optional dependency numba, which is not "
                         "installed (pip install 'rbm-book[fast]'); engine=None falls back "
                         "to numpy")
    compiled = engine == "numba" or (engine is None and _compiled.AVAILABLE)
    return CompiledProductEnumeration if compiled else ProductEnumeration


def make_enumeration(a_x, a_y, M, block_size, moments, method=None, engine=None):
    """The product path when the weights allow it (or `method` asks), else the stable one.

    `engine` chooses how the product path runs: None (default) compiled when
    numba is installed and with numpy otherwise, or ``"numpy"``/``"numba"``.
    The stable path always runs with numpy.
    """
    if method not in (None, "product", "stable"):
        raise ValueError(f"method must be None, 'product' or 'stable', got {method!r}")
    product = check_engine(engine)
    if method != "stable":
        enumeration = product(a_x, a_y, M, block_size, moments)
        if enumeration.feasible:
            return enumeration
        if method == "product":
            raise ValueError("method='product' cannot be used: the weights are too large "
                             "for a finite product of centred factors")
    return StableEnumeration(a_x, a_y, M, block_size, moments)


def _result(future):
    """The future's result, waiting in short slices so that Ctrl-C is seen at once."""
    while not wait_futures([future], timeout=_POLL).done:
        pass
    return future.result()


_POOL_NUMBERS = itertools.count()


def join_when_started(thread, patience=1.0):
    """Join `thread`, also one whose ``start`` was interrupted before it began to run.

    Such a thread starts at once if its OS thread was created; one interrupted before
    that never runs anything, and is left after `patience` seconds.
    """
    give_up = time.monotonic() + patience
    while True:
        try:
            thread.join()
            return
        except RuntimeError:  # not started yet
            if time.monotonic() > give_up:
                return
            time.sleep(0.001)


def run_segments(enumeration, ranges, n_threads):
    """Sum `ranges` of blocks and combine them in order; threads only share out the ranges.

    At most ``2 * n_threads`` ranges are in flight, so memory stays bounded.  On
    any exception in the caller's thread (KeyboardInterrupt included) the workers
    are told to stop, and are joined before it propagates.
    """
    if n_threads == 1 or len(ranges) == 1:
        acc = enumeration.run(*ranges[0])
        for start, stop in ranges[1:]:
            acc.merge(enumeration.run(start, stop))
        return acc
    cancel = threading.Event()
    todo = iter(ranges)
    in_flight = deque()
    # Each thread's per-block matrix products are small: BLAS threads on top of
    # ours would only oversubscribe the cores (measured: twice as slow).
    with threadpool_limits(limits=1, user_api="blas"):
        # Named, so that every worker can be joined: an interrupt that lands inside
        # ``submit``, after a worker has started but before the pool has recorded it,
        # leaves a thread that ``shutdown`` does not wait for (seen: 1 in 24 interrupts
        # sent in the first 20 ms).
        prefix = f"rbm-enumeration-{next(_POOL_NUMBERS)}"
        pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix=prefix)
        try:
            for start, stop in todo:
                in_flight.append(pool.submit(enumeration.run, start, stop, cancel))
                if len(in_flight) == 2 * n_threads:
                    break
            acc = None
            while in_flight:
                part = _result(in_flight.popleft())
                acc = part if acc is None else acc.merge(part)
                for start, stop in todo:
                    in_flight.append(pool.submit(enumeration.run, start, stop, cancel))
                    break
        except BaseException:
            cancel.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            for thread in threading.enumerate():
                if thread.name.startswith(prefix + "_"):
                    join_when_started(thread)
    return acc


@functools.cache
def _blas_controller():
    # Finding the loaded BLAS libraries takes about 0.5 ms; limiting them afterwards, 20 us.
    return ThreadpoolController()


def one_blas_thread(n_elements=None):
    """A context in which BLAS runs on one thread (for an enumeration of `n_elements`).

    Every enumeration runs its matrix products so, wherever it runs: OpenBLAS
    splits some products (a long inner dimension, as in the moments' final
    contraction) differently on more threads, which changes the last bits of
    the result with the number of cores.
    """
    if n_elements is not None and n_elements < SERIAL_BLAS_ELEMENTS:
        return contextlib.nullcontext()
    return _blas_controller().limit(limits=1, user_api="blas")


def segment_sums(problem, high_start, high_stop):
    """The :class:`Accumulator` of blocks ``high_start .. high_stop - 1``, from scratch.

    The task an executor runs, in any process: `problem` is ``(a_x, a_y, M,
    block_size, moments, method, engine)`` with the method (``"product"`` or
    ``"stable"``) and the engine (``"numpy"`` or ``"numba"``) already chosen,
    so the worker builds the very enumeration the caller built (a worker
    without numba refuses a compiled task with a clear error).  BLAS is held to one thread, as in :func:`run_segments`:
    a worker's processes share the machine's cores.
    """
    with one_blas_thread():
        if isinstance(problem, LayerEnumeration):  # sent as it is: layers and weights
            return problem.run(high_start, high_stop)
        return make_enumeration(*problem).run(high_start, high_stop)


def check_executor(executor, n_threads):
    """Require an object with a callable ``submit``, and no `n_threads` beside it."""
    if not callable(getattr(executor, "submit", None)):
        raise TypeError("executor must have a callable submit method, as a "
                        f"concurrent.futures.Executor has; got {type(executor).__name__}")
    if n_threads is not None:
        raise ValueError("n_threads cannot be given with executor: the executor's workers "
                         "run the work; pass one or the other")


def _outcome(future):
    """The future's result, waiting in short slices so that Ctrl-C is seen at once.

    Only ``result(timeout)`` and ``done()`` are used, so any executor's futures
    will do.  A timeout of the wait is told from a task that itself raised
    TimeoutError by asking whether the future is done.
    """
    while True:
        try:
            return future.result(timeout=_POLL)
        except FutureTimeoutError:
            if future.done():
                return future.result()


def run_on_executor(problem, ranges, executor):
    """Sum `ranges` of blocks as tasks of `executor`, and combine them in order.

    Every range is submitted at once (at most ``SEGMENTS``), so the executor
    may run them all in parallel (each result holds a few numbers, and with
    the moments about one block's table); their results are merged in the
    order of `ranges` as they are needed, whatever order they finish in.  A
    task that fails, or that the executor refuses, raises RuntimeError naming
    its blocks.  On any exception in the caller's thread (KeyboardInterrupt
    included) every future not yet used is cancelled before it propagates; the
    executor itself is left running.  A task already running elsewhere cannot
    be stopped (Dask cannot interrupt one): it finishes its segment in the
    background, and its result is discarded.
    """
    pending = deque()
    try:
        for start, stop in ranges:
            try:
                future = executor.submit(segment_sums, problem, start, stop)
            except Exception as error:  # a broken pool or a closed client refuses at once
                raise RuntimeError(f"the executor refused the task for blocks {start} to "
                                   f"{stop - 1}: {error!r}") from error
            pending.append((future, start, stop))
        acc = None
        while pending:
            future, start, stop = pending[0]
            try:
                part = _outcome(future)
            except Exception as error:
                raise RuntimeError(f"the executor's task for blocks {start} to {stop - 1} "
                                   f"failed: {error!r}") from error
            pending.popleft()  # its result is merged below; the future is no longer needed
            acc = part if acc is None else acc.merge(part)
    except BaseException:
        for future, _, _ in pending:
            future.cancel()
        raise
    return acc


def resolve_threads(n_threads, executor, n_elements):
    """The number of threads for a sum of `n_elements` numbers (unchanged with an executor).

    With an `executor`, `n_threads` must be None (checked) and is returned as is;
    ``n_threads=None`` picks :func:`default_threads` for large sums and one thread
    for small ones (starting threads and capping BLAS costs milliseconds).
    """
    if executor is not None:
        check_executor(executor, n_threads)
        return n_threads
    if n_threads is None:
        return default_threads() if n_elements >= THREADED_ELEMENTS else 1
    return check_positive_int(n_threads, "n_threads")


def enumerate_layer(a_x, a_y, M, *, moments=False, chunk_size=None, n_threads=None,
                    method=None, engine=None, executor=None):
    r""":math:`\log \sum_x \sum_y e^{-E}` and, with `moments`, ``(<x>, <y>, <x y^T>)``.

    The block layout and the order of summation depend on the problem (and
    `chunk_size`) only, never on `n_threads` or on `executor`.
    """
    n_x, n_y = M.shape
    n_elements = 2**n_x * n_y
    n_threads = resolve_threads(n_threads, executor, n_elements)
    size = block_size(n_x, n_y, chunk_size)
    with one_blas_thread(None if executor is not None else n_elements):
        enumeration = make_enumeration(a_x, a_y, M, size, moments, method, engine)
        ranges = segments(enumeration.n_blocks, n_elements)
        if executor is None:
            acc = run_segments(enumeration, ranges, min(n_threads, len(ranges)))
        else:
            # the worker builds the very enumeration built here: same path, same engine
            chosen = "product" if isinstance(enumeration, ProductEnumeration) else "stable"
            compiled = "numba" if isinstance(enumeration, CompiledProductEnumeration) else "numpy"
            acc = run_on_executor((a_x, a_y, M, size, moments, chosen, compiled), ranges,
                                  executor)
        log_z = acc.shift + np.log(acc.total)
        return log_z, (enumeration.moments_of(acc) if moments else None)


# -- any discrete layer against any other layer -----------------------------------------------

class LayerAccumulator(_ShiftedSums):
    r"""Running sums of :class:`LayerEnumeration`.

    For :math:`\log Z` (no `shapes`): :math:`\sum_k e^{\ell_k - m}` relative to the shift
    :math:`m`, the largest log-weight seen so far, so nothing overflows whatever the
    weights.  For the moments (`shapes`, second pass, :math:`\log Z` known): the sums of
    named arrays weighted by :math:`p(x) = e^{\ell - \log Z} \le 1`, which need no shift.
    """

    def __init__(self, shapes=None):
        self.shift = -np.inf
        self.total = 0.0
        self.sums = {name: np.zeros(shape) for name, shape in (shapes or {}).items()}

    def _arrays(self):
        return tuple(self.sums.values())


class LayerEnumeration:
    r"""Exact sums over every state of a discrete layer ``x``, the other layer ``y`` summed or
    integrated in closed form through its log-normaliser.

    The log-weight of a state is :math:`\ell = -E_x(x) + A_y(s_x(x) M)`.  Without
    `log_z` a pass sums :math:`e^{\ell}` (for :math:`\log Z`); given `log_z` (a second
    pass) it sums, weighted by :math:`p(x) = e^{\ell - \log Z}`, the statistics ``cross``
    (:math:`s_x s_y^\top`, flattened), ``x`` and ``y`` (the statistics' means) and the
    parameter gradients of both layers (``x:name``: the potential gradient of ``x``;
    ``y:name``: the normaliser gradient of ``y``).  States are taken in blocks of `rows`,
    block ``i`` holding states ``i * rows .. (i + 1) * rows - 1``; like
    :class:`Enumeration` it runs a range of blocks at a time (:meth:`run`), so the
    engine's threads, segments, Ctrl-C and executors serve it unchanged.  Picklable: an
    executor is sent the object itself.
    """

    def __init__(self, x, y, M, rows, log_z=None):
        self.x, self.y, self.M = x, y, M
        self.log_z = log_z
        self.n_states = x.n_states ** x.n_units
        self.rows = rows

    @property
    def n_blocks(self):
        return -(-self.n_states // self.rows)

    def _shapes(self):
        if self.log_z is None:
            return {}
        size_x, size_y = self.M.shape
        shapes = {"cross": (size_x, size_y), "x": (size_x,), "y": (size_y,)}
        shapes.update({"x:" + k: v.shape for k, v in self.x.parameters().items()})
        shapes.update({"y:" + k: v.shape for k, v in self.y.parameters().items()})
        return shapes

    def run(self, high_start, high_stop, cancel=None):
        """Sum the blocks ``high_start .. high_stop - 1`` into a new :class:`LayerAccumulator`.

        Returns None, having stopped early, when `cancel` is set.
        """
        acc = LayerAccumulator(self._shapes())
        x, y, M = self.x, self.y, self.M
        for block in range(high_start, high_stop):
            if cancel is not None and cancel.is_set():
                return None
            start = block * self.rows
            X = x.states(start, min(start + self.rows, self.n_states))
            n = X.shape[0]
            S = x.statistic(X).reshape(n, -1)
            U = (S @ M).reshape((n,) + y.shape)
            log_w = -x.energy(X) + y.log_normaliser(U)
            if self.log_z is None:
                top = float(log_w.max())
                if top > acc.shift:
                    acc.rescale_to(top)
                acc.total += float(np.exp(log_w - acc.shift).sum())
                continue
            p = np.exp(log_w - self.log_z)
            sums = acc.sums
            SY = y.mean_statistic(U).reshape(n, -1)
            sums["cross"] += (S * p[:, None]).T @ SY
            sums["x"] += p @ S
            sums["y"] += p @ SY
            ux = (SY @ M.T).reshape((n,) + x.shape)
            for k, g in x.potential_gradient(X, ux).items():
                sums["x:" + k] += (p @ g.reshape(n, -1)).reshape(sums["x:" + k].shape)
            for k, g in y.normaliser_gradient(U).items():
                sums["y:" + k] += (p @ g.reshape(n, -1)).reshape(sums["y:" + k].shape)
        return acc


def enumerate_layers(x, y, M, *, moments=False, chunk_size=None, n_threads=None,
                     executor=None):
    r""":math:`\log \sum_x \int_y e^{-E}` and, with `moments`, the normalised sums of
    :class:`LayerEnumeration` (a dict, from a second pass), for any discrete layer ``x``.

    Blocks hold about ``CHUNK_ELEMENTS`` numbers (or `chunk_size` states); the
    segments, threads and executor are those of :func:`enumerate_layer`, so
    the result is the same to the last bit whatever runs it.
    """
    size_x, size_y = M.shape
    if chunk_size is None:
        rows = max(1, CHUNK_ELEMENTS // (size_x + size_y))
    else:
        rows = check_positive_int(chunk_size, "chunk_size")
    enumeration = LayerEnumeration(x, y, M, rows)
    n_elements = enumeration.n_states * (size_x + size_y)
    n_threads = resolve_threads(n_threads, executor, n_elements)

    def run(enumeration):
        ranges = segments(enumeration.n_blocks, n_elements)
        if executor is None:
            return run_segments(enumeration, ranges, min(n_threads, len(ranges)))
        return run_on_executor(enumeration, ranges, executor)

    with one_blas_thread(None if executor is not None else n_elements):
        acc = run(enumeration)
        log_z = acc.shift + np.log(acc.total)
        if not moments:
            return log_z, None
        acc = run(LayerEnumeration(x, y, M, rows, log_z=float(log_z)))
    return log_z, acc.sums
