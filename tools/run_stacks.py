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

Part ``samples`` (``stacks_samples.json``): what the second RBM is trained on, beyond the two
arms above.  On 3x3 bars and stripes and the 300 noisy prototypes (the digits' 1797 rows, ten
draws each, would cost ten times more) with the first RBMs of ``SAMPLES_N1`` units, seeds 0-4,
rates ``RATES``, ``BUDGETS[-1]`` steps from the transpose: ``posterior`` as above, ``one
sample`` (one state of h1 drawn from Q for every image, once), ``ten samples`` (ten per image,
once), ``fresh samples`` (one per image drawn anew at every step) and ``probabilities``, with
the bound that arm climbs
(``rbm.deep.bound_at_means``, the greedy bound with log p2 taken at Q's means) at every
checkpoint.

Part ``converged`` (``stacks_converged.json``): the second RBM above longer-trained first
RBMs.  The first RBM trained ``CONVERGED_STEPS`` steps at rate ``CONVERGED_RATE`` (and, to say
how far from converged it is, what ``CONVERGED_MORE`` further steps add), on the bars with 6
and 10 units and on the digits with 6, seeds 0-4; the second on the aggregated posterior at
``CONVERGED_RATES`` (one past the grid of ``greedy``), read as in ``greedy``.

Part ``third_fast`` (``stacks_third_fast.json``): the third layer past rate 0.3.  As part
``third`` at ``THIRD_FAST_RATES``; and on the bars, from a second RBM trained
``LONG_SECOND_STEPS`` steps at rate 0.3, a third trained ``LONG_SECOND_STEPS`` steps at rate
1.0 (``LONG_CHECKPOINTS``).

Part ``dbm_bias`` (``stacks_dbm_bias.json``): the persistent chains' bias, apart from their
variance.  The runs of part ``dbm`` again (the same seeds and draws, so the same trajectories),
without AIS; beside the 100 chains that train, ``SHADOW_SETS`` sets of 100 chains moved by the
same sweeps of the same models but never used for training.  At every checkpoint: the squared
bias of a chain set's moments against the exact model moments, estimated without bias from the
sets (``|mean - exact|^2`` minus the sets' variance over their number), the variance of one set,
the same two from as many sets of independent exact draws (``rbm.deep.sample_exact``: no bias),
the mean-field data term's error (a bias) and the norm of the mean-field + PCD gradient.

Part ``dbm_nudged`` (``stacks_dbm_nudged.json``): the DBM runs' spread under rounding at every
rate.  Seeds 0 and 1 of part ``dbm``, at each of ``DBM_RATES``, again with one starting weight
nudged by +1e-12 and by -1e-12 (part ``dbm`` nudges seed 0 at one rate only).

Part ``dbm_sweeps`` (``stacks_dbm_sweeps.json``): the chains' lag at rate 0.1.  The runs of
part ``dbm_bias`` at rate 0.1 again, with ``SWEEPS`` block-Gibbs sweeps per step for the
training chains and the shadow sets (ten times the sweeps), and seed 0 of each data set again
nudged by 1e-12.

Part ``first_layers`` (``stacks_first_layers.json``): are the first RBMs of part ``converged``
converged?  Each retrained as there, then ``CONVERGED_MORE`` further steps at its rate with
the exact log-likelihood every ``TRACE_EVERY`` (a window that shows an oscillation, where the
change over the whole window can miss it); and on the digits the first RBMs trained
``STABLE_STEPS`` steps at the grid's stable rate ``FIRST_RATE``, traced the same way, with the
second RBM above each as in part ``converged``.

Part ``greedy_more`` (``stacks_greedy_more.json``): the grid of ``greedy`` at one more rate,
``EDGE_RATE`` (both arms, every data set, size and seed), so that no arm's best rate sits at the
grid's edge; one fixed draw of Q per image on the digits (``SIZES``, seeds 0-4, ``RATES``; the
draws seeded as in part ``samples``); and the aggregated-posterior arm on 300 noisy copies of 4
prototypes of 16 bits with 8 hidden units (seeds 0-4, ``RATES``).

Part ``dbm_spread`` (``stacks_dbm_spread.json``): the rate-0.1 DBM runs' spread under rounding,
from more realizations.  Every seed of part ``dbm`` at rate 0.1 (one sweep per step), again with
one starting weight nudged by each of ``SPREAD_NUDGES`` (beside part ``dbm_nudged``'s); the
exact log-likelihood only (no AIS, so the trajectories part ``dbm`` would give).

Part ``first_steps`` (``stacks_first_steps.json``): the first RBMs step by step, and the
digits' with 10 units.  Every first RBM of part ``first_layers`` (retrained as there) with its
exact log-likelihood at ``STEP_TRACE`` consecutive steps (a flip of period 2 hides in a trace
read every 100 steps); on the digits with 10 units (seeds ``TEN_SEEDS``), first RBMs trained as
the 6-unit ones (``STABLE_STEPS`` at ``FIRST_RATE``), traced both ways, with the second RBM above each as in
part ``converged``; and the 16-bit prototypes' runs of part ``greedy_more`` at rate 0.3
continued to ``LONG_CHECKPOINTS[-1]`` steps.

Parts ``greedy_spread``, ``converged_spread``, ``prototypes_spread``, ``third_spread`` and
``dbm_nudged_more`` (``stacks_<part>.json``): each run's spread under rounding.  Every run of
part ``greedy`` and of part ``greedy_more``'s edge rate, every second RBM above the
longer-trained first RBMs (parts ``converged``, ``first_layers`` and ``first_steps``), the
16-bit prototypes' runs and the runs of part ``third_fast``, again from first RBMs with one
starting weight nudged by +1e-12 and by -1e-12; and the DBM runs of the seeds that part
``dbm_nudged`` leaves out, at rates 0.01 and 0.03, nudged the same way (the exact
log-likelihood only).  A count on the page then holds in every realization of a run
(the run and its two copies), or is given as a range.

Usage with parts: python tools/run_stacks.py OUTPUT_DIR [greedy] [third] [dbm] [samples]
[converged] [third_fast] [dbm_bias] [dbm_nudged] [dbm_sweeps] [first_layers] [greedy_more]
[dbm_spread] [first_steps] [greedy_spread] [converged_spread] [dbm_nudged_more]
[prototypes_spread] [third_spread] (all by default: the first three about 10 minutes, the rest
about 70 more).
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

SAMPLES_DATA_SETS = ("bars and stripes 3x3", "noisy prototypes 9")
SAMPLES_N1 = 6
SAMPLE_ARMS = ("posterior", "one sample", "ten samples", "fresh samples", "probabilities")

CONVERGED_RATE = 0.5
CONVERGED_STEPS = 6000
CONVERGED_MORE = 1000
CONVERGED_SIZES = {"bars and stripes 3x3": (6, 10), "digits 8x8": (6,)}
CONVERGED_RATES = (0.1, 0.3, 1.0)

THIRD_FAST_RATES = (1.0, 3.0)
LONG_SECOND_STEPS = 6400
LONG_CHECKPOINTS = (0, 400, 1600, 3200, 6400)

SHADOW_SETS = 10

NUDGED_SEEDS = (0, 1)
SWEEPS = 10

TRACE_EVERY = 100
STABLE_STEPS = 20000

EDGE_RATE = 1.0
PROTOTYPES_16 = "noisy prototypes 16"

# beside part dbm_nudged's +-1e-12 of seeds 0 and 1
SPREAD_NUDGES = (2e-12, -2e-12, 3e-12, -3e-12)
STEP_TRACE = 11
TEN_SEEDS = (0, 1, 2)


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
    if name == PROTOTYPES_16:
        return noisy_prototypes(300, n_visible=16, n_prototypes=4, noise=0.1, rng=5)[0]
    raise ValueError(f"unknown data set {name!r}")


def first_rbm(data, n1, seed, nudge=0.0):
    """The trained first RBM."""
    start = RBM.random(data.shape[1], n1, scale=0.01, rng=seed)
    start.W[0, 0] += nudge
    return deep.fit_exact(start, data, learning_rate=FIRST_RATE, n_steps=FIRST_STEPS)


def second_rbm_data(first, data, arm, rng=None):
    """The rows and weights the second RBM is trained on, in one arm."""
    if arm == "posterior":
        return deep.aggregated_posterior(first, data)
    if arm == "probabilities":
        return first.mean_h_given_v(data), None
    copies = {"one sample": 1, "ten samples": 10}.get(arm)
    if copies is None:
        raise ValueError(f"unknown arm {arm!r}")
    return first.sample_h_given_v(np.repeat(data, copies, axis=0), rng=rng), None


def run(data, first, arm, rate, checkpoints=CHECKPOINTS, rng=None, at_means=False):
    """Bound and log-likelihood of the DBN at each checkpoint of the second RBM's training.

    The arms of part ``samples`` draw states of h1 from Q with `rng`; with `at_means`, the
    bound that training on the probabilities climbs is recorded too."""
    fresh = arm == "fresh samples"
    if not fresh:
        states, weights = second_rbm_data(first, data, arm, rng)
    second = first.transpose()
    out, done = {"bound": [], "log_likelihood": []}, 0
    if at_means:
        out["bound_at_means"] = []
    for until in checkpoints:
        if fresh:
            for _ in range(until - done):
                states, weights = second_rbm_data(first, data, "one sample", rng)
                second = deep.fit_exact(second, states, weights, learning_rate=rate,
                                        n_steps=1)
        else:
            second = deep.fit_exact(second, states, weights, learning_rate=rate,
                                    n_steps=until - done)
        done = until
        dbn = DBN([first, second])
        out["bound"].append(float(deep.greedy_bound(dbn, data).mean()))
        out["log_likelihood"].append(deep.log_likelihood(dbn, data))
        if at_means:
            out["bound_at_means"].append(float(deep.bound_at_means(dbn, data).mean()))
    return out


def third_run(data, seed, rate, checkpoints=CHECKPOINTS, nudge=0.0, second_rate=SECOND_RATE,
              second_steps=SECOND_STEPS):
    """The three-layer DBN along the third RBM's training: exact log p(v) and the bounds."""
    first = first_rbm(data, THIRD_N1, seed, nudge)
    states1, weights1 = deep.aggregated_posterior(first, data)
    second = deep.fit_exact(first.transpose(), states1, weights1, learning_rate=second_rate,
                            n_steps=second_steps)
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


def dbm_run(name, seed, rate, nudge=0.0, checkpoints=DBM_CHECKPOINTS, shadows=0, sweeps=1,
            log_p_only=False):
    """Pretraining, then mean-field + PCD (`sweeps` block-Gibbs sweeps per step), measured at
    every checkpoint (with `log_p_only`, the exact log-likelihood only: no AIS, the same
    trajectory).

    With `shadows`, that many further sets of ``N_CHAINS`` chains follow the same sweeps of
    the same models (their own draws, so the training's draws are unchanged) and the
    checkpoints measure the chains' bias (:func:`chain_bias`) instead of running AIS."""
    data = data_set(name)
    sizes = DBM_DATA_SETS[name]
    model = deep.pretrain_dbm(data, sizes[1:], learning_rate=PRETRAIN_RATE,
                              n_steps=PRETRAIN_STEPS, rng=seed)
    model.weights[0][0, 0] += nudge
    rng = np.random.default_rng(1000 + seed)
    chains = [layer.random_states(N_CHAINS, rng=rng) for layer in model.layers]
    shadow_rng = np.random.default_rng(4000 + seed)
    sets = [layer.random_states(N_CHAINS * shadows, rng=shadow_rng) for layer in model.layers]
    records, done = [], 0
    for until in checkpoints:
        if shadows:
            for _ in range(until - done):
                # the sweep fit_mean_field_pcd gives its chains, with the same model
                sets = deep.gibbs_sweeps(model, sets, sweeps, rng=shadow_rng)
                model, chains = deep.fit_mean_field_pcd(model, data, chains,
                                                        learning_rate=rate, n_steps=1, rng=rng,
                                                        n_sweeps=sweeps)
        else:
            model, chains = deep.fit_mean_field_pcd(model, data, chains, learning_rate=rate,
                                                    n_steps=until - done, rng=rng,
                                                    n_sweeps=sweeps)
        done = until
        if shadows:
            records.append(chain_bias(model, data, chains, sets, shadows, seed=5000 + until))
        elif log_p_only:
            records.append({"log_likelihood": deep.log_likelihood(model, data)})
        else:
            records.append(dbm_measures(model, data, chains, seed=2000 + until))
    return {key: [r[key] for r in records] for key in records[0]}


def split_moments(model, states, n_sets):
    """The moments of each of `n_sets` equal sets of chains, one row per set."""
    size = len(states[0]) // n_sets
    return np.array([flat(deep.sample_statistics(model, [x[i * size:(i + 1) * size]
                                                         for x in states]))
                     for i in range(n_sets)])


def bias_and_variance(moments, exact_moments):
    """An unbiased estimate of |E[set] - exact|^2 from the sets' moments, and one set's
    variance (summed over the moments)."""
    n_sets = len(moments)
    variance = float(moments.var(axis=0, ddof=1).sum())
    return float(np.sum((moments.mean(axis=0) - exact_moments) ** 2)) - variance / n_sets, \
        variance


def chain_bias(model, data, chains, sets, n_sets, seed):
    """The chains' bias and variance against exact draws, and the mean-field data term's bias,
    each relative to the exact gradient's length."""
    exact_grad = flat(deep.gradient(model, data))
    norm = np.linalg.norm(exact_grad)
    positive = flat(deep.mean_field_statistics(model, data))
    model_moments = flat(deep.statistics(model))
    draws = deep.sample_exact(model, N_CHAINS * n_sets, rng=seed)
    chain_bias_sq, chain_var = bias_and_variance(split_moments(model, sets, n_sets),
                                                 model_moments)
    exact_bias_sq, exact_var = bias_and_variance(split_moments(model, draws, n_sets),
                                                 model_moments)
    pcd = positive - flat(deep.sample_statistics(model, chains))
    return {"log_likelihood": deep.log_likelihood(model, data), "gradient_norm": float(norm),
            "mean_field_error": float(np.linalg.norm(positive - model_moments - exact_grad)
                                      / norm),
            "chain_bias_sq": chain_bias_sq, "chain_variance": chain_var,
            "exact_bias_sq": exact_bias_sq, "exact_variance": exact_var,
            "pcd_gradient_norm": float(np.linalg.norm(pcd))}


PARTS = ("greedy", "third", "dbm", "samples", "converged", "third_fast", "dbm_bias",
         "dbm_nudged", "dbm_sweeps", "first_layers", "greedy_more", "dbm_spread", "first_steps",
         "greedy_spread", "converged_spread", "dbm_nudged_more", "prototypes_spread",
         "third_spread")


def main(output=OUTPUT, *parts):
    parts = parts or PARTS
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise SystemExit(f"unknown parts {sorted(unknown)}: the parts are {', '.join(PARTS)}")
    with threadpool_limits(limits=1):
        for part in parts:
            start = time.process_time()
            table = globals()[part]()
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


def samples():
    cells = []
    for name in SAMPLES_DATA_SETS:
        data = data_set(name)
        for seed in SEEDS:
            first = first_rbm(data, SAMPLES_N1, seed)
            base = exact.log_likelihood(first, data)
            for arm in SAMPLE_ARMS:
                for rate in RATES:
                    rng = np.random.default_rng(3000 + seed)
                    cells.append({"data_set": name, "seed": seed, "arm": arm, "rate": rate,
                                  "first": base,
                                  **run(data, first, arm, rate, rng=rng,
                                        at_means=arm == "probabilities")})
            print(f"samples, {name}, seed {seed}", flush=True)
    return {"data_sets": list(SAMPLES_DATA_SETS), "n1": SAMPLES_N1, "seeds": list(SEEDS),
            "rates": list(RATES), "arms": list(SAMPLE_ARMS), "checkpoints": list(CHECKPOINTS),
            "first_rate": FIRST_RATE, "first_steps": FIRST_STEPS, "cells": cells}


def converged_first(data, n1, seed):
    """A first RBM trained ``CONVERGED_STEPS`` steps at ``CONVERGED_RATE``, and what
    ``CONVERGED_MORE`` further steps add to its log-likelihood."""
    start = RBM.random(data.shape[1], n1, scale=0.01, rng=seed)
    first = deep.fit_exact(start, data, learning_rate=CONVERGED_RATE, n_steps=CONVERGED_STEPS)
    more = deep.fit_exact(first, data, learning_rate=CONVERGED_RATE, n_steps=CONVERGED_MORE)
    return first, exact.log_likelihood(more, data) - exact.log_likelihood(first, data)


def converged_firsts():
    """Every first RBM of part ``converged``, as (data set, its rows, n1, seed, the RBM, what
    ``CONVERGED_MORE`` further steps add)."""
    for name, sizes in CONVERGED_SIZES.items():
        data = data_set(name)
        for n1 in sizes:
            for seed in SEEDS:
                yield (name, data, n1, seed, *converged_first(data, n1, seed))


def converged():
    cells = []
    for name, data, n1, seed, first, more in converged_firsts():
        base = exact.log_likelihood(first, data)
        for rate in CONVERGED_RATES:
            cells.append({"data_set": name, "n1": n1, "seed": seed, "rate": rate,
                          "first": base, "first_more": more,
                          **run(data, first, "posterior", rate)})
        print(f"converged, {name}, n1={n1}, seed {seed}", flush=True)
    return {"sizes": {k: list(v) for k, v in CONVERGED_SIZES.items()}, "seeds": list(SEEDS),
            "rates": list(CONVERGED_RATES), "first_rate": CONVERGED_RATE,
            "first_steps": CONVERGED_STEPS, "first_more_steps": CONVERGED_MORE,
            "checkpoints": list(CHECKPOINTS), "cells": cells}


def third_fast():
    cells = [{"data_set": name, "seed": seed, "rate": rate, "second_rate": SECOND_RATE,
              "second_steps": SECOND_STEPS, **third_run(data_set(name), seed, rate)}
             for name in THIRD_DATA_SETS for seed in SEEDS for rate in THIRD_FAST_RATES]
    name = THIRD_DATA_SETS[0]
    for seed in SEEDS:
        cells.append({"data_set": name, "seed": seed, "rate": 1.0, "second_rate": 0.3,
                      "second_steps": LONG_SECOND_STEPS,
                      **third_run(data_set(name), seed, 1.0, checkpoints=LONG_CHECKPOINTS,
                                  second_rate=0.3, second_steps=LONG_SECOND_STEPS)})
        print(f"third layer after a long second, seed {seed}", flush=True)
    return {"data_sets": list(THIRD_DATA_SETS), "seeds": list(SEEDS),
            "rates": list(THIRD_FAST_RATES), "n1": THIRD_N1, "checkpoints": list(CHECKPOINTS),
            "long_checkpoints": list(LONG_CHECKPOINTS), "cells": cells}


def dbm_bias():
    cells = []
    for name in DBM_DATA_SETS:
        for seed in SEEDS:
            for rate in DBM_RATES:
                cells.append({"data_set": name, "seed": seed, "rate": rate,
                              **dbm_run(name, seed, rate, shadows=SHADOW_SETS)})
            print(f"DBM bias, {name}, seed {seed}", flush=True)
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()},
            "seeds": list(SEEDS), "rates": list(DBM_RATES),
            "checkpoints": list(DBM_CHECKPOINTS), "n_chains": N_CHAINS,
            "shadow_sets": SHADOW_SETS, "cells": cells}


