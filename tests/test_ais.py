"""Annealed importance sampling of log Z against exact enumeration.

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
from rbm import ais, exact
from rbm.transition import gibbs_transition_matrix
from conftest import brute_energy, brute_log_partition, joint_states

# (n_visible, n_hidden, weight and bias scale, seed) of the models AIS is checked on.
MODEL_CASES = [(10, 8, 1.0, 1), (16, 12, 0.6, 2), (24, 16, 0.5, 3), (30, 20, 0.3, 4)]


def make_model(n_visible, n_hidden, scale, seed):
    return rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=seed)


def exact_samples(model, n_samples, seed):
    """Independent draws from the model's exact p(v)."""
    p = exact.visible_distribution(model)
    index = np.random.default_rng(seed).choice(p.size, size=n_samples, p=p)
    return exact.all_states(model.n_visible)[index]


@pytest.fixture(scope="module", params=MODEL_CASES, ids=lambda case: "v{}-h{}-s{}".format(*case))
def model_and_log_z(request):
    model = make_model(*request.param)
    return model, exact.log_partition(model)


# -- the base-rate model ------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(n_visible=st.integers(1, 6), n_hidden=st.integers(1, 6),
       scale=st.sampled_from([0.0, 1.0, 10.0, 100.0]), seed=st.integers(0, 2**32 - 1))
def test_base_log_partition_closed_form_equals_enumeration(n_visible, n_hidden, scale, seed):
    base_biases = scale * np.random.default_rng(seed).standard_normal(n_visible)
    base = ais.base_rate_model(base_biases, n_hidden)
    closed_form = ais.base_log_partition(base_biases, n_hidden)
    assert closed_form == pytest.approx(exact.log_partition(base), rel=1e-12, abs=1e-12)
    assert np.all(base.W == 0) and np.all(base.c == 0) and np.array_equal(base.b, base_biases)


def test_base_log_partition_matches_brute_force_over_joint_states():
    base_biases = np.array([0.3, -2.0, 1.5])
    base = ais.base_rate_model(base_biases, 2)
    assert ais.base_log_partition(base_biases, 2) == pytest.approx(brute_log_partition(base),
                                                                   rel=1e-13)


