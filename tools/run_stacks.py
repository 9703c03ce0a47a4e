"""Greedy layer-wise training checked exactly: does the likelihood rise with the bound?

Usage: python tools/run_stacks.py [OUTPUT_DIR]     (behind `make stacks`)

For chapters/stacks_of_rbms.  For each data set (3x3 bars and stripes; the 8x8 digits of
scikit-learn, binarised, all 1797), first-layer size n1 (6 and 10) and seed (0-4):

1. the first RBM (n1 hidden units, starting weights N(0, 0.01^2) drawn with the seed) is
   trained by full-batch ascent on the exact gradient (``rbm.deep.fit_exact``, rate
   ``FIRST_RATE``, ``FIRST_STEPS`` steps): deterministic, so nothing but the seed varies;
2. the second RBM starts as the first one's transpose (then the DBN is the first RBM and the
   bound is tight) and is trained the same way, in two arms:
   ``posterior`` on the first RBM's aggregated posterior (every state of h1 weighted by
   the mean of Q(h1 | v) over the data: the exact gradient of the bound, what training on
   samples of Q estimates) and ``probabilities`` on the rows of Q's means
   p(h1_j = 1 | v) (the common practice: not the gradient of the bound), at rates
   ``RATES``, for ``BUDGETS[-1]`` steps, read at ``CHECKPOINTS``;
3. at every checkpoint the exact mean greedy bound and the exact mean log p(v) of the DBN
   (``rbm.deep.greedy_bound``, ``rbm.deep.log_likelihood``) over the training data.

Then seed 0 of each data set and size, arm ``posterior`` at rate 0.1, again with one starting
weight of the first RBM nudged by 1e-12 (the spread of a value under rounding).

Writes ``stacks.json``.  About 5 minutes of one core (261 CPU s here).  Single-threaded and deterministic
(``tests/test_stacks_cache.py`` re-derives one run).
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rbm import RBM, deep, exact
from rbm.datasets import bars_and_stripes, digits
from rbm.deep import DBN

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "stacks"
DATA_SETS = ("bars and stripes 3x3", "digits 8x8")
SIZES = (6, 10)
SEEDS = tuple(range(5))
FIRST_RATE = 0.2
FIRST_STEPS = 1000
RATES = (0.03, 0.1, 0.3)
ARMS = ("posterior", "probabilities")
BUDGETS = (400, 1600)
CHECKPOINTS = (0, 100, 200, 300, 400, 800, 1200, 1600)
NUDGE = 1e-12


def data_set(name):
    """The training rows of a data set of :data:`DATA_SETS`."""
    if name == "bars and stripes 3x3":
        return bars_and_stripes(3)
    if name == "digits 8x8":
        return digits()[0]
    raise ValueError(f"unknown data set {name!r}")


def first_rbm(data, n1, seed, nudge=0.0):
    """The trained first RBM."""
    start = RBM.random(data.shape[1], n1, scale=0.01, rng=seed)
    start.W[0, 0] += nudge
    return deep.fit_exact(start, data, learning_rate=FIRST_RATE, n_steps=FIRST_STEPS)


def second_rbm_data(first, data, arm):
    """The rows and weights the second RBM is trained on, in one arm."""
    if arm == "posterior":
        return deep.aggregated_posterior(first, data)
    if arm == "probabilities":
        return first.mean_h_given_v(data), None
    raise ValueError(f"unknown arm {arm!r}")


def run(data, first, arm, rate, checkpoints=CHECKPOINTS):
    """Bound and log-likelihood of the DBN at each checkpoint of the second RBM's training."""
    states, weights = second_rbm_data(first, data, arm)
    second = first.transpose()
    bound, loglik, done = [], [], 0
    for until in checkpoints:
        second = deep.fit_exact(second, states, weights, learning_rate=rate,
                                n_steps=until - done)
        done = until
        dbn = DBN([first, second])
        bound.append(float(deep.greedy_bound(dbn, data).mean()))
        loglik.append(deep.log_likelihood(dbn, data))
    return {"bound": bound, "log_likelihood": loglik}


def main(output=OUTPUT):
    cells = []
    start = time.process_time()
    with threadpool_limits(limits=1):
        for name in DATA_SETS:
            data = data_set(name)
            for n1 in SIZES:
                for seed in SEEDS:
                    first = first_rbm(data, n1, seed)
                    base = exact.log_likelihood(first, data)
                    for arm in ARMS:
                        for rate in RATES:
                            cell = {"data_set": name, "n1": n1, "seed": seed, "arm": arm,
                                    "rate": rate, "nudge": 0.0, "first": base}
                            cell.update(run(data, first, arm, rate))
                            cells.append(cell)
                    print(f"{name} n1={n1} seed={seed}: {time.process_time() - start:.0f} s",
                          flush=True)
                nudged = first_rbm(data, n1, 0, NUDGE)
                cell = {"data_set": name, "n1": n1, "seed": 0, "arm": "posterior",
                        "rate": 0.1, "nudge": NUDGE,
                        "first": exact.log_likelihood(nudged, data)}
                cell.update(run(data, nudged, "posterior", 0.1))
                cells.append(cell)
    table = {"data_sets": list(DATA_SETS), "sizes": list(SIZES), "seeds": list(SEEDS),
             "rates": list(RATES), "arms": list(ARMS), "budgets": list(BUDGETS),
             "checkpoints": list(CHECKPOINTS), "first_rate": FIRST_RATE,
             "first_steps": FIRST_STEPS, "cells": cells}
    path = Path(output) / f"{STEM}.json"
    path.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {path} in {time.process_time() - start:.0f} CPU s")


if __name__ == "__main__":
    main(*sys.argv[1:])
