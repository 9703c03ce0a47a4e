"""Exact enumeration against the textbook method (the baseline), measured in the same run.

The baseline for log Z at n_visible x n_hidden (enumerating the hidden layer)
is the work of the textbook method: one matrix product of all
2**n_hidden hidden states with W.T, and one stable softplus pass over the
(2**n_hidden, n_visible) result, done in cache-sized row blocks (the best
of three block sizes) with the fastest primitives (exp, log1p, maximum, in
place).  Ratios below 1 mean the package does less than that work.

Each case runs with one engine of :mod:`rbm.exact`: ``numpy`` (array passes,
what the book builds with) or ``numba`` (the compiled loops, an optional
dependency that the benchmarks install).

Run one case in a fresh process (for its peak memory) with
``python -m benchmarks.bench_exact CASE N_HIDDEN SCALE [REPEATS [ENGINE]]``.
"""

import json
import statistics
import sys

import numpy as np

import rbm
from rbm import exact
from benchmarks.common import peak_rss_mib, timed

N_VISIBLE = 784


def model_for(n_hidden, scale, seed=0):
    return rbm.RBM.random(N_VISIBLE, n_hidden, scale=scale, bias_scale=scale, rng=seed)


def limit_pass(model, block_rows):
    """Matrix product and stable softplus over all hidden states, in row blocks."""
    n_hidden = model.n_hidden
    block_rows = min(block_rows, 2**n_hidden)
    H = exact.all_states(min(n_hidden, 20))[:block_rows]  # the product's cost does not depend on the bits
    WT = np.ascontiguousarray(model.W.T)
    pre = np.empty((block_rows, model.n_visible))
    work = np.empty_like(pre)
    total = 0.0
    for _ in range(2**n_hidden // block_rows):
        np.matmul(H, WT, out=pre)
        np.abs(pre, out=work)
        np.negative(work, out=work)
        np.exp(work, out=work)
        np.log1p(work, out=work)
        np.maximum(pre, 0.0, out=pre)
        pre += work
        total += pre[0, 0]
    return total


def limit(model, repeats):
    """The best block size's timing of :func:`limit_pass`."""
    best = None
    for block_rows in (256, 1024, 4096):
        t, _ = timed(lambda: limit_pass(model, block_rows), repeats)
        if best is None or t["median"] < best["median"]:
            best = dict(t, block_rows=block_rows)
    return best


def reference_log_partition(model, block_rows=1024):
    """The clean float64 reference: matrix product, stable softplus, running log-sum-exp.

    Independent of the package's fast path: every pre-activation comes from a
    matrix product and every softplus is evaluated entry by entry as
    max(x, 0) + log1p(exp(-|x|)).
    """
    n_hidden = model.n_hidden
    WT = model.W.T
    log_terms = []
    for start in range(0, 2**n_hidden, block_rows):
        idx = np.arange(start, min(start + block_rows, 2**n_hidden))
        H = ((idx[:, None] >> np.arange(n_hidden - 1, -1, -1)) & 1).astype(float)
        pre = H @ WT + model.b
        softplus = np.maximum(pre, 0.0) + np.log1p(np.exp(-np.abs(pre)))
        log_terms.append(np.logaddexp.reduce(H @ model.c + softplus.sum(axis=1)))
    return float(np.logaddexp.reduce(np.array(log_terms)))


def paired(first, second, repeats):
    """Time `first` and `second` in turn; the median ratio of each pair's timings.

    On a shared machine the speed drifts over seconds, so a ratio of two
    timings taken side by side is steadier than one of two separate runs.
    Both run once untimed first (caches, thread start-up), and the order
    alternates between pairs, so that neither is favoured by going first.
    """
    first(), second()
    times = {"first": [], "second": []}
    for k in range(repeats):
        order = [("first", first), ("second", second)]
        for key, function in (order if k % 2 == 0 else order[::-1]):
            t, _ = timed(function, 1)
            times[key].append(t["median"])
    ratios = [b / a for a, b in zip(times["first"], times["second"])]
    summary = {key: {"median": statistics.median(v), "min": min(v), "max": max(v),
                     "repeats": repeats} for key, v in times.items()}
    summary["ratio"] = {"median": statistics.median(ratios), "min": min(ratios),
                        "max": max(ratios), "repeats": repeats}
    return summary


def case(name, n_hidden, scale, repeats=1, engine="numpy"):
    """One measurement, as a dict (run in a fresh process for a meaningful peak memory)."""
    model = model_for(n_hidden, scale)
    if name == "log_partition":
        exact.log_partition(model_for(10, scale), engine=engine)  # compile outside the timing
        t, value = timed(lambda: exact.log_partition(model, engine=engine), repeats)
    elif name == "log_partition_stable":
        # the path taken when the weights are too large for products of centred factors
        t, value = timed(lambda: float(exact._enumerate(model, method="stable")[0]), repeats)
    elif name == "gradient":
        # timed side by side with log Z, whose time it is compared with
        data = (np.random.default_rng(1).random((100, N_VISIBLE)) < 0.3).astype(float)
        pair = paired(lambda: exact.log_partition(model, engine=engine),
                      lambda: exact.gradient(model, data, engine=engine), repeats)
        t = dict(pair["second"], log_partition=pair["first"], ratio_to_log_partition=pair["ratio"])
        value = float(np.abs(exact.gradient(model, data, engine=engine).flat()).max())
    elif name == "reference":
        t, value = timed(lambda: reference_log_partition(model), repeats)
    elif name == "limit":
        t = limit(model, repeats)
        value = None
    else:
        raise ValueError(f"unknown case {name!r}")
    return {"case": name, "n_hidden": n_hidden, "scale": scale, "engine": engine, "time": t,
            "value": value, "peak_rss_mib": peak_rss_mib()}


if __name__ == "__main__":
    name, n_hidden, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    engine = sys.argv[5] if len(sys.argv) > 5 else "numpy"
    print(json.dumps(case(name, n_hidden, scale, repeats, engine)))
