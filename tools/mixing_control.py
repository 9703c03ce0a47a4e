"""The control run of chapters/mixing_and_tempering.ipynb: exact gradient ascent at the constant
rate 0.3, written to chapters/data/mixing_control.json.

The chapter trains a 9 x 16 model on 3 x 3 bars and stripes with persistent CD at the constant
rate 0.3, where it collapses, and with a decaying rate.  This run asks whether the collapse is an
instability of the step itself: the exact likelihood gradient (``ExactGradient``) at the same
constant rate, from the same start (initialisation 1), for the same 6000 full-batch updates, with
the exact mean log-likelihood every 100 updates -- the chapter's own ``pcd_run`` with the exact
gradient.  It is deterministic; about five seconds of one core (kept out of the notebook's time
budget):  ``python tools/mixing_control.py`` (``make mixing``).
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbm import RBM, exact  # noqa: E402
from rbm.datasets import bars_and_stripes  # noqa: E402
from rbm.estimators import ExactGradient  # noqa: E402
from rbm.training import train  # noqa: E402

RATE = 0.3
UPDATES = 6000
CHUNK = 100          # updates between two measurements of the log-likelihood
INIT = 1             # the seed of the starting weights (the chapter's initialisation 1)
CHECK_UPDATES = 500  # the test re-derives this many updates
OUT = ROOT / "chapters" / "data" / "mixing_control.json"


def run(updates=UPDATES):
    """The exact mean log-likelihood at 0, CHUNK, ..., `updates` updates."""
    data = bars_and_stripes(3)
    model = RBM.random(9, 16, scale=0.01, rng=INIT)
    rng = np.random.default_rng(0)
    log_lik = [float(exact.log_likelihood(model, data))]
    for _ in range(0, updates, CHUNK):
        train(model, data, ExactGradient(), learning_rate=RATE, epochs=CHUNK,
              batch_size=len(data), rng=rng)
        log_lik.append(float(exact.log_likelihood(model, data)))
    return log_lik


def main():
    OUT.write_text(json.dumps({"rate": RATE, "updates": UPDATES, "chunk": CHUNK, "init": INIT,
                               "exact_ascent_log_likelihood": run()}))


if __name__ == "__main__":
    main()