def dbm_nudged():
    cells = [{"data_set": name, "seed": seed, "rate": rate, "nudge": nudge,
              **dbm_run(name, seed, rate, nudge=nudge)}
             for name in DBM_DATA_SETS for seed in NUDGED_SEEDS for rate in DBM_RATES
             for nudge in (NUDGE, -NUDGE)]
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()},
            "seeds": list(NUDGED_SEEDS), "rates": list(DBM_RATES),
            "checkpoints": list(DBM_CHECKPOINTS), "cells": cells}


def dbm_sweeps():
    rate, cells = DBM_RATES[-1], []
    for name in DBM_DATA_SETS:
        for seed, nudge in [(seed, 0.0) for seed in SEEDS] + [(0, NUDGE)]:
            cells.append({"data_set": name, "seed": seed, "rate": rate, "nudge": nudge,
                          **dbm_run(name, seed, rate, nudge=nudge, shadows=SHADOW_SETS,
                                    sweeps=SWEEPS)})
            print(f"DBM, {SWEEPS} sweeps, {name}, seed {seed}, nudge {nudge}", flush=True)
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()}, "seeds": list(SEEDS),
            "rate": rate, "sweeps": SWEEPS, "checkpoints": list(DBM_CHECKPOINTS),
            "n_chains": N_CHAINS, "shadow_sets": SHADOW_SETS, "cells": cells}


