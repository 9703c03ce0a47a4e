"""The fast enumeration (rbm._enumeration, behind rbm.exact) against a plain one written here.

The plain reference computes every pre-activation with a matrix product and
the softplus entry by entry (np.logaddexp), then a log-sum-exp over all
states: slow, obviously right, and sharing no code with the fast path.
"""

import itertools

import numpy as np
import pytest

import rbm
from rbm import _enumeration as engine
from rbm import exact


def plain_log_z_and_moments(model):
    """log Z and model moments, enumerating all hidden states with plain numpy."""
    H = np.array(list(itertools.product([0.0, 1.0], repeat=model.n_hidden)))
    pre = H @ model.W.T + model.b  # (2**n_hidden, n_visible)
    log_w = H @ model.c + np.logaddexp(0.0, pre).sum(axis=1)
    log_z = np.logaddexp.reduce(log_w)
    p = np.exp(log_w - log_z)
    with np.errstate(over="ignore"):  # exp(-pre) = inf gives the right mean, 0
        mean_v = 1.0 / (1.0 + np.exp(-pre))
    return log_z, (p[:, None] * mean_v).T @ H, p @ mean_v, p @ H


@pytest.mark.parametrize("method", ["product", "stable"])
@pytest.mark.parametrize("scale", [0.01, 1.0, 10.0, 50.0])
@pytest.mark.parametrize("n_visible, n_hidden", [(150, 9), (1200, 6)])
def test_fast_enumeration_matches_plain(n_visible, n_hidden, scale, method):
    """Both paths; wide visible layers (1200 > one stable product block of 1000);
    weights up to 50 (products of centred factors split into many groups)."""
    model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=11)
    log_z, vh, v, h = plain_log_z_and_moments(model)
    for chunk_size, n_threads in [(None, None), (1, 1), (4, 2), (2**n_hidden, 3)]:
        got, moments = exact._enumerate(model, moments=True, chunk_size=chunk_size,
                                        n_threads=n_threads, method=method)
        assert got == pytest.approx(log_z, rel=1e-12)
        assert np.allclose(moments.vh, vh, rtol=1e-9, atol=1e-12)
        assert np.allclose(moments.v, v, rtol=1e-9, atol=1e-12)
        assert np.allclose(moments.h, h, rtol=1e-9, atol=1e-12)
        assert exact.log_partition(model, chunk_size=chunk_size, n_threads=n_threads) == (
            pytest.approx(log_z, rel=1e-12))


@pytest.mark.parametrize("scale", [1.0, 30.0])
def test_product_path_groups_units_within_the_budget(scale):
    """Every group of centred factors has radii summing within the budget, and
    larger weights need more groups (the bound is what keeps products finite)."""
    model = rbm.RBM.random(300, 10, scale=scale, bias_scale=scale, rng=4)
    a_x, a_y, M, _ = engine.layer_setup(model, None)
    enum = engine.ProductEnumeration(a_x, a_y, M, 2**6, moments=False)
    assert enum.feasible
    covered = [j for g in enum.groups for j in range(g.start, g.stop)]
    assert covered == list(range(300))
    if scale == 1.0:
        assert 1 <= len(enum.groups) <= 3
    else:
        assert len(enum.groups) > 20


def test_weights_too_large_for_products_take_the_stable_path():
    model = rbm.RBM.random(40, 8, scale=800.0, bias_scale=1.0, rng=5)
    a_x, a_y, M, _ = engine.layer_setup(model, None)
    assert not engine.ProductEnumeration(a_x, a_y, M, 2**4, moments=False).feasible
    with pytest.raises(ValueError, match="method='product'"):
        exact._enumerate(model, method="product")
    log_z = plain_log_z_and_moments(model)[0]
    assert exact.log_partition(model) == pytest.approx(log_z, rel=1e-12)
    with pytest.raises(ValueError, match="method must be"):
        exact._enumerate(model, method="fast")


@pytest.mark.parametrize("n_visible, n_hidden", [(40, 12), (64, 16), (12, 64)])
def test_results_are_bit_identical_whatever_the_thread_count(n_visible, n_hidden):
    """The block layout and summation order depend on the problem alone: threads only
    share out fixed segments (64 x 16 is past the size where enumerations are threaded)."""
    model = rbm.RBM.random(n_visible, n_hidden, scale=1.0, bias_scale=1.0, rng=2)
    data = (np.random.default_rng(0).random((7, n_visible)) < 0.5).astype(float)
    reference = exact.gradient(model, data, n_threads=1)
    log_z = exact.log_partition(model, n_threads=1)
    for n_threads in (None, 2, 3, 5):
        assert exact.log_partition(model, n_threads=n_threads) == log_z
        assert np.array_equal(exact.gradient(model, data, n_threads=n_threads).flat(),
                              reference.flat())


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("method", ["product", "stable"])
def test_large_biases_with_small_weights_match_plain(sign, method):
    """Pre-activations far from zero and close together (biases of several hundred, weights
    of 0.01): the regime where a wrong centre of the product path would give NaN or a
    wrong log Z unnoticed (found by planting one)."""
    rng = np.random.default_rng(7)
    n_visible, n_hidden = 30, 8
    model = rbm.RBM(W=rng.normal(0, 0.01, (n_visible, n_hidden)),
                    b=sign * rng.uniform(300, 700, n_visible),
                    c=sign * rng.uniform(300, 700, n_hidden))
    log_z, vh, v, h = plain_log_z_and_moments(model)
    for chunk_size in (None, 2):
        got, moments = exact._enumerate(model, moments=True, chunk_size=chunk_size,
                                        method=method)
        assert got == pytest.approx(log_z, rel=1e-13)
        for mine, plain in ((moments.vh, vh), (moments.v, v), (moments.h, h)):
            assert np.allclose(mine, plain, rtol=1e-12, atol=1e-14)


def test_product_path_stays_accurate_when_the_centres_are_far_from_zero():
    """1000 visible units with weights 100 and bias -20, hidden biases -1e5: only the
    all-off hidden state counts, so log Z = log 2 + 1000 softplus(-20) exactly. Centred
    at the midpoint of their ranges (about 190) the factors would leave an absolute
    error of eps * 190000 (found in review: relative error 1.7e-9); moved towards 0,
    the error is that of the stable path."""
    W = np.full((1001, 4), 100.0)
    W[-1] = 0.0
    b = np.full(1001, -20.0)
    b[-1] = 0.0
    model = rbm.RBM(W=W, b=b, c=np.full(4, -1e5))
    expected = np.log(2.0) + 1000 * np.log1p(np.exp(-20.0))
    for method in ("product", "stable"):
        got = exact._enumerate(model, method=method)[0]
        assert got == pytest.approx(expected, rel=1e-12), method


def test_model_moments_are_never_negative():
    """Visible means near 0 (biases -45 to -30) are differences 1 - sigmoid(-u) on the
    product path, which can round to -1e-16 (found in review); means are clipped to [0, 1]."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_visible, n_hidden = int(rng.integers(1, 30)), int(rng.integers(1, 8))
        model = rbm.RBM(W=rng.normal(0, rng.choice([0.01, 0.5, 3.0]), (n_visible, n_hidden)),
                        b=rng.uniform(-45, -30, n_visible), c=rng.normal(0, 3, n_hidden))
        for method in ("product", "stable"):
            m = exact._enumerate(model, moments=True, chunk_size=4, method=method)[1]
            assert min(m.v.min(), m.h.min(), m.vh.min()) >= 0.0
            assert max(m.v.max(), m.h.max(), m.vh.max()) <= 1.0
