"""Stacks of RBMs checked exactly: greedy layer-wise training (does the likelihood rise with the
bound? what does a third layer add?) and a DBM trained as Salakhutdinov & Hinton (2009).

Usage: python tools/run_stacks.py [OUTPUT_DIR [PART ...]]     (behind `make stacks`)

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

Part ``third`` (``stacks_third.json``): how much a third layer adds.  On 3x3 bars and stripes
and 300 noisy copies of 3 prototypes of 9 bits, for seeds 0-4: the first RBM (6 hidden units)
and the second (from the transpose, ``SECOND_STEPS`` steps at rate 0.1 on the aggregated
posterior) as above, then a third RBM from the second one's transpose, trained on the second
one's aggregated posterior of the first one's (every state of h2 weighted exactly) at the
``RATES``; at ``CHECKPOINTS`` the three-layer DBN's exact mean log p(v) and its two-level
bound (the greedy bound with log p(h1) replaced by the second level's bound).  Seed 0 at
rate 0.1 again with one starting weight of the first RBM nudged by 1e-12.

Part ``dbm`` (``stacks_dbm.json``): a DBM trained as Salakhutdinov & Hinton (2009).  On 3x3 and
4x4 bars and stripes (DBMs 9-8-4 and 16-12-6), seeds 0-4: pretraining with doubled weights
(``rbm.deep.pretrain_dbm``, ``PRETRAIN_RATE``, ``PRETRAIN_STEPS``), then mean-field + PCD
(``rbm.deep.fit_mean_field_pcd``: ``N_CHAINS`` chains, one sweep per step) at ``DBM_RATES``
for ``DBM_CHECKPOINTS[-1]`` steps; at every checkpoint the exact mean log p(v), the mean gap
of the mean-field bound, the relative error of the mean-field gradient against the exact one,
the squared error of the chains' moments against the exact model moments (and what
``N_CHAINS`` independent exact draws would give on average), and an AIS estimate of log Z
(``AIS_RUNS`` runs, ``AIS_STEPS`` temperatures) against the exact one.  Seed 0 at rate
``DBM_RATES[1]`` again with one starting weight nudged by 1e-12.

Usage with parts: python tools/run_stacks.py OUTPUT_DIR [greedy] [third] [dbm] (all three
by default, about 10 minutes).
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
from rbm.short_run import noisy_prototypes

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

THIRD_DATA_SETS = ("bars and stripes 3x3", "noisy prototypes 9")
THIRD_N1 = 6
SECOND_RATE = 0.1
SECOND_STEPS = 1600

DBM_DATA_SETS = {"bars and stripes 3x3": (9, 8, 4), "bars and stripes 4x4": (16, 12, 6)}
PRETRAIN_RATE = 0.1
PRETRAIN_STEPS = 300
DBM_RATES = (0.01, 0.03, 0.1)
DBM_CHECKPOINTS = (0, 250, 500, 1000, 2000, 3000, 4000)
DBM_BUDGETS = (1000, 4000)
N_CHAINS = 100
AIS_RUNS = 100
AIS_STEPS = 1000


def data_set(name):
    """The training rows of a data set of :data:`DATA_SETS`."""
    if name == "bars and stripes 3x3":
        return bars_and_stripes(3)
    if name == "digits 8x8":
        return digits()[0]
    if name == "bars and stripes 4x4":
        return bars_and_stripes(4)
    if name == "noisy prototypes 9":
        return noisy_prototypes(300, n_visible=9, n_prototypes=3, noise=0.1, rng=0)[0]
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


def third_run(data, seed, rate, checkpoints=CHECKPOINTS, nudge=0.0):
    """The three-layer DBN along the third RBM's training: exact log p(v) and the bounds."""
    first = first_rbm(data, THIRD_N1, seed, nudge)
    states1, weights1 = deep.aggregated_posterior(first, data)
    second = deep.fit_exact(first.transpose(), states1, weights1, learning_rate=SECOND_RATE,
                            n_steps=SECOND_STEPS)
    two = DBN([first, second])
    states2, weights2 = deep.aggregated_posterior(second, states1, weights1)
    third = second.transpose()
    out = {"first": exact.log_likelihood(first, data),
           "two_layers": deep.log_likelihood(two, data),
           "two_layer_bound": float(deep.greedy_bound(two, data).mean()),
           "log_likelihood": [], "bound": [], "bound_two_levels": []}
    done = 0
    for until in checkpoints:
        third = deep.fit_exact(third, states2, weights2, learning_rate=rate,
                               n_steps=until - done)
        done = until
        three, above = DBN([first, second, third]), DBN([second, third])
        inner_gap = weights1 @ (deep.log_prob(above, states1) - deep.greedy_bound(above, states1))
        bound = float(deep.greedy_bound(three, data).mean())
        out["log_likelihood"].append(deep.log_likelihood(three, data))
        out["bound"].append(bound)
        out["bound_two_levels"].append(bound - float(inner_gap))
    return out


def flat(terms):
    """The weights then the biases of a DBM's moments or gradient, as one vector."""
    return np.concatenate([np.ravel(x) for key in ("weights", "biases") for x in terms[key]])