def trace(model, data, rate, n_steps=CONVERGED_MORE, every=TRACE_EVERY):
    """The exact log-likelihood along `n_steps` further steps at `rate`, every `every`."""
    out = [exact.log_likelihood(model, data)]
    for _ in range(n_steps // every):
        model = deep.fit_exact(model, data, learning_rate=rate, n_steps=every)
        out.append(exact.log_likelihood(model, data))
    return out


def first_layers():
    cells = [{"data_set": name, "n1": n1, "seed": seed, "first_rate": CONVERGED_RATE,
              "first_steps": CONVERGED_STEPS, "trace": trace(first, data, CONVERGED_RATE)}
             for name, data, n1, seed, first, _ in converged_firsts()]
    name = "digits 8x8"
    data = data_set(name)
    for seed in SEEDS:
        start = RBM.random(data.shape[1], CONVERGED_SIZES[name][0], scale=0.01, rng=seed)
        first = deep.fit_exact(start, data, learning_rate=FIRST_RATE, n_steps=STABLE_STEPS)
        cell = {"data_set": name, "n1": CONVERGED_SIZES[name][0], "seed": seed,
                "first_rate": FIRST_RATE, "first_steps": STABLE_STEPS,
                "trace": trace(first, data, FIRST_RATE), "second": {}}
        base = exact.log_likelihood(first, data)
        for rate in CONVERGED_RATES:
            cell["second"][str(rate)] = {"first": base, **run(data, first, "posterior", rate)}
        cells.append(cell)
        print(f"first layers, {name} at rate {FIRST_RATE}, seed {seed}", flush=True)
    return {"sizes": {k: list(v) for k, v in CONVERGED_SIZES.items()}, "seeds": list(SEEDS),
            "trace_steps": CONVERGED_MORE, "trace_every": TRACE_EVERY,
            "second_rates": list(CONVERGED_RATES), "checkpoints": list(CHECKPOINTS),
            "cells": cells}


def grid_firsts():
    """The grid's first RBMs, as (data set, its rows, n1, seed, the RBM, its log-likelihood),
    over ``DATA_SETS``, ``SIZES`` and ``SEEDS`` in that order."""
    for name in DATA_SETS:
        data = data_set(name)
        for n1 in SIZES:
            for seed in SEEDS:
                first = first_rbm(data, n1, seed)
                yield name, data, n1, seed, first, exact.log_likelihood(first, data)


def greedy_more():
    edge, draws, proto = [], [], []
    for name, data, n1, seed, first, base in grid_firsts():
        for arm in ARMS:
            edge.append({"data_set": name, "n1": n1, "seed": seed, "arm": arm,
                         "rate": EDGE_RATE, "first": base, **run(data, first, arm, EDGE_RATE)})
        if name == "digits 8x8":
            for rate in RATES:
                rng = np.random.default_rng(3000 + seed)
                draws.append({"data_set": name, "n1": n1, "seed": seed, "arm": "one sample",
                              "rate": rate, "first": base,
                              **run(data, first, "one sample", rate, rng=rng)})
        print(f"greedy, more, {name} n1={n1} seed={seed}", flush=True)
    data = data_set(PROTOTYPES_16)
    for seed in SEEDS:
        first = first_rbm(data, 8, seed)
        base = exact.log_likelihood(first, data)
        for rate in RATES:
            proto.append({"data_set": PROTOTYPES_16, "n1": 8, "seed": seed,
                          "arm": "posterior", "rate": rate, "first": base,
                          **run(data, first, "posterior", rate)})
    return {"edge_rate": EDGE_RATE, "rates": list(RATES), "seeds": list(SEEDS),
            "checkpoints": list(CHECKPOINTS), "edge": edge, "one_draw_digits": draws,
            "prototypes_16": proto}


def spread_cell(name, seed, nudge):
    """One nudged copy of part ``dbm_spread``."""
    rate = DBM_RATES[-1]
    return {"data_set": name, "seed": seed, "rate": rate, "nudge": nudge,
            **dbm_run(name, seed, rate, nudge=nudge, log_p_only=True)}


def spread_cells():
    """The arguments of every cell of part ``dbm_spread``, in order."""
    return [(name, seed, nudge) for name in DBM_DATA_SETS for seed in SEEDS
            for nudge in SPREAD_NUDGES]


def spread_table(cells):
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()}, "seeds": list(SEEDS),
            "rate": DBM_RATES[-1], "nudges": list(SPREAD_NUDGES),
            "checkpoints": list(DBM_CHECKPOINTS), "cells": cells}


