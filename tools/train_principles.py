"""Train one RBM per training principle on two data sets and write what chapters/around_the_partition_function reads.

Usage: python tools/train_principles.py [OUTPUT_DIR]     (behind `make principles`)

Eight ways to train the same starting model (ML with the exact gradient,
CD-1, CD-10, PCD-1, pseudo-likelihood, ratio matching, minimum probability
flow, noise-contrastive estimation) on 4x4 bars and stripes (16 x 8) and on
the binarised 8x8 digits (64 x 10, 300 digits held out), each at three
learning rates (0.03, 0.1, 0.3; no momentum) and the same batches and epochs, and the exact log-likelihood of the
training and held-out rows measured along the way.  Writes
``principles_comparison.json`` (settings, costs, curves).

Everything is seeded and single-threaded and uses only :mod:`rbm`, so another
machine gives the same numbers up to floating-point rounding
(``tests/test_principles_cache.py`` re-derives the first measured segment of
every run and compares).  About fifteen minutes of one core.
"""

import json
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import datasets, exact, principles, training

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "principles_comparison"

METHODS = ("ML", "CD-1", "CD-10", "PCD-1", "PL", "RM", "MPF", "NCE")
NOISE_RATIO = 4.0
LEARNING_RATES = (0.03, 0.1, 0.3)
INIT_SCALE = 0.01
MODEL_SEED, TRAIN_SEED = 1, 2
DATASETS = {
    # name: (n_hidden, batch_size, epochs, epochs between measurements)
    "bars and stripes 4x4": (8, 10, 1000, 20),
    "digits 8x8": (10, 100, 100, 2),
}
HELD_OUT_PER_CLASS = 30


def load(name):
    """Training and held-out rows (bars and stripes: the 30 patterns are both)."""
    if name.startswith("bars"):
        data = datasets.bars_and_stripes(4)
        return data, data
    data, labels = datasets.digits()
    train, held_out = datasets.split_by_class(labels, HELD_OUT_PER_CLASS, rng=0)
    return data[train], data[held_out]


def estimator(method, batch_size):
    """A fresh estimator of `method`; PCD keeps one chain per row of a batch."""
    return {"ML": lambda: rbm.ExactGradient(), "CD-1": lambda: rbm.CD(1),
            "CD-10": lambda: rbm.CD(10), "PCD-1": lambda: rbm.PCD(batch_size),
            "PL": principles.PseudoLikelihood, "RM": principles.RatioMatching,
            "MPF": principles.MinimumProbabilityFlow,
            "NCE": lambda: principles.NoiseContrastive(noise_ratio=NOISE_RATIO)}[method]()


def passes_per_row(method, n_visible, n_hidden, batch_size):
    """Products of one state with W (a visible row with W, or a hidden row with W^T) per
    training row of an update: the unit of compute of the chapter.

    CD-k: one for the data's hidden means, two per Gibbs step; PCD-1 the same with one
    chain per row; PL, RM, MPF: the free energy of the row and of its n_visible
    one-bit neighbours; NCE: the row and nu noise rows; ML: the data's hidden means
    plus the enumeration of the 2**n_hidden hidden states, shared by the batch.
    """
    return {"ML": 1 + 2 ** min(n_visible, n_hidden) / batch_size, "CD-1": 3, "CD-10": 21,
            "PCD-1": 3, "PL": 1 + n_visible, "RM": 1 + n_visible, "MPF": 1 + n_visible,
            "NCE": 1 + NOISE_RATIO}[method]


def run(name, method, learning_rate, segments=None):
    """Train one model; return its curve: epochs, exact train and held-out log-likelihood.

    Training runs in segments of ``track_epochs`` epochs, one call of
    :func:`rbm.training.train` each with the same generator and estimator (so the
    shuffles, draws, chains and NCE's ``log_z`` carry over), measured after each.
    """
    n_hidden, batch_size, epochs, track_epochs = DATASETS[name]
    train, held_out = load(name)
    model = rbm.RBM.random(train.shape[1], n_hidden, scale=INIT_SCALE, rng=MODEL_SEED)
    est = estimator(method, batch_size)
    rng = np.random.default_rng(TRAIN_SEED)
    curve = {"epochs": [0], "train": [exact.log_likelihood(model, train)],
             "held_out": [exact.log_likelihood(model, held_out)]}
    for _ in range(segments or epochs // track_epochs):
        try:
            training.train(model, train, est, learning_rate=learning_rate,
                           epochs=track_epochs, batch_size=batch_size, rng=rng)
        except ValueError as err:  # diverged: the curve ends here
            curve["diverged"] = str(err)
            break
        curve["epochs"].append(curve["epochs"][-1] + track_epochs)
        curve["train"].append(exact.log_likelihood(model, train))
        curve["held_out"].append(exact.log_likelihood(model, held_out))
    if method == "NCE":
        curve["nce_log_z"] = est.log_z
        curve["exact_log_z"] = exact.log_partition(model)
    return curve


def main(output=OUTPUT):
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    results = {"settings": {"methods": METHODS, "noise_ratio": NOISE_RATIO,
                            "learning_rates": LEARNING_RATES,
                            "init_scale": INIT_SCALE, "model_seed": MODEL_SEED,
                            "train_seed": TRAIN_SEED, "datasets": DATASETS,
                            "held_out_per_class": HELD_OUT_PER_CLASS},
               "runs": {}}
    with threadpool_limits(1, user_api="blas"):
        for name, (n_hidden, batch_size, _, _) in DATASETS.items():
            n_visible = load(name)[0].shape[1]
            for method in METHODS:
                for rate in LEARNING_RATES:
                    curve = run(name, method, rate)
                    curve["passes_per_row"] = passes_per_row(method, n_visible, n_hidden,
                                                             batch_size)
                    results["runs"][f"{name} | {method} | {rate}"] = curve
                    print(f"{name} {method} {rate}: train {curve['train'][-1]:.3f}, held out "
                          f"{curve['held_out'][-1]:.3f}", flush=True)
    (output / f"{STEM}.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
