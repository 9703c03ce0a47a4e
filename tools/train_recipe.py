"""Train the runs that chapters/practical_recipe_measured reads, and write them to chapters/data.

Usage: python tools/train_recipe.py [OUTPUT_DIR]     (behind `make recipe`)

Writes ``practical_recipe.json`` with five parts, every run CD-k with the exact
log-likelihood of its end (the models have at most 16 units on one side):

``settings``
    3x3 bars and stripes, CD-1, a base setting (16 hidden units, learning rate
    0.1, momentum 0.5, the full batch of 14, no weight decay, 2000 updates) and
    rows that change one setting (:data:`SETTINGS`); ten seeds each, seed ``s``
    drawing the initial weights and seed ``100 + s`` driving the training, so
    that every run is paired with the base run of its seed.  Per row and seed:
    the final exact mean log-likelihood and the hidden units' mean activity on
    the data.
``batch_rates``
    the batch size with the learning rate scaled to it: batches of 2 and 7 at
    ``eta * B / 14`` for as many passes through the data as the full batch's
    2000 updates, against the full batch at ``eta``, for several ``eta``
    (:data:`BATCH_RATES`).
``bars4_batches``
    the same comparison on 4x4 bars and stripes (30 patterns): batches of 10
    at the same rate and number of updates, and at the rate scaled to the batch
    for as many passes.
``search``
    CD-1 on 4x4 bars and stripes, full batch, learning rates 0.1, 0.3 and 1.0,
    seeds 0 to 5, 6000 updates: the exact log-likelihood every 300 updates, and
    the probability the model gives the 30 patterns after 1200 and 6000 updates.
``equal_sweeps``
    CD-1 for 30000 updates against CD-10 for 3000 (the same number of Gibbs
    sweeps) on 3x3 bars and stripes, full batch, learning rate 0.1, seeds 1 to
    10: the exact log-likelihood every 1000 Gibbs sweeps per chain.

Everything is seeded and single-threaded and uses only :mod:`rbm`, so another machine
gives the same numbers up to floating-point rounding (``tests/test_recipe_cache.py``
re-derives some runs and compares).  About a minute of one idle core.
"""

import sys
from pathlib import Path

import numpy as np

import rbm
from rbm import exact
from rbm.datasets import bars_and_stripes
from rbm.estimators import CD
from rbm.training import SparsityPenalty, train

from cache_parts import write_parts  # tools/, on sys.path when run as a script

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "practical_recipe"

SEEDS = tuple(range(10))
UPDATES = 2000
BASE = dict(n_hidden=16, learning_rate=0.1, momentum=0.5, batch_size=None,
            weight_decay=0.0, sparsity=None)
#: Each row changes the base setting (``batch_size=None``: the full batch); ``epochs``
#: gives the number of passes through the data instead of ``UPDATES`` updates, and
#: ``scale_rate`` multiplies the learning rate by the batch size over the data's size.
SETTINGS = {
    "base": {},
    "no momentum": dict(momentum=0.0),
    "no momentum, eta 0.2": dict(momentum=0.0, learning_rate=0.2),
    "weight decay 1e-4": dict(weight_decay=1e-4),
    "weight decay 1e-2": dict(weight_decay=1e-2),
    "sparsity 0.1, cost 1": dict(sparsity=(0.1, 1.0)),
    "4 hidden units": dict(n_hidden=4),
    "32 hidden units": dict(n_hidden=32),
    "batches of 2": dict(batch_size=2),
    "batches of 7": dict(batch_size=7),
    "batch 2, equal passes": dict(batch_size=2, epochs=UPDATES),
    "batch 7, equal passes": dict(batch_size=7, epochs=UPDATES),
    "batch 2, eta scaled": dict(batch_size=2, epochs=UPDATES, scale_rate=True),
    "batch 7, eta scaled": dict(batch_size=7, epochs=UPDATES, scale_rate=True),
}
BATCH_RATES = (0.05, 0.1, 0.2, 0.4)
BATCH_SIZES = (2, 7)
BARS4_BATCH = 10
SEARCH_RATES, SEARCH_SEEDS, SEARCH_UPDATES, SEARCH_EVERY = (0.1, 0.3, 1.0), range(6), 6000, 300
SEARCH_STOP = 1200  # where p(v) is also measured
SWEEPS, SWEEP_SEEDS, SWEEP_EVERY = 30000, tuple(range(1, 11)), 1000


