"""Train the Potts-dReLU models of chapters/other_unit_types longer than the page can, and write
chapters/data/potts_drelu.json.

Usage: python tools/train_potts.py [OUTPUT_DIR]     (behind `make potts`)

The chapter trains two dReLU units on ``datasets.sequence_families(400, rng=0)`` with the exact
gradient for 300 full-batch epochs at learning rate 0.1 (initial weights ``scale=0.1, rng=2``,
training ``rng=3``).  This script records, with the same data and code:

``long``: that run, and the same with three hidden units, continued to 1500 epochs, with the
exact log-likelihood of the training and held-out sequences every 100 epochs and, at the end,
the model's probability of the complementary pairs and of the same-letter pairs at the
contact (positions 3 and 5).

``seeds``: the 300-epoch run of two units on 7 (data, initialisation) seeds ``k = 0..6``
(data ``rng=k``, weights ``rng=k + 2``, training ``rng=k + 3``; ``k = 0`` is the page's run):
the largest correlation of a unit's input with the family, and the share of the other unit's
squared weight (zero-sum gauge) on positions 3 and 5.

Everything is seeded and single-threaded; about five minutes of one core.  The test
tests/test_potts_cache.py re-derives the first 100 epochs of the long runs.
"""

import json
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import datasets, exact, training
from rbm.layers import DReLU, Potts
from rbm.model import zero_sum_gauge

ROOT = Path(__file__).resolve().parent.parent
N_POS, Q = 6, 4
COMPLEMENTARY = ((0, 3), (3, 0), (1, 2), (2, 1))
LONG_EPOCHS, SEED_EPOCHS, EVERY = 1500, 300, 100


def data(k):
    """Training sequences and families (rng=k), held-out sequences (rng=1 for k=0, else 100+k)."""
    X, family = datasets.sequence_families(400, rng=k)
    held, _ = datasets.sequence_families(4000, rng=1 if k == 0 else 100 + k)
    return X, family, held


def sites(X):
    """The model of independent positions: smoothed letter frequencies."""
    counts = np.stack([(X == a).sum(axis=0) for a in range(Q)], axis=1)
    return Potts(np.log((counts + 1) / (len(X) + Q)))


def start(X, n_hidden, k=0):
    return rbm.RBM.random(sites(X), DReLU(np.zeros(n_hidden), np.zeros(n_hidden)), scale=0.1,
                          rng=k + 2)


def train(model, X, epochs, k=0):
    """Full-batch exact gradient, learning rate 0.1 (the page's run)."""
    return training.train(model, X, rbm.ExactGradient(), learning_rate=0.1, epochs=epochs,
                          batch_size=len(X), rng=k + 3)


def contact_masses(model):
    """p(x3, x5) summed over the complementary pairs and over the same-letter pairs."""
    p = exact.visible_distribution(model)
    V = model.visible.states(0, Q**N_POS)
    joint = np.zeros((Q, Q))
    np.add.at(joint, (V[:, 3].astype(int), V[:, 5].astype(int)), p)
    return float(sum(joint[a, b] for a, b in COMPLEMENTARY)), float(np.trace(joint))


def units(model, X, family):
    """(largest |corr| of a unit's input with the family, the other unit's share on 3 and 5)."""
    gauged = zero_sum_gauge(model)
    share = (gauged.W**2).sum(axis=1)
    share /= share.sum(axis=0)
    inputs = gauged.input_hidden(X)
    corr = [abs(np.corrcoef(inputs[:, j], family)[0, 1]) for j in range(2)]
    f = int(np.argmax(corr))
    return float(corr[f]), float(share[[3, 5], 1 - f].sum())


def long_run(n_hidden, epochs=LONG_EPOCHS):
    """The page's run with `n_hidden` units, in segments of 100 epochs (full batches: the
    shuffle of each segment changes only the order of summation)."""
    X, _, held = data(0)
    model = start(X, n_hidden)
    train_ll, held_ll = [], []
    for n in range(epochs // EVERY + 1):
        train_ll.append(float(exact.log_likelihood(model, X)))
        held_ll.append(float(exact.log_likelihood(model, held)))
        if n < epochs // EVERY:
            train(model, X, EVERY)
    comp, same = contact_masses(model)
    return {"epochs": list(range(0, epochs + 1, EVERY)), "train": train_ll, "held": held_ll,
            "complementary": comp, "same_letter": same}


def main(out=ROOT / "chapters" / "data"):
    result = {"long": {}, "seeds": []}
    with threadpool_limits(1):
        for n_hidden in (2, 3):
            result["long"][str(n_hidden)] = long_run(n_hidden)
            print(n_hidden, result["long"][str(n_hidden)]["train"][-1], flush=True)
        for k in range(7):
            X, family, held = data(k)
            model = start(X, 2, k)
            train(model, X, SEED_EPOCHS, k)
            corr, share = units(model, X, family)
            result["seeds"].append({"k": k, "family_corr": corr, "contact_share": share,
                                    "held": float(exact.log_likelihood(model, held))})
            print(result["seeds"][-1], flush=True)
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "potts_drelu.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
