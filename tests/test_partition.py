"""Bridge sampling (BAR) and thermodynamic integration (TI) of log Z against exact enumeration.

Every statistical test is seeded, so it is deterministic; the significance
level stated with each is the chance that a correct implementation would
fail it for an arbitrary seed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rbm
from rbm import ais, exact, partition
from conftest import random_layer


def make_model(n_visible=8, n_hidden=5, scale=1.0, seed=0):
    return rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=0.5, rng=seed)


def exact_draws(model, beta, n, rng, base_biases=None):
    """Independent draws of the AIS intermediate distribution p_beta(v), by enumeration."""
    inter = ais.intermediate_model(model, beta, base_biases=base_biases)
    p = exact.visible_distribution(inter)
    return exact.all_states(model.n_visible)[rng.choice(p.size, size=n, p=p)]


def exact_log_z(model, beta, base_biases=None):
    return exact.log_partition(ais.intermediate_model(model, beta, base_biases=base_biases))


def log_p(model, beta, v, base_biases=None):
    return -ais.intermediate_model(model, beta, base_biases=base_biases).free_energy(v)


PAIRS = [("binary", "binary"), ("spin", "binary"), ("potts", "binary"), ("potts", "drelu"),
         ("gaussian", "binary"), ("binary", "relu"), ("spin", "spin"), ("binary", "potts")]


def general_model(pair, seed=0, n_visible=4, n_hidden=3):
    rng = np.random.default_rng(seed)
    return rbm.RBM.random(random_layer(pair[0], n_visible, rng),
                          random_layer(pair[1], n_hidden, rng), scale=0.5, rng=seed)


# -- the identities the estimators rest on -------------------------------------------------


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_log_density_derivative_is_the_beta_derivative_of_the_intermediate_free_energy(pair):
    model = general_model(pair)
    v = model.visible.random_states(5, rng=1)
    eps = 1e-6
    for beta in (0.1, 0.5, 0.9):
        found = partition.log_density_derivative(model, v, beta)
        finite = (-ais.intermediate_model(model, beta + eps).free_energy(v)
                  + ais.intermediate_model(model, beta - eps).free_energy(v)) / (2 * eps)
        np.testing.assert_allclose(found, finite, rtol=1e-6, atol=1e-7)


def test_log_density_derivative_with_a_base_rate_base_matches_the_binary_formula():
    model = make_model()
    b_A = np.random.default_rng(2).normal(size=8)
    v = exact.all_states(8)[::7]
    pre = v @ model.W + model.c
    for beta in (0.0, 0.3, 1.0):
        formula = v @ (model.b - b_A) + (pre * rbm.sigmoid(beta * pre)).sum(axis=1)
        np.testing.assert_allclose(
            partition.log_density_derivative(model, v, beta, base_biases=b_A), formula,
            rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.4, 0.95])
def test_exact_mean_of_the_derivative_is_the_slope_of_log_z(beta):
    """TI's identity, d/dbeta log Z_beta = E_beta[d/dbeta log p*_beta], by enumeration."""
    model = make_model(6, 4, scale=1.5, seed=3)
    b_A = np.full(6, -0.5)
    V = exact.all_states(6)
    p = exact.visible_distribution(ais.intermediate_model(model, beta, base_biases=b_A))
    mean = p @ partition.log_density_derivative(model, V, beta, base_biases=b_A)
    eps = 1e-5
    f = lambda b: exact_log_z(model, b, b_A)  # noqa: E731
    if beta == 0.0:  # one-sided, second order
        slope = (-3 * f(0.0) + 4 * f(eps) - f(2 * eps)) / (2 * eps)
    else:
        slope = (f(beta + eps) - f(beta - eps)) / (2 * eps)
    assert mean == pytest.approx(slope, rel=1e-6)


