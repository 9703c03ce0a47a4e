"""chapters/around_the_partition_function reads its training curves from chapters/data; they
cannot drift.

``tools/train_principles.py`` (``make principles``) writes them in roughly half an hour of
one core.  These tests re-derive the first measured segment of some runs with the script's own
code and compare with what is committed, and check where the runs are read at the budget.
"""

import importlib.util
import json
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("train_principles",
                                              ROOT / "tools/train_principles.py")
tp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp)

# the same code on another machine may round differently (BLAS kernels), never by more
# than this over one segment of training
RTOL = 1e-9


@pytest.fixture(scope="module")
def cache():
    return json.loads((ROOT / "chapters/data/principles_comparison.json").read_text())


@pytest.fixture(scope="module")
def consistency():
    return json.loads((ROOT / "chapters/data/principles_consistency.json").read_text())


@pytest.mark.parametrize("name", list(tp.DATASETS))
def test_the_budget_point_is_within_half_an_update_of_the_budget(name):
    n_hidden, batch_size, _, _ = tp.DATASETS[name]
    n, n_visible = tp.load(name)[0].shape
    for method in tp.METHODS:
        passes = tp.passes_per_row(method, n_visible, n_hidden, batch_size)
        whole, extra = tp.budget_point(name, method)
        reached = passes * (whole + extra * batch_size / n)
        assert abs(reached - tp.budget(name)) <= passes * batch_size / n / 2 + 1e-9


def test_every_run_is_measured_at_the_budget_unless_it_diverged(cache):
    for key, curve in cache["runs"].items():
        assert "budget" in curve or "diverged" in curve, key


def test_the_consistency_cache_holds_every_fit(consistency):
    assert set(consistency["n_kl"]) == {f"{m} | {n}" for m in ("PL", "NCE")
                                        for n in tp.KL_SIZES}
    assert all(len(v) == len(tp.KL_SEEDS) for v in consistency["n_kl"].values())
    assert set(consistency["dsm_error"]) == {f"{s} | {n} | {seed}"
                                             for s, n, seed in tp.DSM_RUNS}


def test_the_cache_holds_every_run(cache):
    expected = {f"{name} | {method} | {rate}" for name in tp.DATASETS for method in tp.METHODS
                for rate in tp.LEARNING_RATES}
    assert set(cache["runs"]) == expected


@pytest.mark.parametrize("name", list(tp.DATASETS))
@pytest.mark.parametrize("method", ["ML", "PCD-1", "MPF", "NCE"])
def test_the_first_segment_of_a_run_is_reproduced(cache, name, method):
    with threadpool_limits(1, user_api="blas"):
        curve = tp.run(name, method, 0.1, segments=1)
    cached = cache["runs"][f"{name} | {method} | 0.1"]
    assert curve["epochs"] == cached["epochs"][:2]
    for key in ("train", "held_out"):
        assert curve[key] == pytest.approx(cached[key][:2], rel=RTOL)
