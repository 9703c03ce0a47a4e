"""The runs of chapters/mixing_and_tempering.ipynb kept out of its time budget, written to
chapters/data/mixing_control.json.

The chapter trains a 9 x 16 model on 3 x 3 bars and stripes with persistent CD (PCD-1, 50
chains, full batch, 6000 updates, the exact mean log-likelihood every 100 updates) at the
constant rate 0.3, where it collapses, and with the rate 0.3 / (1 + t / 500).  Two sets of runs
here, each :func:`pcd_run`, the chapter's own loop:

* ``exact_ascent_log_likelihood``: whether the collapse is an instability of the step itself:
  the exact likelihood gradient (``ExactGradient``) at the same constant rate 0.3, from the
  same start (initialisation 1), for the same updates (:func:`run`).  Deterministic.
* ``constant_rates``: PCD-1 at the constant rates CONSTANT_RATES, from initialisations 1 and 2,
  each with the sampling seeds 1 to 5 (``{rate: {"init-seed": log-likelihoods}}``): the
  constant rates the decaying one is compared with, tuned on a grid.

About half a minute of one core: ``python tools/mixing_control.py`` (``make mixing``).
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbm import RBM, exact  # noqa: E402
from rbm.datasets import bars_and_stripes  # noqa: E402
from rbm.estimators import PCD, ExactGradient  # noqa: E402
from rbm.training import train  # noqa: E402

RATE = 0.3
UPDATES = 6000
CHUNK = 100          # updates between two measurements of the log-likelihood
INIT = 1             # the seed of the starting weights (the chapter's initialisation 1)
CHECK_UPDATES = 500  # the test re-derives this many updates
CONSTANT_RATES = (0.03, 0.05, 0.1)
INITS = (1, 2)
SEEDS = (1, 2, 3, 4, 5)
OUT = ROOT / "chapters" / "data" / "mixing_control.json"


def pcd_run(seed, rate_at, init=INIT, estimator=None, updates=UPDATES, chunk=CHUNK):
    """The exact mean log-likelihood at 0, `chunk`, ..., `updates` updates of a 9 x 16 model
    (starting weights of seed `init`) trained on 3 x 3 bars and stripes, full batch, by
    `estimator` (by default PCD-1 with 50 chains) drawing with the seed `seed`, at the rate
    ``rate_at(t)`` for the `chunk` updates from update t."""
    data = bars_and_stripes(3)
    model = RBM.random(9, 16, scale=0.01, rng=init)
    estimator = estimator or PCD(n_chains=50, k=1)
    rng = np.random.default_rng(seed)
    log_lik = [float(exact.log_likelihood(model, data))]
    for start in range(0, updates, chunk):
        train(model, data, estimator, learning_rate=rate_at(start), epochs=chunk,
              batch_size=len(data), rng=rng)
        log_lik.append(float(exact.log_likelihood(model, data)))
    return log_lik


def run(updates=UPDATES):
    """Exact ascent at the constant rate RATE from initialisation INIT."""
    return pcd_run(0, lambda t: RATE, INIT, ExactGradient(), updates)


def constant_run(rate, init, seed, updates=UPDATES):
    """PCD-1 at the constant `rate`."""
    return pcd_run(seed, lambda t: rate, init, updates=updates)


def main():
    constant = {str(rate): {f"{init}-{seed}": constant_run(rate, init, seed)
                            for init in INITS for seed in SEEDS}
                for rate in CONSTANT_RATES}
    OUT.write_text(json.dumps({"rate": RATE, "updates": UPDATES, "chunk": CHUNK, "init": INIT,
                               "exact_ascent_log_likelihood": run(),
                               "constant_rates": constant}))


if __name__ == "__main__":
    main()