def dbm_spread():
    return spread_table([spread_cell(*args) for args in spread_cells()])


def first_step_cell(name, n1, seed):
    """One first RBM of part ``first_steps``, traced step by step."""
    data = data_set(name)
    if name in CONVERGED_SIZES and n1 in CONVERGED_SIZES[name] and name != "digits 8x8":
        first, _ = converged_first(data, n1, seed)
        rate, steps = CONVERGED_RATE, CONVERGED_STEPS
    else:
        start = RBM.random(data.shape[1], n1, scale=0.01, rng=seed)
        first = deep.fit_exact(start, data, learning_rate=FIRST_RATE, n_steps=STABLE_STEPS)
        rate, steps = FIRST_RATE, STABLE_STEPS
    cell = {"data_set": name, "n1": n1, "seed": seed, "first_rate": rate, "first_steps": steps,
            "steps": trace(first, data, rate, STEP_TRACE - 1, 1)}
    if name == "digits 8x8" and n1 not in CONVERGED_SIZES[name]:
        cell["trace"] = trace(first, data, rate)
        base = exact.log_likelihood(first, data)
        cell["second"] = {str(r): {"first": base, **run(data, first, "posterior", r)}
                          for r in CONVERGED_RATES}
    return cell


def first_step_cells():
    """The arguments of every first RBM of part ``first_steps``, in order: the bars' of part
    ``converged``, the digits' of 20000 steps with 6 units and (``TEN_SEEDS``) with 10."""
    return ([("bars and stripes 3x3", n1, seed) for n1 in CONVERGED_SIZES["bars and stripes 3x3"]
             for seed in SEEDS] + [("digits 8x8", 6, seed) for seed in SEEDS]
            + [("digits 8x8", 10, seed) for seed in TEN_SEEDS])


