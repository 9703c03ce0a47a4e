"""Other unit types: every exact value against an independent route (quadrature, Monte Carlo,
brute-force sums over joint states, finite differences), and the samplers tested statistically.

Statistical tests are seeded and use rbm.checks.check_mean at a family-wise alpha = 0.01.
"""

import itertools

import numpy as np
import pytest
from scipy import integrate

import rbm
from rbm import exact, units
from rbm.checks import check_mean
from rbm.units import Bernoulli, Gaussian, LayeredGradient, LayeredRBM, Spin

ALPHA = 0.01


def layered(kinds, n_visible, n_hidden, *, seed, scale=0.7):
    """A random model with layers of the given kinds ("bernoulli", "spin", "gaussian")."""
    rng = np.random.default_rng(seed)

    def make(kind, n):
        bias = rng.normal(scale=0.5, size=n)
        if kind == "gaussian":
            return Gaussian(bias, sigma=rng.uniform(0.5, 1.5, size=n))
        return {"bernoulli": Bernoulli, "spin": Spin}[kind](bias)

    visible, hidden = make(kinds[0], n_visible), make(kinds[1], n_hidden)
    return LayeredRBM(scale * rng.standard_normal((n_visible, n_hidden)), visible, hidden)


def unit_values(layer, n):
    return list(itertools.product(layer.values, repeat=n))


def brute_log_partition(model):
    """log of the sum of exp(-E(v, h)) over every joint state, from the energy alone."""
    V = np.array(unit_values(model.visible, model.n_visible))
    H = np.array(unit_values(model.hidden, model.n_hidden))
    neg_e = np.array([[-model.energy(v, h) for h in H] for v in V])
    return float(rbm.logsumexp(neg_e)), V, neg_e


DISCRETE_PAIRS = [("bernoulli", "spin"), ("spin", "bernoulli"), ("spin", "spin")]


# -- the binary model is one case ------------------------------------------------------------

def test_two_bernoulli_layers_are_the_binary_model():
    binary = rbm.RBM.random(5, 3, scale=1.0, bias_scale=0.5, rng=0)
    model = LayeredRBM.from_binary(binary)
    data = exact.all_states(5)[::3]
    assert units.log_partition(model) == exact.log_partition(binary)
    np.testing.assert_array_equal(model.free_energy(data), binary.free_energy(data))
    ours, theirs = units.gradient(model, data), exact.gradient(binary, data)
    for name in ("W", "b", "c"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=0,
                                   atol=1e-15)


# -- spins: the exact map onto {0,1} ----------------------------------------------------------

@pytest.mark.parametrize("kinds", DISCRETE_PAIRS)
def test_the_spin_map_leaves_p_v_unchanged(kinds):
    """p(v) of the model, by brute force over its own joint states, equals p'(x) of the binary
    model that to_binary makes, at x = (v - beta) / alpha."""
    model = layered(kinds, 4, 3, seed=1)
    log_z, V, neg_e = brute_log_partition(model)
    binary, kappa = model.to_binary()
    alpha, beta = model.visible._affine()
    p_model = np.exp(rbm.logsumexp(neg_e, axis=1) - log_z)
    p_binary = np.exp(exact.log_prob(binary, (V - beta) / alpha))
    np.testing.assert_allclose(p_model, p_binary, rtol=1e-13, atol=0)
    assert abs(exact.log_partition(binary) + kappa - log_z) < 1e-12
    assert abs(units.log_partition(model) - log_z) < 1e-12


@pytest.mark.parametrize("kinds", DISCRETE_PAIRS + [("bernoulli", "bernoulli")])
def test_the_general_enumeration_equals_the_binary_engine(kinds):
    """The blocked sum behind Gaussian models, run on discrete pairs, against the engine."""
    model = layered(kinds, 5, 3, seed=2)
    (log_z, (fields, means)) = units._general_sums(model, True)
    (log_z2, (fields2, means2)) = units._binary_sums(model, True)
    assert abs(log_z - log_z2) < 1e-12
    for name in fields2:
        np.testing.assert_allclose(fields[name], fields2[name], rtol=0, atol=1e-13)
    for a, b in zip(means, means2):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_spin_conditionals_are_tanh_and_the_draws_follow_them():
    model = layered(("spin", "spin"), 3, 4, seed=3)
    v = np.array([1.0, -1.0, 1.0])
    mean = model.mean_h_given_v(v)
    np.testing.assert_allclose(mean, np.tanh(model.hidden.bias + v @ model.W), rtol=1e-15)
    draws = model.sample_h_given_v(np.tile(v, (4000, 1)), rng=0)
    assert set(np.unique(draws)) == {-1.0, 1.0}
    check_mean(draws, mean, ALPHA, "spin draws given v")


