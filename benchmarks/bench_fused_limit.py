"""What the gradient costs against log Z when each inner loop is one compiled loop.

The package computes both with numpy, one pass over a block per operation.
This study compiles the inner loop of each (with numba, a benchmark
requirement only) to see the ratio that a machine-limit implementation
would face.  On one block of 784 units by 2**10 states, single-threaded:

* log Z's loop: ``P[l] *= E[i, l] + g[i]``, one addition and one
  multiplication per entry (the product path of :mod:`rbm.exact`);
* the gradient's extra loop: ``r = w[l] / (E[i, l] + g[i])``, accumulated per
  entry and per unit; its division alone is timed too, as numpy's
  ``np.divide`` over the block (vectorised; no loop can do less).

Times are per entry, in nanoseconds; the printed ratios compare timings of
this run.  ``python -m benchmarks.bench_fused_limit``
"""

import json
import statistics
import time

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

N_UNITS, LOW_BITS, REPEATS = 784, 10, 9
# reassociation lets the compiler vectorise the sums over states
FASTMATH = {"reassoc", "nsz", "contract"}


@njit(nogil=True, fastmath=FASTMATH, cache=False)
def log_z_loop(E, g, P):
    n, m = E.shape
    for l in range(m):
        P[l] = 1.0
    for i in range(n):
        gi = g[i]
        for l in range(m):
            P[l] *= E[i, l] + gi


@njit(nogil=True, fastmath=FASTMATH, cache=False)
def gradient_loop(E, g, w, low, row_sums):
    n, m = E.shape
    for i in range(n):
        gi = g[i]
        s = 0.0
        for l in range(m):
            r = w[l] / (E[i, l] + gi)
            low[i, l] += r
            s += r
        row_sums[i] = s


def per_entry_ns(function, entries):
    """Median over REPEATS of the time per entry of `function` (called 8 times per repeat)."""
    function()  # compile and warm the caches
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(8):
            function()
        times.append((time.perf_counter() - start) / 8 / entries * 1e9)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "repeats": REPEATS}


def run():
    rng = np.random.default_rng(0)
    E = rng.random((N_UNITS, 2**LOW_BITS)) + 0.5
    g, w = rng.random(N_UNITS), rng.random(2**LOW_BITS)
    P, row_sums = np.empty(2**LOW_BITS), np.empty(N_UNITS)
    low, out = np.zeros_like(E), np.empty_like(E)
    with threadpool_limits(limits=1):
        result = {
            "block": [N_UNITS, 2**LOW_BITS],
            "log_z_loop_ns": per_entry_ns(lambda: log_z_loop(E, g, P), E.size),
            "gradient_loop_ns": per_entry_ns(lambda: gradient_loop(E, g, w, low, row_sums),
                                             E.size),
            "numpy_divide_ns": per_entry_ns(lambda: np.divide(w, E, out=out), E.size),
        }
    lz = result["log_z_loop_ns"]["median"]
    result["gradient_over_log_z"] = (lz + result["gradient_loop_ns"]["median"]) / lz
    result["division_over_log_z"] = result["numpy_divide_ns"]["median"] / lz
    return result


if __name__ == "__main__":
    print(json.dumps(run()))
