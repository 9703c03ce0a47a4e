"""The gradient's extra work against log Z's, with each inner loop compiled.

The package computes both with numpy, one pass over a block per operation.
This study compiles each inner loop (with numba, a requirement of the
benchmarks only, not of the package) to see the ratio that an
implementation at the machine's limit would face.  On one block of 784
units by 2**10 states, single-threaded, per entry:

* log Z's loop: ``P[l] *= E[i, l] + g[i]`` (the product path of
  :mod:`rbm.exact`: one addition and one multiplication);
* the gradient's extra loop: ``r = w[l] / (E[i, l] + g[i])``, added to a
  running sum per entry and to one per unit (one division, three additions).
  It cannot be fused into log Z's loop: ``w`` needs the product over all
  units first, so the gradient reads the block a second time;
* a control: the same loop with ``*`` in place of ``/``, so that the
  difference is what the division itself costs;
* the package's numpy passes over the same block, for comparison: log Z's
  addition and product, and the gradient's division, running sum and row
  sums.

The block (6.4 MB) is larger than this machine's L2 cache, so the compiled
loops run at the speed of the L3 cache; on a block that fits in L2 the
ratios are larger still.  Times are medians in nanoseconds per entry, all
taken in this run.  ``python -m benchmarks.bench_compiled_loops``
"""

import json
import statistics
import time

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

N_UNITS, LOW_BITS, REPEATS = 784, 10, 9
# reassociation lets the compiler vectorise the sums over states; numpy's error model
# (a division by zero gives inf, as in numpy) lets it vectorise the division, which
# Python's (raise ZeroDivisionError) keeps scalar: the package's loops use the same
FASTMATH = {"reassoc", "nsz", "contract"}


@njit(nogil=True, fastmath=FASTMATH, error_model="numpy", cache=False)
def log_z_loop(E, g, P):
    n, m = E.shape
    for l in range(m):
        P[l] = 1.0
    for i in range(n):
        gi = g[i]
        for l in range(m):
            P[l] *= E[i, l] + gi


@njit(nogil=True, fastmath=FASTMATH, error_model="numpy", cache=False)
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


@njit(nogil=True, fastmath=FASTMATH, error_model="numpy", cache=False)
def control_loop(E, g, w, low, row_sums):
    """`gradient_loop` with a multiplication in place of the division."""
    n, m = E.shape
    for i in range(n):
        gi = g[i]
        s = 0.0
        for l in range(m):
            r = w[l] * (E[i, l] + gi)
            low[i, l] += r
            s += r
        row_sums[i] = s


def per_entry_ns(function, entries):
    """Median over REPEATS of the time per entry of `function` (called 8 times per repeat)."""
    function()  # compile, and warm the caches
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
    P, row_sums, ones = np.empty(2**LOW_BITS), np.empty(N_UNITS), np.ones(2**LOW_BITS)
    low, F = np.zeros_like(E), np.empty_like(E)

    def numpy_log_z():  # the package's two passes (rbm.exact._ProductEnumeration)
        np.add(E, g[:, None], out=F)
        np.multiply.reduce(F, axis=0)

    def numpy_gradient_extra():  # and the gradient's three
        np.divide(w, F, out=F)
        np.add(low, F, out=low)
        F @ ones

    with threadpool_limits(limits=1):
        result = {"block": [N_UNITS, 2**LOW_BITS]}
        for name, function in [
                ("log_z_loop", lambda: log_z_loop(E, g, P)),
                ("gradient_loop", lambda: gradient_loop(E, g, w, low, row_sums)),
                ("control_loop", lambda: control_loop(E, g, w, low, row_sums)),
                ("numpy_log_z", numpy_log_z),
                ("numpy_gradient_extra", numpy_gradient_extra)]:
            low[:] = 0.0
            F[:] = E + 1.0
            result[f"{name}_ns"] = per_entry_ns(function, E.size)
    ns = {name[:-3]: value["median"] for name, value in result.items() if name.endswith("_ns")}
    result["compiled_gradient_over_log_z"] = 1 + ns["gradient_loop"] / ns["log_z_loop"]
    result["division_over_log_z_loop"] = (ns["gradient_loop"] - ns["control_loop"]) / ns["log_z_loop"]
    result["numpy_gradient_over_log_z"] = 1 + ns["numpy_gradient_extra"] / ns["numpy_log_z"]
    return result


if __name__ == "__main__":
    print(json.dumps(run()))