# -- Gaussian visible units ------------------------------------------------------------------

def test_gaussian_log_partition_equals_quadrature_on_one_unit():
    model = layered(("gaussian", "bernoulli"), 1, 3, seed=4, scale=1.0)
    value, _ = integrate.quad(lambda x: np.exp(-model.free_energy([x])), -np.inf, np.inf,
                              epsabs=0, epsrel=1e-13)
    assert abs(np.log(value) / units.log_partition(model) - 1) < 1e-8


def test_gaussian_log_partition_equals_quadrature_on_two_units():
    model = layered(("gaussian", "bernoulli"), 2, 3, seed=5, scale=1.0)
    b, s = model.visible.bias, model.visible.sigma
    # every p(v | h) has its mean within 3 + |W| sigma of b: 15 sigma covers the mass
    value, _ = integrate.dblquad(lambda y, x: np.exp(-model.free_energy([x, y])),
                                 b[0] - 15 * s[0], b[0] + 15 * s[0],
                                 b[1] - 15 * s[1], b[1] + 15 * s[1], epsabs=0, epsrel=1e-12)
    assert abs(np.log(value) / units.log_partition(model) - 1) < 1e-8


def test_gaussian_log_partition_agrees_with_monte_carlo_on_more_units():
    """Z = E_q[e^{-F(v)} / q(v)] with q the equal mixture of p(v | h) over every h (drawn as h
    uniform, then v ~ p(v | h)): the weights divided by the exact Z have mean one."""
    model = layered(("gaussian", "bernoulli"), 6, 5, seed=6, scale=0.4)
    rng = np.random.default_rng(7)
    H = (rng.random((50000, 5)) < 0.5).astype(float)
    v = model.sample_v_given_h(H, rng=rng)
    sigma = model.visible.sigma
    log_q = np.full(len(v), -np.inf)
    for h in units._binary_states(0, 2**5, 5):
        z = (v - model.mean_v_given_h(h)) / sigma
        log_q = np.logaddexp(log_q, -0.5 * (z * z).sum(axis=1))
    log_q += -np.log(2**5) - np.log(sigma).sum() - 3 * np.log(2 * np.pi)
    ratio = np.exp(-model.free_energy(v) - log_q - units.log_partition(model))
    check_mean(ratio[:, None], np.ones(1), ALPHA, "importance weights over exact Z")
    with pytest.raises(AssertionError):  # the same test finds a Z that is off by 1%
        check_mean(ratio[:, None], np.full(1, 1.01), ALPHA, "the same, against 1.01")


def test_the_conditional_of_a_gaussian_unit_is_the_normal_density():
    """p(v | h) from the energy, normalised by quadrature, is N(b + sigma W h, sigma^2)."""
    model = layered(("gaussian", "bernoulli"), 1, 2, seed=8, scale=1.0)
    h = np.array([1.0, 0.0])
    norm, _ = integrate.quad(lambda x: np.exp(-model.energy([x], h)), -np.inf, np.inf,
                             epsabs=0, epsrel=1e-13)
    mean, sd = model.mean_v_given_h(h)[0], model.visible.sigma[0]
    for x in (-1.0, 0.3, 2.0):
        density = np.exp(-model.energy([x], h)) / norm
        normal = np.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
        assert abs(density / normal - 1) < 1e-10


def test_gaussian_draws_have_the_conditional_mean_and_variance():
    model = layered(("gaussian", "bernoulli"), 3, 2, seed=9)
    h = np.tile([1.0, 1.0], (20000, 1))
    v = model.sample_v_given_h(h, rng=1)
    mean, sigma = model.mean_v_given_h(h[0]), model.visible.sigma
    check_mean(np.hstack([v, ((v - mean) / sigma) ** 2]), np.r_[mean, np.ones(3)], ALPHA,
               "Gaussian draws: means and standardised second moments")


@pytest.mark.parametrize("kinds", [("gaussian", "bernoulli"), ("gaussian", "spin"),
                                   ("spin", "gaussian")])
def test_gibbs_chains_reach_the_exact_means(kinds):
    model = layered(kinds, 3, 3, seed=10, scale=0.5)
    samples = units.sample_model(model, n_chains=4000, n_steps=30, rng=11)
    v_mean, _ = units.model_means(model)
    check_mean(samples, v_mean, ALPHA, f"Gibbs samples of {kinds}")


# -- gradients -------------------------------------------------------------------------------