def long_prototypes():
    """The 16-bit prototypes' runs of part ``greedy_more`` at rate 0.3, to 6400 steps."""
    data = data_set(PROTOTYPES_16)
    return [{"data_set": PROTOTYPES_16, "n1": 8, "seed": seed, "arm": "posterior",
             "rate": RATES[-1], **run(data, first_rbm(data, 8, seed), "posterior", RATES[-1],
                                      checkpoints=LONG_CHECKPOINTS)}
            for seed in SEEDS]


def first_steps_table(cells, proto):
    return {"step_trace": STEP_TRACE, "trace_steps": CONVERGED_MORE,
            "trace_every": TRACE_EVERY, "second_rates": list(CONVERGED_RATES),
            "checkpoints": list(CHECKPOINTS), "long_checkpoints": list(LONG_CHECKPOINTS),
            "cells": cells, "prototypes_16_long": proto}


def first_steps():
    return first_steps_table([first_step_cell(*args) for args in first_step_cells()],
                             long_prototypes())


def greedy_spread():
    """Every run of part ``greedy`` and of part ``greedy_more``'s edge rate again, from first
    RBMs with one starting weight nudged by +-``NUDGE``: each run's spread under rounding."""
    cells = []
    for name in DATA_SETS:
        data = data_set(name)
        for n1 in SIZES:
            for seed in SEEDS:
                for nudge in (NUDGE, -NUDGE):
                    first = first_rbm(data, n1, seed, nudge)
                    base = exact.log_likelihood(first, data)
                    for arm in ARMS:
                        for rate in RATES + (EDGE_RATE,):
                            cells.append({"data_set": name, "n1": n1, "seed": seed, "arm": arm,
                                          "rate": rate, "nudge": nudge, "first": base,
                                          **run(data, first, arm, rate)})
                print(f"greedy spread, {name} n1={n1} seed={seed}", flush=True)
    return {"data_sets": list(DATA_SETS), "sizes": list(SIZES), "seeds": list(SEEDS),
            "rates": list(RATES + (EDGE_RATE,)), "arms": list(ARMS),
            "nudges": [NUDGE, -NUDGE], "checkpoints": list(CHECKPOINTS), "cells": cells}


