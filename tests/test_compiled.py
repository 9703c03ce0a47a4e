"""The compiled inner loops (rbm._compiled, optional: numba) against the numpy path.

Without numba installed only the tests of the fallback and of the errors run;
``make test OPTIONAL=1`` runs every test of the package (this file included)
with numba installed, so the compiled path is then also what every other test
of rbm.exact exercises.
"""

import numpy as np
import pytest

import rbm
from rbm import _compiled
from rbm import _enumeration as engine
from rbm import exact

needs_numba = pytest.mark.skipif(not _compiled.AVAILABLE, reason="numba is not installed")


def test_engine_none_falls_back_to_numpy_without_numba(monkeypatch):
    monkeypatch.setattr(_compiled, "AVAILABLE", False)
    assert engine.check_engine(None) is engine.ProductEnumeration
    assert engine.check_engine("numpy") is engine.ProductEnumeration
    with pytest.raises(ValueError, match="engine='numba' needs the optional dependency numba"):
        exact.log_partition(rbm.RBM.random(4, 3, rng=0), engine="numba")


@pytest.mark.parametrize("bad", ["NUMBA", "c", 1])
def test_bad_engine_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="engine must be None, 'numpy' or 'numba'"):
        exact.log_partition(rbm.RBM.random(4, 3, rng=0), engine=bad)


@needs_numba
def test_engine_none_is_compiled_when_numba_is_installed():
    assert engine.check_engine(None) is engine.CompiledProductEnumeration


# Sizes: one block, several blocks and batches (the segment lengths are not multiples of
# the batch), several segments (threads), wide layers; weights up to 30 split the units
# into many groups of factors, and large biases move the centres away from zero.
CASES = [
    (6, 5, 1.0, 1.0, None),
    (150, 9, 0.01, 0.01, 4),
    (150, 9, 30.0, 30.0, 4),
    (40, 14, 3.0, 50.0, 8),
    (1200, 6, 1.0, 1.0, None),
    (300, 15, 0.1, 0.1, None),
]


@needs_numba
@pytest.mark.parametrize("n_visible, n_hidden, scale, bias_scale, chunk_size", CASES)
def test_compiled_matches_numpy_to_1e_12(n_visible, n_hidden, scale, bias_scale, chunk_size):
    """log Z to 1e-12 relative, every moment to 1e-12 absolute, both layers."""
    model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=bias_scale, rng=5)
    layers = ["hidden", "visible"] if n_visible <= 16 else ["hidden"]
    for layer in layers:
        a_x, a_y, M, _ = engine.layer_setup(model, layer)
        made = engine.make_enumeration(a_x, a_y, M, engine.block_size(*M.shape, chunk_size),
                                       True, engine="numba")
        assert isinstance(made, engine.CompiledProductEnumeration)  # not the stable path
        results = {}
        for name in ("numpy", "numba"):
            results[name] = exact._enumerate(model, layer=layer, moments=True,
                                             chunk_size=chunk_size, engine=name)
        (z_np, m_np), (z_nb, m_nb) = results["numpy"], results["numba"]
        assert z_nb == pytest.approx(z_np, rel=1e-12, abs=0)
        for field in ("vh", "v", "h"):
            assert np.max(np.abs(getattr(m_nb, field) - getattr(m_np, field))) <= 1e-12


@needs_numba
def test_compiled_matches_numpy_on_random_models():
    """A seeded sweep of 40 random shapes and scales, log Z and the gradient."""
    rng = np.random.default_rng(2026)
    for _ in range(40):
        n_visible, n_hidden = int(rng.integers(1, 60)), int(rng.integers(1, 13))
        scale = float(10 ** rng.uniform(-2, 1.3))
        model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=rng)
        data = rng.integers(0, 2, size=(7, n_visible))
        z = {e: exact.log_partition(model, engine=e) for e in ("numpy", "numba")}
        assert z["numba"] == pytest.approx(z["numpy"], rel=1e-12, abs=1e-12)
        g = {e: exact.gradient(model, data, engine=e) for e in ("numpy", "numba")}
        for field in ("W", "b", "c"):
            assert np.max(np.abs(getattr(g["numba"], field) - getattr(g["numpy"], field))) <= 1e-12


@needs_numba
def test_compiled_matches_the_plain_reference():
    """Against rbm.exact's own plain references, sharing no code with either path."""
    model = rbm.RBM.random(10, 7, scale=2.0, bias_scale=2.0, rng=3)
    data = np.random.default_rng(3).integers(0, 2, size=(5, 10))
    assert exact.log_partition(model, engine="numba") == pytest.approx(
        exact._reference_log_partition(model), rel=1e-12)
    got, want = exact.gradient(model, data, engine="numba"), exact._reference_gradient(model, data)
    for field in ("W", "b", "c"):
        assert np.allclose(getattr(got, field), getattr(want, field), rtol=0, atol=1e-12)


@needs_numba
def test_compiled_results_are_bit_identical_whatever_the_thread_count():
    """2**22 entries and more are split into 16 segments: 1, 2 or 3 threads sum them."""
    model = rbm.RBM.random(300, 15, scale=0.1, rng=8)
    assert 2**15 * 300 >= engine.THREADED_ELEMENTS
    first = exact._enumerate(model, moments=True, n_threads=1, engine="numba")
    for n_threads in (2, 3):
        again = exact._enumerate(model, moments=True, n_threads=n_threads, engine="numba")
        assert again[0] == first[0]
        for field in ("vh", "v", "h"):
            assert np.array_equal(getattr(again[1], field), getattr(first[1], field))


@needs_numba
def test_weights_too_large_for_products_run_the_stable_path_with_either_engine():
    model = rbm.RBM.random(30, 5, scale=1e4, rng=1)
    a_x, a_y, M, _ = engine.layer_setup(model, None)
    made = engine.make_enumeration(a_x, a_y, M, 4, False, engine="numba")
    assert isinstance(made, engine.StableEnumeration)
    assert exact.log_partition(model, engine="numba") == exact.log_partition(model,
                                                                              engine="numpy")