def _perturbed(model, x):
    out = model.copy()
    start = 0
    for value in out.parameters().values():
        value.ravel()[:] = x[start:start + value.size]
        start += value.size
    return out


@pytest.mark.parametrize("kinds", [("gaussian", "bernoulli"), ("gaussian", "spin"),
                                   ("spin", "bernoulli"), ("spin", "spin"),
                                   ("bernoulli", "gaussian"), ("spin", "gaussian")])
def test_the_exact_gradient_equals_finite_differences(kinds):
    model = layered(kinds, 3, 2, seed=12)
    rng = np.random.default_rng(13)
    if model.visible.discrete:
        data = model.visible.random_states(5, rng=rng)
    else:
        data = model.visible.bias + rng.normal(size=(5, 3))
    x0 = np.concatenate([v.ravel() for v in model.parameters().values()])
    step = 1e-5
    fd = np.array([(units.log_likelihood(_perturbed(model, x0 + step * e), data)
                    - units.log_likelihood(_perturbed(model, x0 - step * e), data)) / (2 * step)
                   for e in np.eye(x0.size)])
    np.testing.assert_allclose(units.gradient(model, data).flat(), fd, rtol=0, atol=1e-8)


# -- estimators and training -----------------------------------------------------------------

def test_long_cd_chains_average_to_the_exact_gradient():
    """CD-k with fast-mixing chains (small weights, k = 15) is unbiased to far below its noise:
    the mean of 600 estimates matches the exact gradient entry by entry."""
    model = layered(("gaussian", "bernoulli"), 2, 2, seed=14, scale=0.3)
    data = model.visible.bias + np.random.default_rng(15).normal(size=(4, 2))
    rng = np.random.default_rng(16)
    estimates = np.array([rbm.CD(15).gradient(model, data, rng=rng).flat() for _ in range(600)])
    check_mean(estimates, units.gradient(model, data).flat(), ALPHA, "CD-15 estimates")


def test_the_estimators_return_one_field_per_parameter():
    model = layered(("gaussian", "bernoulli"), 3, 2, seed=17)
    data = np.zeros((4, 3))
    pcd = rbm.PCD(n_chains=6, k=2, init="uniform")
    for estimate in (rbm.CD(1).gradient(model, data, rng=0), pcd.gradient(model, data, rng=0),
                     rbm.CD(2, use_probabilities=False).gradient(model, data, rng=0),
                     rbm.ExactGradient().gradient(model, data)):
        assert list(estimate.fields) == ["W", "b", "log_sigma", "c"]
    assert pcd.chains.shape == (6, 3)


@pytest.mark.parametrize("estimator", [rbm.ExactGradient(), rbm.PCD(20, k=1)],
                         ids=["exact", "pcd"])
def test_training_a_gaussian_model_raises_the_exact_likelihood(estimator):
    rng = np.random.default_rng(18)
    data = np.vstack([rng.normal(-1.5, 0.5, size=(40, 2)), rng.normal(1.5, 0.5, size=(40, 2))])
    model = LayeredRBM.random(Gaussian(np.zeros(2)), Bernoulli(np.zeros(2)), scale=0.1, rng=0)
    history = rbm.training.train(model, data, estimator, learning_rate=0.05, epochs=30,
                                 batch_size=20, rng=1, track_every=60)
    assert history.log_likelihood[-1] > history.log_likelihood[0] + 0.3