def longer_first(data, n1, seed, rate, steps, nudge):
    """A first RBM trained `steps` steps at `rate` from a start nudged by `nudge`."""
    start = RBM.random(data.shape[1], n1, scale=0.01, rng=seed)
    start.W[0, 0] += nudge
    return deep.fit_exact(start, data, learning_rate=rate, n_steps=steps)


def converged_spread():
    """The second RBMs above the longer-trained first RBMs (part ``converged``'s bars, and
    the digits' of 20000 steps at rate 0.2 of parts ``first_layers`` and ``first_steps``)
    again, from first RBMs with one starting weight nudged by +-``NUDGE``."""
    firsts = ([("bars and stripes 3x3", n1, seed, CONVERGED_RATE, CONVERGED_STEPS)
               for n1 in CONVERGED_SIZES["bars and stripes 3x3"] for seed in SEEDS]
              + [("digits 8x8", 6, seed, FIRST_RATE, STABLE_STEPS) for seed in SEEDS]
              + [("digits 8x8", 10, seed, FIRST_RATE, STABLE_STEPS) for seed in TEN_SEEDS])
    cells = []
    for name, n1, seed, rate, steps in firsts:
        data = data_set(name)
        for nudge in (NUDGE, -NUDGE):
            first = longer_first(data, n1, seed, rate, steps, nudge)
            base = exact.log_likelihood(first, data)
            for second_rate in CONVERGED_RATES:
                cells.append({"data_set": name, "n1": n1, "seed": seed, "first_rate": rate,
                              "first_steps": steps, "rate": second_rate, "nudge": nudge,
                              "first": base, **run(data, first, "posterior", second_rate)})
        print(f"converged spread, {name} n1={n1} seed={seed}", flush=True)
    return {"rates": list(CONVERGED_RATES), "nudges": [NUDGE, -NUDGE],
            "checkpoints": list(CHECKPOINTS), "cells": cells}