def test_bar_on_exact_draws_is_unbiased_and_its_standard_error_is_the_spread():
    """BAR between two intermediate distributions of an 8 x 5 model, from exact draws.

    200 seeds of 300 and 200 draws: the z-scores (error / reported s.e.) have
    mean within 0.25 of 0 (3.5 standard errors of a mean of 200 standard
    normals, significance 5e-4) and standard deviation within 0.8 to 1.2
    (about 4 of its standard errors).
    """
    model = make_model(8, 5, scale=1.5, seed=4)
    b0, b1 = 0.3, 0.8
    truth = exact_log_z(model, b1) - exact_log_z(model, b0)
    V = exact.all_states(8)
    p0, p1 = (exact.visible_distribution(ais.intermediate_model(model, b)) for b in (b0, b1))
    gap = log_p(model, b1, V) - log_p(model, b0, V)
    z = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        i, j = rng.choice(V.shape[0], 300, p=p0), rng.choice(V.shape[0], 200, p=p1)
        r, se = partition.bar_log_ratio(gap[i], -gap[j])
        z.append((r - truth) / se)
    assert abs(np.mean(z)) < 0.25
    assert 0.8 < np.std(z) < 1.2


def test_bar_of_two_gaussians_recovers_the_ratio_of_their_normalisers():
    """p0* = N(0, 1) unnormalised, p1* = 3 N(1, 1): log Z1/Z0 = log 3; 4 s.e. (6e-5)."""
    rng = np.random.default_rng(7)
    x, y = rng.normal(0, 1, 5000), rng.normal(1, 1, 3000)
    r, se = partition.bar_log_ratio(x - 0.5 + np.log(3), 0.5 - y - np.log(3))
    assert abs(r - np.log(3)) < 4 * se


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_f=st.integers(1, 30), n_r=st.integers(1, 30),
       shift=st.floats(-50, 50))
def test_bar_is_antisymmetric_and_solves_bennetts_equation(seed, n_f, n_r, shift):
    rng = np.random.default_rng(seed)
    f, g = rng.normal(shift, 2.0, n_f), rng.normal(-shift - 1.0, 2.0, n_r)
    r, se = partition.bar_log_ratio(f, g)
    r_swapped, se_swapped = partition.bar_log_ratio(g, f)
    assert r_swapped == pytest.approx(-r, abs=1e-9)
    assert se_swapped == pytest.approx(se, rel=1e-9, abs=1e-12)
    m = np.log(n_f / n_r)
    left = rbm.sigmoid(f - r - m).sum()
    right = rbm.sigmoid(g + r + m).sum()
    assert left == pytest.approx(right, rel=1e-8)


# -- the estimators on annealing chains ----------------------------------------------------


def test_path_gives_ais_its_own_estimate_from_the_same_seed():
    model = general_model(("potts", "binary"))
    a = partition.ais_from_path(partition.sample_path(model, 40, n_chains=30, rng=5))
    b = ais.ais_log_partition(model, n_runs=30, betas=40, rng=5)
    assert a.log_z == pytest.approx(b.log_z, abs=1e-10)
    np.testing.assert_allclose(a.log_weights, b.log_weights, atol=1e-10)


def test_reverse_path_gives_reverse_ais_its_own_estimate_from_the_same_seed():
    model = make_model(6, 4)
    v = exact.sample(model, 25, rng=1)
    a = partition.ais_from_path(partition.sample_path(model, 60, v_init=v, rng=2))
    b = ais.reverse_ais_log_partition(model, v, betas=60, rng=2)
    assert a.log_z == pytest.approx(b.log_z, abs=1e-10)


@pytest.mark.parametrize("estimator", ["bar", "ti", "ti-simpson"])
@pytest.mark.parametrize("case", [("binary", "binary", 8, 5), ("potts", "binary", 4, 3),
                                  ("spin", "spin", 6, 4)], ids=lambda c: f"{c[0]}-{c[1]}")