def test_training_a_spin_model_with_cd_raises_the_exact_likelihood():
    data = np.array([[1, 1, 1, -1], [-1, -1, -1, 1]] * 10, dtype=float)
    model = LayeredRBM.random(Spin(np.zeros(4)), Bernoulli(np.zeros(3)), scale=0.1, rng=0)
    history = rbm.training.train(model, data, rbm.CD(1), learning_rate=0.1, epochs=20,
                                 batch_size=5, rng=1, track_every=80)
    assert history.log_likelihood[-1] > history.log_likelihood[0] + 1.0


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, match", [
    (lambda: Gaussian([0.0, 0.0], sigma=[1.0, 0.0]), ValueError, "sigma must be finite and > 0"),
    (lambda: Gaussian([0.0], sigma=-1.0), ValueError, "sigma must be finite and > 0"),
    (lambda: Gaussian([0.0], sigma=np.nan), ValueError, "sigma must be finite and > 0"),
    (lambda: Gaussian([0.0], sigma=[1.0, 1.0]), ValueError, r"sigma must be a number or have"),
    (lambda: Bernoulli([np.nan]), ValueError, "bias must be finite"),
    (lambda: Spin([[0.0]]), ValueError, "bias must be a 1-d array"),
    (lambda: Spin("x"), TypeError, "bias must be a numeric array"),
    (lambda: LayeredRBM(np.zeros((2, 2)), Bernoulli([0.0]), Bernoulli([0.0, 0.0])), ValueError,
     r"W must have shape \(visible.n_units, hidden.n_units\) = \(1, 2\)"),
    (lambda: LayeredRBM([[np.inf]], Bernoulli([0.0]), Bernoulli([0.0])), ValueError,
     "W must be finite"),
    (lambda: LayeredRBM([[0.0]], "bernoulli", Bernoulli([0.0])), TypeError,
     "visible must be an rbm.units"),
])
def test_bad_layers_and_models_are_refused_by_name(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_states_and_binary_only_functions_are_refused():
    gb = layered(("gaussian", "bernoulli"), 2, 2, seed=19)
    spin = layered(("spin", "bernoulli"), 2, 2, seed=19)
    calls = [
        (lambda: units.log_likelihood(gb, [[0.0, np.nan]]), ValueError, "data must be finite"),
        (lambda: units.log_likelihood(gb, np.zeros((2, 3))), ValueError, "data must have 2 col"),
        (lambda: units.log_likelihood(spin, [[0.0, 1.0]]), ValueError,
         r"data must hold only -1 and 1 \(Spin units\), found 0"),
        (lambda: gb.free_energy([[0.0, 0.0, 0.0]]), ValueError, "v must have 2 columns"),
        (lambda: exact.log_partition(gb), TypeError, "model must be an rbm.RBM"),
        (lambda: rbm.sampling.sample_model(gb, 2, 1, rng=0), TypeError, "model must be an rbm"),
        (lambda: gb.to_binary(), TypeError, "to_binary needs two discrete layers"),
        (lambda: units.log_partition(rbm.RBM.random(2, 2, rng=0)), TypeError,
         "model must be an rbm.units.LayeredRBM"),
        (lambda: units.log_partition(layered(("gaussian", "gaussian"), 2, 2, seed=0)),
         ValueError, "exact values need a discrete layer"),
    ]
    for call, error, match in calls:
        with pytest.raises(error, match=match):
            call()


def test_a_layered_model_changed_after_it_was_made_is_checked_again():
    model = layered(("gaussian", "bernoulli"), 2, 2, seed=20)
    model.visible.log_sigma[0] = np.nan
    for call in (lambda: units.log_partition(model), lambda: model.free_energy([0.0, 0.0]),
                 lambda: rbm.CD(1).gradient(model, np.zeros((1, 2)), rng=0)):
        with pytest.raises(ValueError, match=r"model\.log_sigma must be finite"):
            call()


@pytest.mark.parametrize("kinds", [("gaussian", "bernoulli"), ("spin", "spin")])
def test_an_enumeration_beyond_the_limit_is_refused_at_once(kinds):
    model = LayeredRBM(np.zeros((40, 31)), *(
        {"gaussian": Gaussian, "spin": Spin, "bernoulli": Bernoulli}[k](np.zeros(n)) for k, n in zip(kinds, (40, 31))))
    for call in (lambda: units.log_partition(model), lambda: units.model_means(model)):
        with pytest.raises(ValueError, match=r"2\*\*31 states, beyond the limit of 2\*\*30"):
            call()


def test_too_many_chains_are_refused_with_the_memory_they_need():
    model = layered(("gaussian", "bernoulli"), 2, 2, seed=21)
    with pytest.raises(ValueError, match=r"n_chains=1000000000000 asks for an array of"):
        units.sample_model(model, 10**12, 1, rng=0)


def test_train_checks_what_an_estimator_returns_for_a_layered_model():
    model = layered(("gaussian", "bernoulli"), 2, 2, seed=22)

    class Binary:  # returns the binary model's gradient type
        def gradient(self, model, batch, *, rng):
            return rbm.Gradient(np.zeros((2, 2)), np.zeros(2), np.zeros(2))

    class Missing:  # forgets log_sigma
        def gradient(self, model, batch, *, rng):
            fields = units.gradient(model, batch).fields
            return units.LayeredGradient({k: v for k, v in fields.items() if k != "log_sigma"})

    with pytest.raises(TypeError, match=r"must return an rbm.units.LayeredGradient, got Gradient"):
        rbm.training.train(model, np.zeros((2, 2)), Binary(), learning_rate=0.1, epochs=1,
                           batch_size=2, rng=0)
    with pytest.raises(ValueError, match=r"model's parameters are \['W', 'b', 'log_sigma', 'c'\]"):
        rbm.training.train(model, np.zeros((2, 2)), Missing(), learning_rate=0.1, epochs=1,
                           batch_size=2, rng=0)


def test_tracking_a_layered_model_is_limited_by_its_enumerated_layer():
    wide = LayeredRBM(np.zeros((2, 21)), Gaussian(np.zeros(2)), Bernoulli(np.zeros(21)))
    with pytest.raises(ValueError, match="track_every needs the exact log-likelihood"):
        rbm.training.train(wide, np.zeros((2, 2)), rbm.CD(1), learning_rate=0.1, epochs=1,
                           batch_size=2, rng=0, track_every=1)


def test_layered_gradients_combine_only_with_their_own_kind():
    g = LayeredGradient({"W": np.ones((1, 1)), "b": np.ones(1), "c": np.ones(1)})
    h = LayeredGradient({"W": np.ones((1, 1)), "b": np.ones(1), "c": np.ones(1),
                         "log_sigma": np.ones(1)})
    assert ((g + g) / 2 - g).max_abs() == 0.0
    with pytest.raises(ValueError, match="different fields or shapes"):
        g + h
    with pytest.raises(TypeError):
        g + rbm.Gradient(np.ones((1, 1)), np.ones(1), np.ones(1))
    with pytest.raises(AttributeError):
        g.log_sigma


def test_the_reconstruction_error_of_a_gaussian_model_is_the_squared_gap_to_its_mean():
    model = layered(("gaussian", "bernoulli"), 3, 2, seed=23)
    v = np.random.default_rng(24).normal(size=(4, 3))
    h_mean = model.mean_h_given_v(v)
    recon = model.visible.bias + model.visible.sigma * (h_mean @ model.W.T)
    assert units.reconstruction_error(model, v) == pytest.approx(np.mean((v - recon) ** 2),
                                                                 rel=1e-14)


def test_spin_chains_start_uniform_and_stay_on_the_spins():
    model = layered(("spin", "spin"), 4, 3, seed=25)
    pcd = rbm.PCD(n_chains=500, k=1, init="uniform")
    pcd.gradient(model, np.ones((2, 4)), rng=0)
    assert set(np.unique(pcd.chains)) == {-1.0, 1.0}
    start = model.visible.random_states(4000, rng=1)
    check_mean(start, np.zeros(4), ALPHA, "uniform spins")


def test_standard_deviations_beyond_the_float_range_are_refused():
    with pytest.raises(ValueError, match=r"sigma must lie between 1e-100 and 1e\+100"):
        Gaussian([0.0], sigma=1e-200)
    model = layered(("gaussian", "bernoulli"), 2, 2, seed=26)
    model.visible.log_sigma[1] = 800.0  # exp overflows
    with pytest.raises(ValueError, match=r"model\.log_sigma must lie within \+-230\.3"):
        units.log_partition(model)
    model.visible.log_sigma = np.zeros(3)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        units.log_partition(model)


# -- the hidden marginal -----------------------------------------------------------------------

@pytest.mark.parametrize("kinds", DISCRETE_PAIRS + [("bernoulli", "bernoulli")])
def test_hidden_marginal_matches_joint_enumeration(kinds):
    model = layered(kinds, 4, 3, seed=31)
    _, V, neg_e = brute_log_partition(model)
    H, p_h = units.hidden_marginal(model)
    brute = np.exp(rbm.logsumexp(neg_e, axis=0) - rbm.logsumexp(neg_e))
    # brute_log_partition orders hidden states as itertools.product over the values
    expected = np.array(unit_values(model.hidden, model.n_hidden))
    np.testing.assert_array_equal(H, expected)
    np.testing.assert_allclose(p_h, brute, rtol=0, atol=1e-12)


def test_hidden_marginal_of_gaussian_visible_units_gives_the_model_means():
    model = layered(("gaussian", "bernoulli"), 3, 5, seed=32, scale=1.0)
    H, p_h = units.hidden_marginal(model)
    v_mean, h_mean = units.model_means(model)
    assert abs(p_h.sum() - 1) < 1e-12
    np.testing.assert_allclose(p_h @ H, h_mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p_h @ model.visible.mean(H @ model.W.T), v_mean, rtol=0,
                               atol=1e-12)


def test_hidden_marginal_refuses_a_gaussian_hidden_layer_and_a_large_layer():
    with pytest.raises(TypeError, match="discrete hidden layer"):
        units.hidden_marginal(layered(("bernoulli", "gaussian"), 2, 2, seed=33))
    with pytest.raises(ValueError, match="2\\*\\*21"):
        units.hidden_marginal(layered(("gaussian", "bernoulli"), 1, 21, seed=34))