def run_setting(data, seed, *, n_hidden, learning_rate, momentum, batch_size, weight_decay,
                sparsity, epochs=None, scale_rate=False):
    """One CD-1 run from ``RBM.random(n_visible, n_hidden, scale=0.01, rng=seed)``.

    Returns the final exact mean log-likelihood of `data` and the hidden units' mean
    activity ``p(h_j = 1 | v)`` over units and rows.
    """
    n, n_visible = data.shape
    batch_size = n if batch_size is None else batch_size
    net = rbm.RBM.random(n_visible, n_hidden, scale=0.01, rng=seed)
    estimator = CD(1) if sparsity is None else SparsityPenalty(
        CD(1), target=sparsity[0], cost=sparsity[1])
    if epochs is None:  # UPDATES updates, as near as whole passes allow
        epochs = UPDATES * batch_size // n
    rate = learning_rate * batch_size / n if scale_rate else learning_rate
    train(net, data, estimator, epochs=epochs, batch_size=batch_size, rng=100 + seed,
          learning_rate=rate, momentum=momentum, weight_decay=weight_decay)
    return exact.log_likelihood(net, data), float(net.prob_h_given_v(data).mean())


def settings(seeds=SEEDS):
    data = bars_and_stripes(3)
    out = {}
    for name, change in SETTINGS.items():
        runs = [run_setting(data, s, **dict(BASE, **change)) for s in seeds]
        out[name] = {"final": [r[0] for r in runs], "activity": [r[1] for r in runs]}
    return out


def batch_rates(seeds=SEEDS, rates=BATCH_RATES):
    data = bars_and_stripes(3)
    out = {}
    for rate in rates:
        out[f"full batch | {rate}"] = [
            run_setting(data, s, **dict(BASE, learning_rate=rate))[0] for s in seeds]
        for size in BATCH_SIZES:
            out[f"batch {size} | {rate}"] = [
                run_setting(data, s, **dict(BASE, learning_rate=rate, batch_size=size,
                                            epochs=UPDATES, scale_rate=True))[0]
                for s in seeds]
    return out


def bars4_batches(seeds=SEEDS):
    data = bars_and_stripes(4)
    rows = {"full batch": {},
            f"batches of {BARS4_BATCH}": dict(batch_size=BARS4_BATCH),
            f"batch {BARS4_BATCH}, eta scaled": dict(batch_size=BARS4_BATCH, epochs=UPDATES,
                                                     scale_rate=True)}
    return {name: [run_setting(data, s, **dict(BASE, **change))[0] for s in seeds]
            for name, change in rows.items()}


def search_run(rate, seed):
    """CD-1 on 4x4 bars and stripes: checkpoints and p(patterns) at SEARCH_STOP and the end."""
    data = bars_and_stripes(4)
    on_data = exact.state_index(data)
    model = rbm.RBM.random(16, 16, scale=0.01, rng=seed)
    rng, ll, p_data = np.random.default_rng(seed), [], []
    for updates in (SEARCH_STOP, SEARCH_UPDATES - SEARCH_STOP):
        h = train(model, data, CD(1), learning_rate=rate, epochs=updates,
                  batch_size=len(data), rng=rng, track_every=SEARCH_EVERY)
        ll += h.log_likelihood[len(ll) > 0:]  # no repeated checkpoint
        p_data.append(exact.visible_distribution(model)[on_data].tolist())
    return {"log_likelihood": ll, "p_patterns_1200": p_data[0], "p_patterns_end": p_data[1]}


def search():
    return {f"{rate} | {seed}": search_run(rate, seed)
            for rate in SEARCH_RATES for seed in SEARCH_SEEDS}


def equal_sweeps_run(k, seed):
    """CD-k for SWEEPS / k full-batch updates at learning rate 0.1 on 3x3 bars and stripes."""
    data = bars_and_stripes(3)
    model = rbm.RBM.random(9, 16, scale=0.01, rng=seed)
    h = train(model, data, CD(k), learning_rate=0.1, epochs=SWEEPS // k,
              batch_size=len(data), rng=np.random.default_rng(seed),
              track_every=SWEEP_EVERY // k)
    return h.log_likelihood


def equal_sweeps(seeds=SWEEP_SEEDS):
    return {f"CD-{k} | {s}": equal_sweeps_run(k, s) for k in (1, 10) for s in seeds}


PARTS = {"settings": settings, "batch_rates": batch_rates, "bars4_batches": bars4_batches,
         "search": search, "equal_sweeps": equal_sweeps}


def main(output=OUTPUT):
    write_parts(PARTS, Path(output) / f"{STEM}.json", __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main(*sys.argv[1:2])
