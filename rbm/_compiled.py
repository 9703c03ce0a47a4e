r"""The product path's two inner loops, compiled with numba when it is installed.

:class:`rbm._enumeration.ProductEnumeration` spends nearly all of its time in
two loops over a block's table of centred factors
:math:`F_{li} = e^{t_{li} - c_l} + s_l` (unit ``l``, state ``i`` of the
block, :math:`s_l = e^{-o_l - c_l}`):

* log Z: :math:`P_i = \prod_{l \in g} F_{li}` for each group ``g`` of units;
* the moments: :math:`r_{li} = w_i / F_{li}`, added to a running sum per
  entry and summed over the states per unit.

numpy runs each as separate passes over the block (an addition that writes
``F``, then a product that reads it again); compiled, each is one pass that
forms ``F`` on the fly, laid out units-outer and states-inner so that the
compiler vectorises along the states.  ``F`` is never stored.

numba is optional (``pip install 'rbm-book[fast]'``; pinned in
``requirements-optional.txt``).  Without it :data:`AVAILABLE` is False and the
numpy passes run; the two give the same numbers to about 1e-15 relative (the
compiled loops may add in a different order), and
``tests/test_compiled.py`` checks them against each other to 1e-12 whenever
numba is installed.  Each call runs in one thread and releases the GIL, so the
enumeration's threads run them side by side, and the order of every sum
depends on the block alone: results are the same to the last bit whatever the
number of threads.
"""

try:
    import numba
except ImportError:  # the optional dependency is missing: the numpy path runs
    numba = None

AVAILABLE = numba is not None

if AVAILABLE:
    import numpy as np

    # The bits of a positive normal float64: the mantissa's, and those of 1.0.
    _MANTISSA = np.int64(0x000FFFFFFFFFFFFF)
    _ONE = np.int64(0x3FF0000000000000)

    # Reassociation lets the compiler vectorise the sums and products over states;
    # no "fast" flags that assume finite numbers or drop signed zeros' meaning.
    _FLAGS = {"reassoc", "nsz", "contract"}

    @numba.njit(nogil=True, fastmath=_FLAGS, error_model="numpy", cache=True,
                boundscheck=False)
    def batch_products(exp_table, scales, bounds, out, exponents):  # pragma: no cover
        """``prod over l of (exp_table[l, i] + scales[b, l])`` as ``out[b, i] * 2**exponents[b, i]``.

        Units outermost: each row of the table is read from memory once for
        the whole batch of blocks, and the products of the batch stay in
        cache.  The units come in groups (``bounds[g] .. bounds[g + 1] - 1``)
        whose products are finite normal numbers; after each group the
        running product is split into its binary exponent, added to
        `exponents`, and a mantissa in [1, 2), which the next group multiplies
        (by integer operations on the bits, which vectorise: no logarithm per
        group).  The caller takes one logarithm per state at the end.
        """
        n_batch, n_states = out.shape
        bits = out.view(np.int64)
        for b in range(n_batch):
            for i in range(n_states):
                out[b, i] = 1.0
                exponents[b, i] = 0
        for g in range(bounds.shape[0] - 1):
            for l in range(bounds[g], bounds[g + 1]):
                row = exp_table[l]
                for b in range(n_batch):
                    s = scales[b, l]
                    out_row = out[b]
                    for i in range(n_states):
                        out_row[i] *= row[i] + s
            for b in range(n_batch):
                bits_row = bits[b]
                exponents_row = exponents[b]
                for i in range(n_states):
                    x = bits_row[i]
                    exponents_row[i] += (x >> 52) - 1023
                    bits_row[i] = (x & _MANTISSA) | _ONE

    @numba.njit(nogil=True, fastmath=_FLAGS, error_model="numpy", cache=True,
                boundscheck=False)
    def batch_reciprocals(exp_table, scales, w, low, row_sums):  # pragma: no cover
        """For each block ``b``: ``r = w[b, i] / (exp_table[l, i] + scales[b, l])``,
        ``low[l, i] += r`` (blocks in order) and ``row_sums[b, l] = sum_i r``."""
        n_units, n_states = exp_table.shape
        n_batch = w.shape[0]
        for l in range(n_units):
            row = exp_table[l]
            low_row = low[l]
            for b in range(n_batch):
                s = scales[b, l]
                w_row = w[b]
                total = 0.0
                for i in range(n_states):
                    r = w_row[i] / (row[i] + s)
                    low_row[i] += r
                    total += r
                row_sums[b, l] = total