def prototypes_spread():
    """The 16-bit prototypes' runs of part ``greedy_more`` again, from first RBMs with one
    starting weight nudged by +-``NUDGE``, and (rate 0.3) their continuation of part
    ``first_steps``."""
    data = data_set(PROTOTYPES_16)
    cells = []
    for seed in SEEDS:
        for nudge in (NUDGE, -NUDGE):
            first = first_rbm(data, 8, seed, nudge)
            base = exact.log_likelihood(first, data)
            for rate in RATES:
                cells.append({"data_set": PROTOTYPES_16, "n1": 8, "seed": seed,
                              "arm": "posterior", "rate": rate, "nudge": nudge, "first": base,
                              **run(data, first, "posterior", rate,
                                    checkpoints=LONG_CHECKPOINTS if rate == RATES[-1]
                                    else CHECKPOINTS)})
    return {"rates": list(RATES), "nudges": [NUDGE, -NUDGE], "checkpoints": list(CHECKPOINTS),
            "long_checkpoints": list(LONG_CHECKPOINTS), "cells": cells}


def third_spread():
    """Every run of part ``third_fast`` again, from first RBMs with one starting weight nudged
    by +-``NUDGE``."""
    cells = []
    for nudge in (NUDGE, -NUDGE):
        cells += [{"data_set": name, "seed": seed, "rate": rate, "second_rate": SECOND_RATE,
                   "second_steps": SECOND_STEPS, "nudge": nudge,
                   **third_run(data_set(name), seed, rate, nudge=nudge)}
                  for name in THIRD_DATA_SETS for seed in SEEDS for rate in THIRD_FAST_RATES]
        cells += [{"data_set": THIRD_DATA_SETS[0], "seed": seed, "rate": 1.0, "second_rate": 0.3,
                   "second_steps": LONG_SECOND_STEPS, "nudge": nudge,
                   **third_run(data_set(THIRD_DATA_SETS[0]), seed, 1.0, nudge=nudge,
                               checkpoints=LONG_CHECKPOINTS, second_rate=0.3,
                               second_steps=LONG_SECOND_STEPS)} for seed in SEEDS]
        print(f"third layer spread, nudge {nudge}", flush=True)
    return {"nudges": [NUDGE, -NUDGE], "checkpoints": list(CHECKPOINTS),
            "long_checkpoints": list(LONG_CHECKPOINTS), "cells": cells}


