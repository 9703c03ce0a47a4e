"""Momentum against plain steps, each at its best learning rate: the core's momentum recipe line.

Usage: python tools/run_momentum.py [--reuse] [OUTPUT_DIR]     (behind `make momentum`)

(``--reuse`` takes over the runs of an earlier ``momentum.json`` in OUTPUT_DIR that the grid
still has, unchanged, and runs only the rest: after a change of the grid, not of the package.)

The quickstart and chapter 6 said that momentum 0.5 "ended above plain steps of the same size
in 10 of 10 seeds", measured with CD-1 at learning rate 0.1 for 2000 updates on 3x3 bars and
stripes; a referee found it holds on 2 of 10 seeds at 8000 updates, on 2 and 0 of 10 at rate 0.3
and on 0 of 10 with CD-10 (round 5, referee_core.md, finding 1).  This runs the comparison by
the protocol of ``tools/experiments.py``: arms plain and momentum 0.5 (the recipe's value), each
with CD-1 and with CD-10; learning rates on one grid of effective steps eta / (1 - mu) for both
arms (0.03, 0.06, 0.1, 0.2, 0.3: plain steps at these rates, momentum at half of them), each
arm's chosen on three validation seeds (10-12) per data set and budget; the reported seeds 0-9
(seed ``s`` draws the starting weights from N(0, 0.01^2), ``100 + s`` the training, as in
``train_recipe.py``: the 3x3 CD-1 momentum run at rate 0.1 is the recipe's base run); budgets
of 2000 and 8000 full-batch updates, each read as the mean exact log-likelihood of the
training data over its last 5 of 20 checkpoints; 3x3 and 4x4 bars and stripes with 16 hidden
units; then each arm at its chosen rates again with one starting weight nudged by 1e-12.

Writes ``momentum.json`` (the table of :func:`experiments.run_grid`) and prints the sentences.
About 17 minutes of one core from scratch (680 runs; estimated from the per-run costs, which
the first 472 runs, 728 CPU s, calibrate; the cache was written in pieces with ``--reuse``).
Single-threaded and seeded, so another machine gives the same numbers up to rounding
(``tests/test_momentum_cache.py`` re-derives some runs).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `experiments` when imported
import experiments as ex  # noqa: E402

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "momentum"
MOMENTUM = 0.5
ESTIMATORS = ("CD-1", "CD-10")
#: The effective steps eta / (1 - mu) tried: momentum mu multiplies a step of rate eta by
#: 1 / (1 - mu) once the velocity has built up, so both arms are tuned over the same steps.
#: (On a shared grid of rates 0.03-0.3, plain steps chose 0.3 at 2000 updates and momentum 0.03
#: at 8000, ends of the grid; momentum at rate r ended level with plain steps at 2r.)
STEPS = (0.03, 0.06, 0.1, 0.2, 0.3)
GRID = ex.Grid(
    arms={f"{name} {est}": ex.Arm(est, momentum=mu) for est in ESTIMATORS
          for name, mu in (("plain", 0.0), (f"momentum {MOMENTUM}", MOMENTUM))},
    rates={f"{name} {est}": tuple(round(step * (1 - mu), 6) for step in STEPS)
           for est in ESTIMATORS
           for name, mu in (("plain", 0.0), (f"momentum {MOMENTUM}", MOMENTUM))},
    seeds=tuple(range(10)),
    validation_seeds=(10, 11, 12),
    budgets=(2000, 8000),
    data_sets=("bars and stripes 3x3", "bars and stripes 4x4"),
)


def sentences(table, *, rates=None):
    """One sentence per estimator, data set and budget: momentum against plain steps."""
    grid = table["grid"]
    out = []
    for est in ESTIMATORS:
        a, b = f"momentum {MOMENTUM} {est}", f"plain {est}"
        for data_set in grid["data_sets"]:
            for budget in grid["budgets"]:
                fixed = None if rates is None else {a: rates, b: rates}
                out.append(ex.sentence(ex.compare(table, a, b, data_set=data_set, budget=budget,
                                                  rates=fixed)))
    return out


def main(output=OUTPUT, processes=1, reuse=False):
    path = Path(output) / f"{STEM}.json"
    start = time.time()
    table = ex.run_grid(GRID, processes=processes,
                        reuse=ex.read_cache(path) if reuse and path.exists() else None)
    table["wall_seconds"] = time.time() - start
    ex.write_cache(table, path, __doc__.split("\n\n")[0])
    print(f"CPU {sum(table['cpu_seconds'].values()):.0f} s, wall {table['wall_seconds']:.0f} s")
    print("\nEach arm at its best rate (chosen on the validation seeds):")
    print("\n".join(sentences(table)))
    print("\nBoth at rate 0.1 (the recipe's setting):")
    print("\n".join(sentences(table, rates=0.1)))


if __name__ == "__main__":
    args = sys.argv[1:]
    reuse = "--reuse" in args
    args = [a for a in args if a != "--reuse"]
    main(*args[:1], reuse=reuse)
