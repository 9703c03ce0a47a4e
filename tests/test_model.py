"""The RBM's energy, free energy and conditionals against direct enumeration."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rbm
from rbm import exact
from conftest import brute_energy, joint_states


def test_energy_matches_the_written_out_sum(small_model):
    vs, hs = joint_states(small_model.n_visible, small_model.n_hidden)
    expected = np.array([brute_energy(small_model, v, h) for v, h in zip(vs, hs)])
    assert np.allclose(small_model.energy(vs, hs), expected, rtol=1e-13, atol=1e-13)
    assert small_model.energy(vs[5], hs[5]) == pytest.approx(expected[5], rel=1e-13)


@settings(max_examples=30, deadline=None)
@given(n_visible=st.integers(1, 5), n_hidden=st.integers(1, 5),
       scale=st.sampled_from([0.01, 1.0, 10.0, 100.0]), seed=st.integers(0, 2**32 - 1))
def test_free_energy_closed_form_equals_log_sum_over_h(n_visible, n_hidden, scale, seed):
    model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=seed)
    h_all = exact.all_states(n_hidden)
    for v in exact.all_states(n_visible):
        neg_e = -model.energy(np.repeat(v[None], len(h_all), axis=0), h_all)
        expected = -rbm.logsumexp(neg_e)
        assert model.free_energy(v) == pytest.approx(expected, rel=1e-12, abs=1e-10)


def test_conditionals_equal_ratios_of_joint_probabilities(small_model):
    """p(h_j=1|v) = sum_{h: h_j=1} p(v,h) / sum_h p(v,h), and the visible twin."""
    m = small_model
    v_all, h_all = exact.all_states(m.n_visible), exact.all_states(m.n_hidden)
    # Unnormalised joint probabilities, rows v, columns h; Z cancels in the ratios.
    joint = np.exp(-np.array([[m.energy(v, h) for h in h_all] for v in v_all]))
    p_h = (joint @ h_all) / joint.sum(axis=1, keepdims=True)
    p_v = (joint.T @ v_all) / joint.sum(axis=0)[:, None]
    assert np.allclose(m.prob_h_given_v(v_all), p_h, rtol=1e-12, atol=1e-14)
    assert np.allclose(m.prob_v_given_h(h_all), p_v, rtol=1e-12, atol=1e-14)


def test_hidden_units_are_conditionally_independent(small_model):
    """p(h|v) = prod_j p(h_j|v) for every v and h."""
    m = small_model
    v_all, h_all = exact.all_states(m.n_visible), exact.all_states(m.n_hidden)
    joint = np.exp(-np.array([[m.energy(v, h) for h in h_all] for v in v_all]))
    p_h_given_v = joint / joint.sum(axis=1, keepdims=True)
    q = m.prob_h_given_v(v_all)
    product = np.prod(np.where(h_all[None, :, :] == 1, q[:, None, :], 1 - q[:, None, :]),
                      axis=2)
    assert np.allclose(p_h_given_v, product, rtol=1e-12, atol=1e-15)


def test_samples_have_the_conditional_means():
    """Sampled units average to p(h=1|v); 4 standard errors (two-sided p about 6e-5)."""
    model = rbm.RBM.random(3, 2, scale=1.0, bias_scale=1.0, rng=1)
    v = np.array([1.0, 0.0, 1.0])
    n = 20000
    samples = model.sample_h_given_v(np.tile(v, (n, 1)), rng=2)
    p = model.prob_h_given_v(v)
    assert set(np.unique(samples)) <= {0.0, 1.0}
    assert np.all(np.abs(samples.mean(axis=0) - p) < 4 * np.sqrt(p * (1 - p) / n))
    h = np.array([1.0, 1.0])
    samples_v = model.sample_v_given_h(np.tile(h, (n, 1)), rng=3)
    pv = model.prob_v_given_h(h)
    assert np.all(np.abs(samples_v.mean(axis=0) - pv) < 4 * np.sqrt(pv * (1 - pv) / n))


def test_sampling_is_reproducible_with_a_seed(small_model, small_data):
    a = small_model.sample_h_given_v(small_data, rng=np.random.default_rng(5))
    b = small_model.sample_h_given_v(small_data, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)


def test_single_vector_and_batch_shapes(small_model, small_data):
    assert np.ndim(small_model.free_energy(small_data[0])) == 0
    assert small_model.free_energy(small_data).shape == (5,)
    assert small_model.prob_h_given_v(small_data[0]).shape == (4,)
    assert small_model.prob_h_given_v(small_data).shape == (5, 4)
    assert small_model.prob_v_given_h(np.ones(4)).shape == (6,)


def test_transpose_swaps_the_layers(small_model):
    t = small_model.transpose()
    assert (t.n_visible, t.n_hidden) == (4, 6)
    v, h = np.array([1, 0, 1, 1, 0, 1.0]), np.array([0, 1, 1, 0.0])
    assert t.energy(h, v) == pytest.approx(small_model.energy(v, h), rel=1e-14)


def test_parameters_are_copied(small_model):
    W = np.zeros((2, 2))
    model = rbm.RBM(W, np.zeros(2), np.zeros(2))
    W[0, 0] = 5.0
    assert model.W[0, 0] == 0.0
    copy = small_model.copy()
    copy.W[0, 0] += 1.0
    assert copy.W[0, 0] != small_model.W[0, 0]


def test_gradient_arithmetic_and_flat_round_trip():
    g = rbm.Gradient(W=np.arange(6.0).reshape(3, 2), b=np.ones(3), c=-np.ones(2))
    back = rbm.Gradient.from_flat(g.flat(), 3, 2)
    assert np.array_equal(back.W, g.W) and np.array_equal(back.c, g.c)
    assert np.array_equal(((g + g) / 2 - g).flat(), np.zeros(11))
    assert (-g).max_abs() == 5.0


def test_softplus_is_stable_and_matches_logaddexp():
    x = np.concatenate([np.linspace(-800, 800, 2001), [-1e308, 1e308]])
    assert np.all(np.isfinite(rbm.softplus(x)))
    assert np.allclose(rbm.softplus(x), np.logaddexp(0, x), rtol=1e-15, atol=1e-300)


def test_fast_sampling_sigmoid_matches_expit_to_rounding():
    from scipy.special import expit

    from rbm.special import sigmoid_inplace

    x = np.concatenate([np.linspace(-800, 800, 4001), [0.0, 1e-300, -1e308, 1e308]])
    fast = sigmoid_inplace(x.copy())
    assert np.all(np.isfinite(fast)) and np.all((fast >= 0) & (fast <= 1))
    assert np.max(np.abs(fast - expit(x))) <= 2.3e-16  # one unit in the last place of 1.0