def dbm_nudged_more():
    """Part ``dbm_nudged`` for the seeds it leaves out, at the rates part ``dbm_spread``
    leaves out: the exact log-likelihood only (no AIS, so the trajectories part ``dbm``
    would give)."""
    seeds = [seed for seed in SEEDS if seed not in NUDGED_SEEDS]
    cells = [{"data_set": name, "seed": seed, "rate": rate, "nudge": nudge,
              **dbm_run(name, seed, rate, nudge=nudge, log_p_only=True)}
             for name in DBM_DATA_SETS for seed in seeds for rate in DBM_RATES[:-1]
             for nudge in (NUDGE, -NUDGE)]
    return {"data_sets": {k: list(v) for k, v in DBM_DATA_SETS.items()}, "seeds": seeds,
            "rates": list(DBM_RATES[:-1]), "checkpoints": list(DBM_CHECKPOINTS),
            "cells": cells}


def greedy():
    cells = []
    start = time.process_time()
    for name, data, n1, seed, first, base in grid_firsts():
        for arm in ARMS:
            for rate in RATES:
                cell = {"data_set": name, "n1": n1, "seed": seed, "arm": arm,
                        "rate": rate, "nudge": 0.0, "first": base}
                cell.update(run(data, first, arm, rate))
                cells.append(cell)
        print(f"{name} n1={n1} seed={seed}: {time.process_time() - start:.0f} s", flush=True)
        if seed == SEEDS[-1]:
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