def test_bar_and_ti_on_slow_annealing_chains_land_within_four_standard_errors(estimator, case):
    """Consistency: with 4 sweeps per temperature the chains are near each p_k (seed 11).

    Four reported standard errors plus 0.01 nats for the quadrature and the
    remaining lag; the reported error ignores the correlation of neighbouring
    temperatures (the same chains), so the bound is loose rather than tight.
    """
    model = general_model(case[:2], seed=3, n_visible=case[2], n_hidden=case[3])
    path = partition.sample_path(model, 200, n_chains=200, n_sweeps=4, rng=11)
    est = {"bar": lambda: partition.bar_log_partition(path),
           "ti": lambda: partition.ti_log_partition(path),
           "ti-simpson": lambda: partition.ti_log_partition(path, rule="simpson")}[estimator]()
    assert abs(est.log_z - exact.log_partition(model)) < 4 * est.std_error + 0.01


def test_forward_chains_lag_and_bias_ti_low_and_reverse_chains_bias_it_high():
    """One sweep at each of 31 evenly spaced temperatures on a 12 x 8 model with strong
    weights (seed 8): the chains lag behind, so TI and BAR on forward chains are low
    and on reverse chains (from exact samples) high, each by more than 0.1 nats."""
    model = make_model(12, 8, scale=2.0, seed=8)
    log_z = exact.log_partition(model)
    betas = np.linspace(0.0, 1.0, 31)
    forward = partition.sample_path(model, betas, n_chains=200, rng=1)
    reverse = partition.sample_path(model, betas, v_init=exact.sample(model, 200, rng=2), rng=3)
    for estimate in (partition.ti_log_partition, partition.bar_log_partition):
        assert estimate(forward).log_z < log_z - 0.1
        assert estimate(reverse).log_z > log_z + 0.1


def test_trapezoid_terms_sum_to_the_trapezoid_estimate():
    model = make_model(6, 4)
    path = partition.sample_path(model, 20, n_chains=10, rng=0)
    est = partition.ti_log_partition(path)
    assert est.log_z == pytest.approx(path.log_z_base + est.log_ratios.sum(), abs=1e-12)
    assert path.total_sweeps == 20 * 10


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"betas": [0.0, 0.5]}, ValueError, "betas"),
    ({"betas": [0.0, 0.7, 0.5, 1.0]}, ValueError, "betas"),
    ({"betas": 0}, ValueError, "betas"),
    ({"n_chains": 1}, ValueError, "n_chains"),
    ({"n_chains": 2.5}, TypeError, "n_chains"),
    ({"n_sweeps": 0}, ValueError, "n_sweeps"),
    ({"rng": "seed"}, TypeError, "rng"),
    ({"v_init": np.zeros((3, 5))}, ValueError, "v_init"),
    ({"v_init": np.zeros((4, 6)), "n_chains": 3}, ValueError, "n_chains"),
    ({"base_biases": np.zeros(5)}, ValueError, "base_biases"),
])
def test_bad_arguments_to_sample_path_are_refused_by_name(kwargs, error, match):
    args = {"betas": 10, "rng": 0, **kwargs}
    with pytest.raises(error, match=match):
        partition.sample_path(make_model(6, 3), **args)


def test_other_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="forward"):
        partition.bar_log_ratio([], [1.0])
    with pytest.raises(ValueError, match="reverse"):
        partition.bar_log_ratio([1.0], [np.inf])
    with pytest.raises(TypeError, match="path"):
        partition.bar_log_partition({"betas": [0, 1]})
    with pytest.raises(TypeError, match="path"):
        partition.ais_from_path(None)
    path = partition.sample_path(make_model(4, 2), 5, n_chains=4, rng=0)
    with pytest.raises(ValueError, match="rule"):
        partition.ti_log_partition(path, rule="midpoint")
    with pytest.raises(ValueError, match="beta"):
        partition.log_density_derivative(make_model(4, 2), np.zeros((1, 4)), 1.5)
    with pytest.raises(ValueError, match="v"):
        partition.log_density_derivative(make_model(4, 2), np.zeros((1, 3)), 0.5)
