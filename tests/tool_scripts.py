"""What the cache tests share: the scripts of ``tools/`` loaded as modules, their caches, and
the comparison of a re-derived value with the cached one.

Each heavy chapter reads a cache in ``chapters/data`` written by a ``make`` target that runs a
script of ``tools/``; its test module loads that script with :func:`load_tool` and re-derives a
part of the cache with the script's own code, comparing with :func:`assert_close`.

The same code on another processor rounds differently (another BLAS kernel, NumPy's SIMD
dispatch), so a re-derived value is compared with a tolerance, never bit for bit; each test
states its tolerance next to the spread measured across numeric environments.  To measure that
spread again, run a cache test with ``CACHE_SPREAD_LOG=<file>`` (then :func:`assert_close`
appends the found and cached values to the file, one JSON line per comparison, and asserts
nothing) under each environment, e.g.::

    CACHE_SPREAD_LOG=/tmp/haswell.jsonl OPENBLAS_CORETYPE=Haswell pytest tests/test_recipe_cache.py
    CACHE_SPREAD_LOG=/tmp/base.jsonl OPENBLAS_CORETYPE=Sandybridge \\
        NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" pytest tests/...

and with ``CACHE_SPREAD_NUDGE=1e-12`` as well, which adds that much to one weight (of the centre
visible unit) of every model the scripts start from (``RBM.random``): whether a run is chaotic
at the compared checkpoint (a nudge far above rounding that moves the value by much more than
the nudge).
"""

import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

from rbm import RBM

ROOT = Path(__file__).resolve().parent.parent

SPREAD_LOG = os.environ.get("CACHE_SPREAD_LOG")
NUDGE = float(os.environ.get("CACHE_SPREAD_NUDGE", 0.0))

if NUDGE:
    _random = RBM.random.__func__

    def _nudged_random(cls, *args, **kwargs):
        """The model with the weight of its centre visible unit (the centre pixel of a square
        image; a corner pixel of the digits is never on) to the first hidden unit nudged."""
        model = _random(cls, *args, **kwargs)
        n = model.W.shape[0]
        side = math.isqrt(n)
        row = (side // 2) * side + side // 2 if side * side == n else n // 2
        model.W.reshape(n, -1)[row, 0] += NUDGE
        return model

    RBM.random = classmethod(_nudged_random)


def load_tool(name):
    """The script ``tools/<name>.py`` as a module (``tools/`` is not a package; it goes on
    ``sys.path``, as when the script runs, for the helpers the scripts share)."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.append(str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # registered under its name, as an import would (the standard recipe of importlib's
    # documentation), so that pickle finds its functions (tools/experiments.py's process pool)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def read_cache(stem):
    """The JSON cache ``chapters/data/<stem>.json``."""
    return json.loads((ROOT / "chapters" / "data" / f"{stem}.json").read_text())


def assert_close(found, cached, what="", *, rtol=0.0, atol=0.0):
    """Assert ``|found - cached| <= atol + rtol |cached|`` entrywise (numpy's assert_allclose).

    With ``CACHE_SPREAD_LOG`` set, append both to that file instead and assert nothing.
    """
    found, cached = np.asarray(found, dtype=float), np.asarray(cached, dtype=float)
    if SPREAD_LOG:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        with open(SPREAD_LOG, "a") as f:
            f.write(json.dumps({"test": test, "what": str(what), "found": found.tolist(),
                                "cached": cached.tolist()}) + "\n")
        return
    np.testing.assert_allclose(found, cached, rtol=rtol, atol=atol, err_msg=str(what))


def assert_grid_complete(table, grid, ex):
    """Assert that `table` (a cache of ``tools/experiments.py``'s ``run_grid``) holds `grid`:
    the same grid and checkpoints, every (data set, arm, rate, seed) run unnudged, and each
    arm's chosen rates (for every data set and budget) rerun nudged on every reported seed.
    `ex` is the loaded ``experiments`` module."""
    assert table["grid"] == grid.to_json()
    assert table["checkpoints"] == grid.checkpoints
    plain = {(c["data_set"], c["arm"], c["rate"], c["seed"]) for c in table["cells"]
             if c["nudge"] == 0}
    assert plain == {(d, a, r, s) for d in grid.data_sets for a in grid.arms
                     for r in grid.rates_of(a) for s in grid.seeds_of(d) + grid.validation_seeds}
    assert all(len(c["log_likelihood"]) == len(grid.checkpoints) for c in table["cells"])
    for d in grid.data_sets:
        for b in grid.budgets:
            for arm, rate in ex.best_rates(table, d, b).items():
                seeds = {c["seed"] for c in table["cells"] if c["nudge"] == grid.nudge
                         and (c["data_set"], c["arm"], c["rate"]) == (d, arm, rate)}
                assert seeds == set(grid.seeds_of(d)), (d, b, arm)