def dbm_measures(model, data, chains, seed):
    """Exact values of a DBM against what its mean-field + PCD training and AIS use."""
    exact_grad = flat(deep.gradient(model, data))
    positive = flat(deep.mean_field_statistics(model, data))
    model_moments = flat(deep.statistics(model))
    chain_moments = flat(deep.sample_statistics(model, chains))
    norm = np.linalg.norm(exact_grad)
    ais = deep.ais_log_partition(model, n_runs=AIS_RUNS, betas=AIS_STEPS, rng=seed)
    # every moment is of {0,1} products, so its variance under the model is m (1 - m)
    return {"log_likelihood": deep.log_likelihood(model, data),
            "mean_field_gap": float(np.mean(deep.log_prob(model, data)
                                            - deep.mean_field_bound(model, data))),
            "gradient_norm": float(norm),
            "mean_field_error": float(np.linalg.norm(positive - model_moments - exact_grad)
                                      / norm),
            "chain_sq_error": float(np.sum((chain_moments - model_moments) ** 2)),
            "independent_sq_error": float(np.sum(model_moments * (1 - model_moments))
                                          / N_CHAINS),
            "log_z": deep.log_partition(model), "ais_log_z": ais.log_z,
            "ais_std_error": ais.std_error}


def dbm_run(name, seed, rate, nudge=0.0, checkpoints=DBM_CHECKPOINTS):
    """Pretraining, then mean-field + PCD, measured at every checkpoint."""
    data = data_set(name)
    sizes = DBM_DATA_SETS[name]
    model = deep.pretrain_dbm(data, sizes[1:], learning_rate=PRETRAIN_RATE,
                              n_steps=PRETRAIN_STEPS, rng=seed)
    model.weights[0][0, 0] += nudge
    rng = np.random.default_rng(1000 + seed)
    chains = [layer.random_states(N_CHAINS, rng=rng) for layer in model.layers]
    records, done = [], 0
    for until in checkpoints:
        model, chains = deep.fit_mean_field_pcd(model, data, chains, learning_rate=rate,
                                                n_steps=until - done, rng=rng)
        done = until
        records.append(dbm_measures(model, data, chains, seed=2000 + until))
    return {key: [r[key] for r in records] for key in records[0]}


def main(output=OUTPUT, *parts):
    parts = parts or ("greedy", "third", "dbm")
    unknown = set(parts) - {"greedy", "third", "dbm"}
    if unknown:
        raise SystemExit(f"unknown parts {sorted(unknown)}: the parts are greedy, third, dbm")
    with threadpool_limits(limits=1):
        for part in parts:
            start = time.process_time()
            table = {"greedy": greedy, "third": third, "dbm": dbm}[part]()
            stem = STEM if part == "greedy" else f"{STEM}_{part}"
            path = Path(output) / f"{stem}.json"
            path.write_text(json.dumps(table, indent=1) + "\n")
            print(f"wrote {path} in {time.process_time() - start:.0f} CPU s", flush=True)


def grid(label, names, rates, run_one, nudged_rate):
    """Cells of ``run_one(name, seed, rate, nudge)`` over `names`, ``SEEDS`` and `rates`, and
    for each name seed 0 at `nudged_rate` again with the nudge ``NUDGE``."""
    cells = []
    for name in names:
        for seed in SEEDS:
            for rate in rates:
                cells.append({"data_set": name, "seed": seed, "rate": rate, "nudge": 0.0,
                              **run_one(name, seed, rate, 0.0)})
            print(f"{label}, {name}, seed {seed}", flush=True)
        cells.append({"data_set": name, "seed": 0, "rate": nudged_rate, "nudge": NUDGE,
                      **run_one(name, 0, nudged_rate, NUDGE)})
    return cells


def third():
    cells = grid("third layer", THIRD_DATA_SETS, RATES,
                 lambda name, seed, rate, nudge: third_run(data_set(name), seed, rate,
                                                           nudge=nudge), 0.1)
    return {"data_sets": list(THIRD_DATA_SETS), "seeds": list(SEEDS), "rates": list(RATES),
            "n1": THIRD_N1, "second_rate": SECOND_RATE, "second_steps": SECOND_STEPS,
            "checkpoints": list(CHECKPOINTS), "cells": cells}


def dbm():
    cells = grid("DBM", DBM_DATA_SETS, DBM_RATES,
                 lambda name, seed, rate, nudge: dbm_run(name, seed, rate, nudge=nudge),
                 DBM_RATES[1])
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()},
            "seeds": list(SEEDS), "rates": list(DBM_RATES),
            "pretrain_rate": PRETRAIN_RATE, "pretrain_steps": PRETRAIN_STEPS,
            "checkpoints": list(DBM_CHECKPOINTS), "budgets": list(DBM_BUDGETS),
            "n_chains": N_CHAINS, "ais_runs": AIS_RUNS, "ais_steps": AIS_STEPS,
            "cells": cells}


def greedy():
    cells = []
    start = time.process_time()
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
    return {"data_sets": list(DATA_SETS), "sizes": list(SIZES), "seeds": list(SEEDS),
            "rates": list(RATES), "arms": list(ARMS), "budgets": list(BUDGETS),
            "checkpoints": list(CHECKPOINTS), "first_rate": FIRST_RATE,
            "first_steps": FIRST_STEPS, "cells": cells}


if __name__ == "__main__":
    main(*sys.argv[1:])
