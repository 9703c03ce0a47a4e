"""Exact log Z on a Dask cluster (the `executor` argument) against local threads, in one run.

The enumeration's 16 segments become 16 tasks of a ``distributed.LocalCluster``
of 1 and then 2 worker processes (one thread each), and are timed against the
package on local threads, 1 and 2, all in the same run: the ratios to the
local single-thread time say what the tasks cost (sending the parameters,
rebuilding the enumeration, returning a few numbers) and what a second
worker gains.  The machine that builds the book has 2 cores, so more workers
cannot be measured here: on a cluster the time is expected to fall with the
number of workers until 16 (one segment each).  Every result is checked to
be the local single-thread value to the last bit.

The cases run in turn within each repeat, the order reversed every other
repeat (the machine's speed drifts over seconds), after each cluster's workers
have imported the package once.  The executors are made with
``get_executor(pure=False)``, so that no repeat can be served a result that
Dask still holds from the previous one.

``python -m benchmarks.bench_executor [N_HIDDEN [REPEATS]]``
"""

import json
import statistics
import sys

from rbm import exact
from benchmarks.bench_exact import model_for
from benchmarks.common import timed

N_HIDDEN = 23  # about 6 s on one core of the 2-core machine that builds the book
REPEATS = 3
WORKERS = (1, 2)


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "repeats": len(values)}


def run(n_hidden=N_HIDDEN, repeats=REPEATS):
    from distributed import Client, LocalCluster

    model = model_for(n_hidden, 0.01)
    warm_up = model_for(12, 0.01)
    reference = exact.log_partition(model, n_threads=1)
    clusters, clients = [], []
    try:
        cases = {"local, 1 thread": lambda: exact.log_partition(model, n_threads=1),
                 "local, 2 threads": lambda: exact.log_partition(model, n_threads=2)}
        for n_workers in WORKERS:
            # port 0: the scheduler's HTTP server on a free port, not 8787 (and no warning)
            clusters.append(LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                         processes=True, dashboard_address="127.0.0.1:0"))
            clients.append(Client(clusters[-1]))
            executor = clients[-1].get_executor(pure=False)
            for _ in range(2 * n_workers):  # every worker imports the package
                exact.log_partition(warm_up, executor=executor)
            cases[f"Dask, {n_workers} worker{'s' if n_workers > 1 else ''}"] = (
                lambda executor=executor: exact.log_partition(model, executor=executor))
        times = {name: [] for name in cases}
        identical = True
        for k in range(repeats):
            order = list(cases.items())
            for name, function in (order if k % 2 == 0 else order[::-1]):
                t, value = timed(function, 1)
                times[name].append(t["median"])
                identical = identical and value == reference
    finally:
        for client in clients:
            client.close()
        for cluster in clusters:
            cluster.close()
    local = times["local, 1 thread"]
    return {"case": "executor", "n_visible": model.n_visible, "n_hidden": n_hidden,
            "time": {name: summary(t) for name, t in times.items()},
            "ratio_to_local_1_thread": {name: summary([a / b for a, b in zip(t, local)])
                                        for name, t in times.items()},
            "identical": identical, "value": reference}


if __name__ == "__main__":
    n_hidden = int(sys.argv[1]) if len(sys.argv) > 1 else N_HIDDEN
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else REPEATS
    print(json.dumps(run(n_hidden, repeats)))