def test_base_rate_biases_are_smoothed_log_odds_of_the_data():
    data = np.array([[1, 0, 1], [1, 0, 0], [1, 0, 1], [1, 0, 0]])
    # Columns are always on, always off, and half on: with one pseudo-count
    # each way the smoothed means are 5/6, 1/6 and 1/2.
    expected = np.log([5.0, 1 / 5, 1.0])
    assert np.allclose(ais.base_rate_biases(data), expected, rtol=1e-13, atol=1e-15)
    wide = ais.base_rate_biases(data, pseudo_count=3.0)
    assert np.allclose(wide, np.log([7 / 3, 3 / 7, 1.0]), rtol=1e-13, atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(n_steps=st.integers(1, 20_000))
def test_default_betas_increase_strictly_from_zero_to_one(n_steps):
    betas = ais.default_betas(n_steps)
    assert betas.shape == (n_steps + 1,)
    assert betas[0] == 0.0 and betas[-1] == 1.0
    assert np.all(np.diff(betas) > 0)


def test_default_betas_follow_the_paper_schedule_densest_near_one():
    betas = ais.default_betas(14_500)
    steps = np.diff(betas)
    assert np.allclose(steps[:500], 1e-3) and np.allclose(steps[500:4500], 1e-4)
    assert np.allclose(steps[4500:], 1e-5)


# -- forward AIS against the exact log Z -----------------------------------------


def test_ais_lands_within_three_standard_errors_of_exact_log_partition(model_and_log_z):
    # Nominal significance 0.27% per model if log Z-hat is normal with the
    # estimated standard error.
    model, log_z = model_and_log_z
    result = ais.ais_log_partition(model, n_runs=500, betas=2000, rng=20240501)
    assert abs(result.log_z - log_z) < 3 * result.std_error
    # A useful estimate, not one that passes only through a huge error bar.
    assert result.std_error < 0.05


@pytest.mark.parametrize("base", ["data", "explicit"])
def test_ais_from_a_fitted_or_given_base_lands_within_three_standard_errors(base):
    # Significance 0.27% per case, as above.
    model = make_model(12, 10, 1.0, 5)
    log_z = exact.log_partition(model)
    data = exact_samples(model, 500, seed=6)
    kwargs = ({"data": data} if base == "data"
              else {"base_biases": ais.base_rate_biases(data, pseudo_count=0.5)})
    result = ais.ais_log_partition(model, n_runs=500, betas=1000, rng=7, **kwargs)
    assert abs(result.log_z - log_z) < 3 * result.std_error
    biases = ais.base_rate_biases(data) if base == "data" else kwargs["base_biases"]
    assert result.log_z_base == pytest.approx(ais.base_log_partition(biases, 10), rel=1e-14)


def test_fitted_base_gives_smaller_error_bars_than_the_uniform_base():
    # A base close to the model's marginals needs less annealing; with few
    # temperatures the difference in spread is large and deterministic here.
    model = make_model(12, 10, 1.0, 5)
    data = exact_samples(model, 500, seed=6)
    fitted = ais.ais_log_partition(model, n_runs=500, betas=30, rng=8, data=data)
    uniform = ais.ais_log_partition(model, n_runs=500, betas=30, rng=8)
    assert fitted.std_error < uniform.std_error


def test_ais_absolute_error_shrinks_as_temperatures_are_added():
    # Averaged over 6 seeds, 1000 temperatures must be at least 4 times as
    # accurate as 10 (expected ratio about 10: the error of log Z-hat falls
    # like 1/sqrt(K) for K annealing steps).
    model = make_model(16, 12, 0.6, 2)
    log_z = exact.log_partition(model)
    mean_error = {}
    for n_steps in (10, 1000):
        errors = [abs(ais.ais_log_partition(model, n_runs=200, betas=n_steps, rng=seed).log_z
                      - log_z) for seed in range(6)]
        mean_error[n_steps] = np.mean(errors)
    assert mean_error[1000] < mean_error[10] / 4


def test_std_error_matches_the_spread_of_repeated_estimates():
    # 40 independent estimates: their standard deviation should equal the
    # typical reported standard error.  The sample standard deviation of 40
    # normal values is within a factor 1.5 of the truth with probability
    # above 99.9%, the tolerance used here.
    model = make_model(10, 8, 1.0, 1)
    results = [ais.ais_log_partition(model, n_runs=100, betas=100, rng=seed)
               for seed in range(40)]
    spread = np.std([r.log_z for r in results], ddof=1)
    reported = np.sqrt(np.mean([r.std_error**2 for r in results]))
    assert reported / 1.5 < spread < reported * 1.5


def test_two_temperatures_are_plain_importance_sampling_from_the_base():
    model = rbm.RBM(W=[[1.0, -0.5], [0.3, 0.8], [-1.2, 0.4]], b=[0.2, -0.3, 0.5], c=[0.1, -0.2])
    base_biases = np.array([0.4, -0.6, 0.1])
    base = ais.base_rate_model(base_biases, model.n_hidden)
    result = ais.ais_log_partition(model, n_runs=4000, betas=[0.0, 1.0], rng=11,
                                   base_biases=base_biases)
    vs, hs = joint_states(model.n_visible, model.n_hidden)

    def brute_log_unnormalised(rbm_model, v):
        """log sum_h exp(-E(v, h)), summing the joint states that have this v."""
        neg_e = [-brute_energy(rbm_model, v, h) for v_row, h in zip(vs, hs)
                 if np.array_equal(v_row, v)]
        return np.logaddexp.reduce(neg_e)

    # Each weight is p*_B(v) / p*_A(v) at the run's only state, drawn from the base.
    expected = [brute_log_unnormalised(model, v) - brute_log_unnormalised(base, v)
                for v in result.final_states]
    assert np.allclose(result.log_weights, expected, rtol=1e-12, atol=1e-12)
    plain = brute_log_partition(base) + np.log(np.mean(np.exp(expected)))
    assert result.log_z == pytest.approx(plain, rel=1e-12)
    # The states are draws from the base model: chi-square test at level 0.1%.
    observed = np.bincount(exact.state_index(result.final_states), minlength=8)
    expected_counts = 4000 * exact.visible_distribution(base)
    assert stats.chisquare(observed, expected_counts).pvalue > 1e-3


def test_ais_is_reproducible_and_accepts_a_seed_or_a_generator():
    model = make_model(6, 4, 1.0, 0)
    by_seed = ais.ais_log_partition(model, n_runs=20, betas=50, rng=3)
    by_generator = ais.ais_log_partition(model, n_runs=20, betas=50,
                                         rng=np.random.default_rng(3))
    assert np.array_equal(by_seed.log_weights, by_generator.log_weights)
    assert by_seed.log_z == by_generator.log_z
    assert by_seed.final_states.shape == (20, 6)


# -- reverse AIS ------------------------------------------------------------------


def test_reverse_ais_from_exact_samples_lands_within_three_standard_errors():
    # Significance 0.27% per model, as for forward AIS.
    for case in [(10, 8, 1.0, 1), (12, 10, 1.0, 5)]:
        model = make_model(*case)
        states = exact_samples(model, 500, seed=9)
        result = ais.reverse_ais_log_partition(model, states, betas=1000, rng=10)
        assert abs(result.log_z - exact.log_partition(model)) < 3 * result.std_error


def test_reverse_ais_with_two_temperatures_is_the_reciprocal_importance_weight():
    model = make_model(5, 3, 1.0, 12)
    states = exact_samples(model, 50, seed=13)
    result = ais.reverse_ais_log_partition(model, states, betas=[0.0, 1.0], rng=14)
    # With no transition the weight is p*_A(v) / p*_B(v) at the starting state; the
    # uniform base has free energy -3 log 2 (its 3 hidden units) for every v.
    base_free_energy = -3 * np.log(2.0)
    expected = model.free_energy(states) - base_free_energy
    assert np.allclose(result.log_weights, expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(result.final_states, states)


# -- the intermediate distributions and the exact moments of the weight ------------


@settings(max_examples=20, deadline=None)
@given(beta=st.sampled_from([0.0, 0.3, 0.75, 1.0]), seed=st.integers(0, 2**32 - 1))
def test_intermediate_model_free_energy_is_the_tempered_joint_summed_over_both_hidden_layers(
        beta, seed):
    # Enumerate (v, h_A, h_B) with the plain-loop energy of conftest: the
    # marginal of exp(-(1 - beta) E_A - beta E_B) must be 2**n_hidden exp(-F_beta(v)).
    draw = np.random.default_rng(seed)
    model = rbm.RBM.random(3, 2, scale=1.5, bias_scale=1.0, rng=draw)
    base_biases = draw.standard_normal(3)
    base = ais.base_rate_model(base_biases, 2)
    vs, hs = joint_states(3, 2)
    tempered = ais.intermediate_model(model, beta, base_biases=base_biases)
    for v in exact.all_states(3):
        terms = [-(1 - beta) * brute_energy(base, v, h_A) - beta * brute_energy(model, v, h_B)
                 for v_A, h_A in zip(vs, hs) if np.array_equal(v_A, v)
                 for v_B, h_B in zip(vs, hs) if np.array_equal(v_B, v)]
        expected = np.logaddexp.reduce(terms)
        assert -tempered.free_energy(v) + 2 * np.log(2.0) == pytest.approx(expected, rel=1e-12,
                                                                           abs=1e-12)


def test_intermediate_model_ends_at_the_base_and_at_the_target():
    model = make_model(5, 3, 1.0, 21)
    base_biases = np.linspace(-1.0, 1.0, 5)
    start = ais.intermediate_model(model, 0.0, base_biases=base_biases)
    end = ais.intermediate_model(model, 1.0, base_biases=base_biases)
    base = ais.base_rate_model(base_biases, 3)
    assert np.array_equal(start.W, base.W) and np.array_equal(start.b, base.b)
    assert np.array_equal(start.c, base.c)
    assert np.array_equal(end.W, model.W) and np.array_equal(end.b, model.b)
    assert np.array_equal(end.c, model.c)


@settings(max_examples=15, deadline=None)
@given(n_steps=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_exact_mean_weight_is_the_ratio_of_partition_functions_for_any_schedule(n_steps, seed):
    draw = np.random.default_rng(seed)
    model = rbm.RBM.random(4, 3, scale=1.5, bias_scale=1.0, rng=draw)
    base_biases = draw.standard_normal(4)
    betas = np.concatenate([[0.0], np.sort(draw.uniform(0.01, 0.99, n_steps - 1)), [1.0]])
    if np.any(np.diff(betas) <= 0):
        return
    log_mean, mean_log = ais.exact_weight_moments(model, betas, base_biases=base_biases)
    log_ratio = exact.log_partition(model) - ais.base_log_partition(base_biases, 3)
    assert log_mean == pytest.approx(log_ratio, rel=1e-11, abs=1e-11)
    assert mean_log <= log_ratio + 1e-12  # Jensen


def test_identity_transitions_keep_the_mean_weight_and_give_plain_importance_sampling():
    # The identity leaves every distribution invariant; the weight telescopes to
    # p*_B(v_1) / p*_A(v_1), so E[log w] is that of two temperatures.
    model = make_model(4, 3, 1.0, 22)
    betas = ais.default_betas(6)
    identity = [np.eye(16)] * 5
    log_mean, mean_log = ais.exact_weight_moments(model, betas, transitions=identity)
    plain_mean, plain_log = ais.exact_weight_moments(model, [0.0, 1.0])
    assert log_mean == pytest.approx(plain_mean, rel=1e-12)
    assert mean_log == pytest.approx(plain_log, rel=1e-12)


def test_sweeps_at_the_next_temperature_bias_the_mean_weight():
    # T_k must leave p_k invariant; a sweep at beta_{k+1} (an off-by-one) does not.
    model = make_model(4, 3, 2.0, 23)
    betas = ais.default_betas(5)
    shifted = [gibbs_transition_matrix(ais.intermediate_model(model, beta))
               for beta in betas[2:]]
    log_mean, _ = ais.exact_weight_moments(model, betas, transitions=shifted)
    log_ratio = exact.log_partition(model) - ais.base_log_partition(np.zeros(4), 3)
    assert abs(log_mean - log_ratio) > 1e-2


def test_jensen_gap_of_the_exact_mean_log_weight_closes_as_temperatures_are_added():
    model = make_model(5, 4, 1.5, 24)
    log_ratio = exact.log_partition(model) - ais.base_log_partition(np.zeros(5), 4)
    gaps = [log_ratio - ais.exact_weight_moments(model, np.linspace(0, 1, n + 1))[1]
            for n in (1, 4, 16, 64)]
    assert all(gap > 0 for gap in gaps)
    assert all(later < earlier for earlier, later in zip(gaps, gaps[1:]))
    assert gaps[-1] < gaps[0] / 10


def test_sampled_log_weights_have_the_exact_mean_log_weight():
    # The sampler and the exact recursion describe the same chain: the mean of
    # 20,000 sampled log-weights lies within 4 standard errors of E[log w]
    # (significance about 6e-5 under the central limit theorem).
    model = make_model(5, 4, 1.0, 25)
    base_biases = np.array([0.5, -0.5, 0.0, 1.0, -1.0])
    betas = ais.default_betas(8)
    _, mean_log = ais.exact_weight_moments(model, betas, base_biases=base_biases)
    result = ais.ais_log_partition(model, n_runs=20_000, betas=betas, rng=26,
                                   base_biases=base_biases)
    ell = result.log_weights
    assert abs(ell.mean() - mean_log) < 4 * ell.std(ddof=1) / np.sqrt(ell.size)


def test_bad_arguments_to_the_exact_moments_are_refused_by_name(tiny_model):
    with pytest.raises(ValueError, match="beta must be in"):
        ais.intermediate_model(tiny_model, 1.5)
    with pytest.raises(ValueError, match="transitions must hold K - 1 = 2 matrices"):
        ais.exact_weight_moments(tiny_model, 3, transitions=[np.eye(16)])
    with pytest.raises(ValueError, match=r"transitions\[0\] must have shape \(16, 16\)"):
        ais.exact_weight_moments(tiny_model, 2, transitions=[np.eye(8)])
    with pytest.raises(ValueError, match=r"transitions\[0\] must be row-stochastic"):
        ais.exact_weight_moments(tiny_model, 2, transitions=[2 * np.eye(16)])
    with pytest.raises(ValueError, match="n_visible must be at most"):
        ais.exact_weight_moments(rbm.RBM.random(15, 2, rng=0), 2)


# -- the summary of the weights ---------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.sampled_from([-1e4, 0.0, 700.0, 1e5]))
def test_log_mean_weight_is_shift_equivariant_and_matches_the_direct_formula(seed, shift):
    log_weights = np.random.default_rng(seed).normal(size=30)
    w = np.exp(log_weights)
    log_mean, std_error = ais.log_mean_weight(log_weights + shift)
    assert np.isfinite(log_mean) and np.isfinite(std_error)
    assert log_mean - shift == pytest.approx(np.log(w.mean()), rel=1e-9, abs=1e-9)
    direct = np.std(w, ddof=1) / (np.sqrt(w.size) * w.mean())
    assert std_error == pytest.approx(direct, rel=1e-9)


def test_interval_is_log_of_z_hat_plus_minus_k_standard_errors():
    result = ais.AISResult(log_z=10.0, std_error=0.1, log_weights=np.zeros(2), log_z_base=0.0,
                           final_states=np.zeros((2, 1)))
    lower, upper = result.interval(3.0)
    assert lower == pytest.approx(10.0 + np.log(0.7), rel=1e-14)
    assert upper == pytest.approx(10.0 + np.log(1.3), rel=1e-14)
    assert result.interval(10.0)[0] == -np.inf


# -- bad input ----------------------------------------------------------------------


@pytest.fixture
def tiny_model():
    return make_model(4, 3, 1.0, 0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_runs": 1}, ValueError, "n_runs must be >= 2"),
        ({"n_runs": 0}, ValueError, "n_runs must be >= 2"),
        ({"n_runs": 2.5}, TypeError, "n_runs must be an int"),
        ({"betas": 0}, ValueError, "betas must be >= 1"),
        ({"betas": [0.0, 0.6, 0.4, 1.0]}, ValueError, "betas must be strictly increasing"),
        ({"betas": [0.0, 0.5, 0.5, 1.0]}, ValueError, "betas must be strictly increasing"),
        ({"betas": [0.1, 0.5, 1.0]}, ValueError, "betas must start at exactly 0"),
        ({"betas": [0.0, 0.5, 0.9]}, ValueError, "end at exactly 1"),
        ({"betas": [1.0]}, ValueError, "betas must be an int or a 1-d array"),
        ({"betas": [[0.0, 1.0]]}, ValueError, "betas must be an int or a 1-d array"),
        ({"betas": [0.0, np.nan, 1.0]}, ValueError, "betas must be finite"),
        ({"betas": ["a", "b"]}, TypeError, "betas must be a numeric array"),
        ({"data": np.zeros((5, 3))}, ValueError, "data must have 4 columns"),
        ({"data": np.full((5, 4), 0.5)}, ValueError, "data must hold only 0 and 1"),
        ({"base_biases": np.zeros(3)}, ValueError, r"base_biases must have shape \(4,\)"),
        ({"base_biases": [0.0, np.inf, 0.0, 0.0]}, ValueError, "base_biases must be finite"),
        ({"data": np.zeros((5, 4)), "base_biases": np.zeros(4)}, ValueError,
         "at most one of data and base_biases"),
        ({"rng": "seed"}, TypeError, "rng must be a numpy.random.Generator"),
    ],
)
def test_bad_arguments_to_ais_are_refused_by_name(kwargs, error, match, tiny_model):
    arguments = {"n_runs": 10, "betas": 10, "rng": 0, **kwargs}
    with pytest.raises(error, match=match):
        ais.ais_log_partition(tiny_model, **arguments)


def test_bad_arguments_to_reverse_ais_are_refused_by_name(tiny_model):
    with pytest.raises(ValueError, match="v_init must have 4 columns"):
        ais.reverse_ais_log_partition(tiny_model, np.zeros((5, 3)), betas=5, rng=0)
    with pytest.raises(ValueError, match="v_init must have at least 2 rows"):
        ais.reverse_ais_log_partition(tiny_model, np.zeros((1, 4)), betas=5, rng=0)
    with pytest.raises(ValueError, match="v_init must hold only 0 and 1"):
        ais.reverse_ais_log_partition(tiny_model, np.full((3, 4), 2.0), betas=5, rng=0)


def test_other_bad_inputs_are_refused_by_name(tiny_model):
    with pytest.raises(TypeError, match="model must be an rbm.RBM"):
        ais.ais_log_partition("model", n_runs=10, betas=10, rng=0)
    with pytest.raises(ValueError, match=r"data must have shape \(n_samples, n_visible\)"):
        ais.base_rate_biases(np.zeros(4))
    with pytest.raises(ValueError, match="pseudo_count must be finite and > 0"):
        ais.base_rate_biases(np.zeros((2, 4)), pseudo_count=0.0)
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        ais.base_log_partition(np.zeros(4), 0)
    with pytest.raises(ValueError, match="log_weights must be a 1-d array of at least 2"):
        ais.log_mean_weight([1.0])
    with pytest.raises(ValueError, match="log_weights must be finite"):
        ais.log_mean_weight([1.0, -np.inf])
    with pytest.raises(ValueError, match="n_steps must be >= 1"):
        ais.default_betas(0)


def test_the_annealing_sweep_is_the_tempered_models_gibbs_transition():
    """AIS samples the tempered models with its own sweep (no model is made per temperature).
    With three temperatures the final states are one sweep at beta from the base: their
    distribution must be p_A T_beta, with T_beta the exact Gibbs transition of
    intermediate_model. Chi-square test at level 0.1% (seeded)."""
    model = make_model(3, 2, 1.0, 5)
    base_biases = np.array([0.4, -0.6, 0.1])
    beta = 0.6
    result = ais.ais_log_partition(model, n_runs=20000, betas=[0.0, beta, 1.0], rng=12,
                                   base_biases=base_biases)
    base = exact.visible_distribution(ais.base_rate_model(base_biases, model.n_hidden))
    T = gibbs_transition_matrix(ais.intermediate_model(model, beta, base_biases=base_biases))
    observed = np.bincount(exact.state_index(result.final_states), minlength=8)
    assert stats.chisquare(observed, 20000 * (base @ T)).pvalue > 1e-3
    # and the test can fail: the sweep is not the untempered model's
    untempered = gibbs_transition_matrix(model)
    assert stats.chisquare(observed, 20000 * (base @ untempered)).pvalue < 1e-3
