"""Training principles around the partition function: gradients, consistency, bad input."""

import numpy as np
import pytest
import sympy as sp
from threadpoolctl import threadpool_limits

import rbm
from rbm import exact, principles, symbolic
from rbm.layers import Binary, DReLU, Gaussian, Potts, ReLU, Spin
from rbm.principles import (
    DenoisingScoreMatching,
    MinimumProbabilityFlow,
    NoiseContrastive,
    PseudoLikelihood,
    RatioMatching,
    ScoreMatching,
    fit,
)
from rbm.pseudolikelihood import pseudo_log_likelihood

NEIGHBOUR = [PseudoLikelihood, RatioMatching, MinimumProbabilityFlow]


def random_layer(kind, n, rng):
    if kind == "binary":
        return Binary(rng.normal(size=n))
    if kind == "spin":
        return Spin(rng.normal(size=n))
    if kind == "potts":
        return Potts(rng.normal(size=(n, 3)))
    if kind == "gaussian":
        return Gaussian(rng.normal(size=n), sigma=np.exp(0.3 * rng.normal(size=n)))
    if kind == "relu":
        return ReLU(rng.normal(size=n), gamma=np.exp(0.3 * rng.normal(size=n)))
    return DReLU(rng.normal(size=n), rng.normal(size=n))


def random_model(visible, hidden, seed):
    rng = np.random.default_rng(seed)
    return rbm.RBM.random(random_layer(visible, 4, rng), random_layer(hidden, 3, rng),
                          scale=1.0, rng=rng)


def visible_rows(model, n, seed):
    rng = np.random.default_rng(seed)
    return model.visible.sample(np.zeros((n,) + model.visible.shape), rng=rng)


def finite_difference(model, value, h=1e-5):
    """Central differences of value(model) in every parameter, in the order of Gradient.flat."""
    out = []
    for arr in model.parameters().values():
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + h
            up = value(model)
            arr[idx] = old - h
            down = value(model)
            arr[idx] = old
            out.append((up - down) / (2 * h))
    return np.array(out)


def assert_relative(analytic, numeric, tol=1e-7):
    gap = np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)
    assert gap <= tol, f"relative gap {gap:.3g} > {tol:g}"


# -- gradients against central differences -------------------------------------------

@pytest.mark.parametrize("principle", NEIGHBOUR)
@pytest.mark.parametrize("visible", ["binary", "spin", "potts"])
@pytest.mark.parametrize("hidden", ["binary", "spin", "relu"])
def test_neighbour_principles_gradient_matches_central_difference(principle, visible, hidden):
    model = random_model(visible, hidden, seed=1)
    data = visible_rows(model, 6, seed=2)
    p = principle()
    assert_relative(p.gradient(model, data).flat(),
                    finite_difference(model, lambda m: p.value(m, data)))


@pytest.mark.parametrize("visible", ["binary", "spin", "potts", "gaussian"])
@pytest.mark.parametrize("hidden", ["binary", "drelu"])
def test_nce_gradients_match_central_differences(visible, hidden):
    model = random_model(visible, hidden, seed=3)
    data = visible_rows(model, 6, seed=4)
    nce = NoiseContrastive(noise_ratio=2.0)
    nce.gradient(model, data, rng=0)  # fits the noise and sets log_z
    noise = nce.sample_noise(12, rng=5)
    g, dc = nce.objective_gradient(model, data, noise)
    assert_relative(g.flat(), finite_difference(model, lambda m: nce.value(m, data, noise)))
    h = 1e-5
    numeric = (nce.value(model, data, noise, log_z=nce.log_z + h)
               - nce.value(model, data, noise, log_z=nce.log_z - h)) / (2 * h)
    assert abs(dc - numeric) <= 1e-7 * abs(numeric)


@pytest.mark.parametrize("hidden", ["binary", "spin"])
def test_score_matching_gradient_matches_central_difference(hidden):
    model = random_model("gaussian", hidden, seed=6)
    data = np.random.default_rng(7).normal(size=(6, 4))
    sm = ScoreMatching()
    assert_relative(sm.gradient(model, data).flat(),
                    finite_difference(model, lambda m: sm.value(m, data)))


@pytest.mark.parametrize("hidden", ["binary", "spin"])
def test_denoising_score_matching_gradient_matches_central_difference(hidden):
    model = random_model("gaussian", hidden, seed=8)
    rng = np.random.default_rng(9)
    data, eps = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    dsm = DenoisingScoreMatching(noise_std=0.3)
    assert_relative(dsm.objective_gradient(model, data, eps).flat(),
                    finite_difference(model, lambda m: dsm.value(m, data, eps)))


# -- the gradients derived by SymPy on a tiny model ------------------------------------

def sympy_gradient(expr, symbols, values):
    """The SymPy gradient of expr, evaluated where the symbols take values."""
    point = dict(zip(symbols, values))
    return np.array([float(sp.diff(expr, s).subs(point)) for s in symbols])


def binary_symbols():
    s = symbolic.rbm_symbols(2, 1)
    return s, list(s.W) + list(s.b) + list(s.c)


@pytest.mark.parametrize("name", ["pl", "rm", "mpf", "nce"])
def test_binary_principles_agree_with_their_sympy_derivatives(name):
    s, symbols = binary_symbols()
    x = sp.Matrix([1, 0])

    def F(v):
        return symbolic.free_energy_closed_form(s.W, s.b, s.c, sp.Matrix(v))

    flips = [sp.Matrix([0, 0]), sp.Matrix([1, 1])]
    sig = symbolic.sigmoid_expr
    if name == "pl":
        expr = sum(sp.log(sig(F(y) - F(x))) for y in flips)
    elif name == "rm":
        expr = -sum(sig(F(x) - F(y)) ** 2 for y in flips)
    elif name == "mpf":
        expr = -sum(sp.exp((F(x) - F(y)) / 2) for y in flips)
    else:  # one data row, one noise row y = (1, 1), uniform noise, nu = 1, c = log Z symbol
        c = sp.Symbol("c", real=True)
        symbols = symbols + [c]
        y = sp.Matrix([1, 1])

        def G(v):
            return -F(v) - c - sp.log(sp.Rational(1, 4))

        expr = sp.log(sig(G(x))) + sp.log(sig(-G(y)))
    model = rbm.RBM.random(2, 1, scale=1.0, bias_scale=1.0, rng=11)
    values = list(model.W.ravel()) + list(model.b) + list(model.c)
    data = np.array([[1.0, 0.0]])
    if name == "nce":
        nce = NoiseContrastive(Binary([0.0, 0.0]))
        g, dc = nce.objective_gradient(model, data, [[1.0, 1.0]], log_z=0.7)
        ours = np.append(g.flat(), dc)
        values = values + [0.7]
    else:
        ours = {"pl": PseudoLikelihood, "rm": RatioMatching,
                "mpf": MinimumProbabilityFlow}[name]().gradient(model, data).flat()
    assert np.allclose(ours, sympy_gradient(expr, symbols, values), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", ["sm", "dsm"])
def test_score_matching_agrees_with_its_sympy_derivative(name):
    v = sp.symbols("v1:3", real=True)
    W = sp.Matrix(2, 1, sp.symbols("W1:3", real=True))
    b = sp.symbols("b1:3", real=True)
    ls = sp.symbols("s1:3", real=True)
    c = sp.Symbol("c1", real=True)
    a = c + sum(v[i] * sp.exp(-ls[i]) * W[i, 0] for i in range(2))
    F = (sum((v[i] - b[i]) ** 2 * sp.exp(-2 * ls[i]) / 2 for i in range(2))
         - symbolic.softplus_expr(a))
    psi = [-sp.diff(F, v[i]) for i in range(2)]
    x, eps, s_noise = [0.3, -1.2], [0.4, 1.1], 0.5
    if name == "sm":
        expr = sum(psi[i] ** 2 / 2 + sp.diff(psi[i], v[i]) for i in range(2))
        point = dict(zip(v, x))
    else:
        expr = sum((psi[i] + eps[i] / s_noise) ** 2 / 2 for i in range(2))
        point = {v[i]: x[i] + s_noise * eps[i] for i in range(2)}
    expr = -expr.subs(point)
    symbols = list(W) + list(b) + list(ls) + [c]
    model = rbm.RBM([[0.8], [-1.1]], Gaussian([0.2, -0.4], sigma=[0.9, 1.3]), Binary([0.3]))
    values = list(model.W.ravel()) + list(model.visible.bias) + list(
        model.visible.log_sigma) + list(model.c)
    if name == "sm":
        ours = ScoreMatching().gradient(model, [x]).flat()
    else:
        ours = DenoisingScoreMatching(s_noise).objective_gradient(model, [x], [eps]).flat()
    assert np.allclose(ours, sympy_gradient(expr, symbols, values), rtol=1e-12, atol=1e-13)


# -- values ----------------------------------------------------------------------------

@pytest.mark.parametrize("visible", ["binary", "potts"])
def test_pseudolikelihood_value_equals_the_exact_pseudo_log_likelihood(visible):
    model = random_model(visible, "binary", seed=12)
    data = visible_rows(model, 8, seed=13)
    assert PseudoLikelihood().value(model, data) == pytest.approx(
        pseudo_log_likelihood(model, data), rel=1e-12)


def test_free_energy_gradient_is_the_data_term_of_the_likelihood_gradient():
    model = random_model("potts", "relu", seed=14)
    data = visible_rows(model, 5, seed=15)
    g = principles.free_energy_gradient(model, data, np.full(5, 0.2))
    assert np.allclose(g.flat(), exact.data_statistics(model, data).flat(), rtol=1e-12)


def test_neighbours_differ_from_their_row_in_exactly_one_unit():
    layer = Potts(np.zeros((3, 4)))
    x = np.array([[0.0, 3.0, 1.0]])
    y = principles.single_unit_neighbours(layer, x)
    assert y.shape == (1, 3, 3, 3)
    changed = (y != x[:, None, None, :]).sum(axis=3)
    assert (changed == 1).all()
    assert len({tuple(r) for r in y.reshape(-1, 3)}) == 9


@pytest.mark.parametrize("principle", NEIGHBOUR)
@pytest.mark.parametrize("visible", ["binary", "spin", "potts"])
@pytest.mark.parametrize("hidden", ["binary", "potts", "gaussian"])
def test_rank_one_gradient_equals_the_gradient_over_every_neighbour(principle, visible, hidden):
    """The O(n_v n_h) per row gradient (rank-one updates of the hidden input) equals the one
    that forms every neighbour and multiplies it by W, to 1e-13 relative."""
    model = random_model(visible, hidden, seed=21)
    data = visible_rows(model, 9, seed=22)
    fast = principle().gradient(model, data)
    slow = principle().gradient(model, data, method="rows")
    assert fast.names == slow.names
    gap = np.abs(fast.flat() - slow.flat()).max() / np.abs(slow.flat()).max()
    assert gap <= 1e-13


@pytest.mark.parametrize("visible", ["binary", "spin", "potts"])
def test_rank_one_differences_equal_the_free_energies_of_the_neighbours(visible):
    model = random_model(visible, "binary", seed=23)
    x = model.visible.check_states(visible_rows(model, 7, seed=24), "x", allow_1d=False)[0]
    d, _ = principles.neighbour_differences(model, x)
    y = principles.single_unit_neighbours(model.visible, x)
    n, m, k, _ = y.shape
    direct = model.free_energy(y.reshape(-1, m)).reshape(n, m, k) - model.free_energy(x)[:, None,
                                                                                          None]
    assert np.abs(d - direct).max() <= 1e-12 * max(1.0, np.abs(direct).max())


def test_rank_one_gradient_fails_without_its_rank_one_term():
    """A mutant that leaves out the neighbours' change of statistic at their own unit (the
    rank-one term of the weight gradient) differs from the reference: the equality test
    above can fail."""
    model = random_model("binary", "binary", seed=25)
    x = model.visible.check_states(visible_rows(model, 6, seed=26), "x", allow_1d=False)[0]
    d, parts = principles.neighbour_differences(model, x)
    slope = np.exp(-d) / (1 + np.exp(-d)) / x.shape[0]          # PL's slope, equal weights
    good = principles.neighbour_gradient(model, parts, slope)
    mutant = principles.neighbour_gradient(model, dict(parts, dS=0 * parts["dS"]), slope)
    ref = PseudoLikelihood().gradient(model, x, method="rows")
    assert np.abs(good.flat() - ref.flat()).max() <= 1e-13 * np.abs(ref.flat()).max()
    assert np.abs(mutant.W - ref.W).max() > 1e-3


def test_rank_one_method_is_checked_by_name():
    model = random_model("binary", "binary", seed=27)
    with pytest.raises(ValueError, match="method"):
        PseudoLikelihood().gradient(model, [[0, 1, 0, 1]], method="fast")


@pytest.mark.parametrize("kind", ["binary", "spin", "potts", "gaussian"])
@pytest.mark.parametrize("pseudo_count", [1.0, 0.5])
def test_fitted_noise_has_the_data_marginals_with_the_pseudo_count(kind, pseudo_count):
    """fit_noise_layer gives every unit the data's frequencies, smoothed by the pseudo-count
    per value ((count_a + c) / (N + q c)), or for Gaussian units the data's mean and standard
    deviation: the noise's marginals (its mean statistic at zero input) are the data's.
    Normalising Potts counts over the units instead of the categories fails this."""
    rng = np.random.default_rng(31)
    layer = random_layer(kind, 5, rng)
    data = layer.sample(np.zeros((40, 5) + layer.shape[1:]) + rng.normal(size=(40,) + layer.shape),
                        rng=rng)
    noise = principles.fit_noise_layer(layer, data, pseudo_count=pseudo_count)
    assert type(noise) is type(layer) and noise.shape == layer.shape
    zero = np.zeros((1,) + layer.shape)
    if kind == "gaussian":
        assert np.allclose(noise.mean(zero)[0], data.mean(axis=0), rtol=0, atol=1e-12)
        assert np.allclose(noise.sigma, data.std(axis=0), rtol=1e-12)
        return
    values = layer.values
    counts = (data[:, :, None] == values).sum(axis=0)                     # (units, q)
    expected = (counts + pseudo_count) / (data.shape[0] + values.size * pseudo_count)
    marginal = noise.mean_statistic(zero)[0]
    if kind != "potts":                                                   # P(unit = high)
        marginal = np.stack([1 - (marginal - values[0]) / (values[1] - values[0]),
                             (marginal - values[0]) / (values[1] - values[0])], axis=-1)
    assert np.abs(marginal - expected).max() <= 1e-12
    assert np.allclose(marginal.sum(axis=-1), 1.0)


# -- consistency ------------------------------------------------------------------------

@pytest.mark.parametrize("principle", NEIGHBOUR + [NoiseContrastive])
@pytest.mark.parametrize("visible", ["binary", "potts"])
def test_population_gradient_vanishes_at_the_true_model(principle, visible):
    """Fisher consistency, exactly: the objective's expectation under the model is stationary
    at the model (every visible state weighted by its exact probability)."""
    model = random_model(visible, "binary", seed=16)
    states = model.visible.states(0, model.visible.n_states ** model.n_visible)
    p = np.exp(exact.log_prob(model, states))
    if principle is NoiseContrastive:
        nce = NoiseContrastive(principles.fit_noise_layer(model.visible, states[:5]))
        q = np.exp(nce.log_noise(states))
        g, dc = nce.objective_gradient(model, states, states, log_z=exact.log_partition(model),
                                       weights=p, noise_weights=q)
        assert abs(dc) < 1e-12
    else:
        g = principle().gradient(model, states, weights=p)
        # the same principle at a model one step away is not stationary: the check can fail
        other = model.copy()
        other.W += 0.1
        assert principle().gradient(other, states, weights=p).max_abs() > 1e-3
    assert g.max_abs() < 1e-12


@pytest.mark.parametrize("principle", NEIGHBOUR + [NoiseContrastive])
def test_estimate_approaches_the_truth_as_data_grow(principle):
    """Data from a 4 x 2 RBM; the estimate (L-BFGS from the truth) at N = 500 and 8000 rows.
    KL(truth || estimate) falls as 1/N: seed 1 for the data, 2 for the noise; N * KL stays
    below 30 and the larger sample's KL is at most a quarter of the smaller's (1/16 expected)."""
    truth = rbm.RBM.random(4, 2, scale=1.0, bias_scale=0.5, rng=0)
    p = exact.visible_distribution(truth)
    kl = {}
    for n in (500, 8000):
        with threadpool_limits(1, user_api="blas"):   # L-BFGS's stop depends on sum order
            fitted, result = fit(truth, exact.sample(truth, n, rng=1), principle(), rng=2)
        # at a stationary point: L-BFGS's strict stop (gtol 1e-9) is not always reached
        assert np.abs(result.jac).max() < 1e-6, result.message
        kl[n] = exact.kl_divergence(p, fitted)
        assert n * kl[n] < 30
    assert kl[8000] < kl[500] / 4


GAUSSIAN_TRUTH = ([[3.0, -1.0], [0.5, 2.5]], [-1.0, -1.0], [1.0, 0.7], [0.3, -0.5])


@pytest.mark.parametrize("principle", [ScoreMatching(), NoiseContrastive(),
                                       DenoisingScoreMatching(0.3, n_corruptions=4)])
def test_gaussian_estimates_approach_the_truth_as_data_grow(principle):
    """A Gaussian-Bernoulli RBM of well separated components (identifiable parameters); the
    parameter error at N = 8000 is below 0.5 and below two thirds of that at N = 500 (seeds
    1 and 2).  DSM's target is the smoothed density, within about s**2 of the truth."""
    W, b, sigma, c = GAUSSIAN_TRUTH
    truth = rbm.RBM(W, Gaussian(b, sigma=sigma), Binary(c))
    theta = np.concatenate([a.ravel() for a in truth.parameters().values()])
    err = {}
    for n in (500, 8000):
        # one BLAS thread: L-BFGS's stopping test is sensitive to the order of sums (with
        # several, DSM at N = 8000 can end in an abnormal line search at its optimum)
        with threadpool_limits(1, user_api="blas"):
            fitted, result = fit(truth, exact.sample(truth, n, rng=1), principle, rng=2)
        assert result.success
        err[n] = np.linalg.norm(np.concatenate(
            [a.ravel() for a in fitted.parameters().values()]) - theta)
        if isinstance(principle, NoiseContrastive):
            principle.log_z = None
    assert err[8000] < 0.5 and err[8000] < err[500] * 2 / 3


# -- training with train -----------------------------------------------------------------

@pytest.mark.parametrize("principle", NEIGHBOUR + [NoiseContrastive])
def test_train_raises_the_log_likelihood_with_each_principle(principle):
    data = rbm.datasets.bars_and_stripes(2)
    model = rbm.RBM.random(4, 3, scale=1.0, rng=0)
    history = rbm.training.train(model, data, principle(), learning_rate=0.2, epochs=300,
                                 batch_size=6, rng=0, track_every=300)
    # the exact gradient gains 0.31 with the same settings
    assert history.log_likelihood[-1] > history.log_likelihood[0] + 0.25


def test_nce_learns_log_z_while_training():
    data = rbm.datasets.bars_and_stripes(2)
    model = rbm.RBM.random(4, 3, scale=1.0, rng=0)
    nce = NoiseContrastive(noise_ratio=4.0)
    rbm.training.train(model, data, nce, learning_rate=0.2, epochs=300, batch_size=6, rng=0)
    assert abs(nce.log_z - exact.log_partition(model)) < 0.2


# -- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("principle", NEIGHBOUR)
def test_neighbour_principles_refuse_a_continuous_visible_layer(principle):
    model = random_model("gaussian", "binary", seed=0)
    with pytest.raises(ValueError, match="model.visible"):
        principle().value(model, np.zeros((2, 4)))


@pytest.mark.parametrize("principle", [ScoreMatching(), DenoisingScoreMatching(0.1)])
def test_score_matching_refuses_unsupported_layers(principle):
    with pytest.raises(ValueError, match="model.visible"):
        principle.gradient(random_model("binary", "binary", seed=0), np.zeros((2, 4)), rng=0)
    with pytest.raises(ValueError, match="model.hidden"):
        principle.gradient(random_model("gaussian", "relu", seed=0), np.zeros((2, 4)), rng=0)


def test_data_of_the_wrong_kind_is_refused_by_name():
    model = random_model("binary", "binary", seed=0)
    with pytest.raises(ValueError, match="data"):
        RatioMatching().gradient(model, [[0.5, 0, 1, 1]])
    with pytest.raises(ValueError, match="data"):
        PseudoLikelihood().value(model, [[0, 1]])
    with pytest.raises(ValueError, match="weights"):
        MinimumProbabilityFlow().value(model, [[0, 1, 0, 1]], weights=[1.0, 2.0])


def test_nce_refuses_a_noise_layer_unlike_the_visible_layer():
    model = random_model("binary", "binary", seed=0)
    with pytest.raises(ValueError, match="noise"):
        NoiseContrastive(Spin(np.zeros(4))).gradient(model, [[0, 1, 0, 1]], rng=0)
    with pytest.raises(TypeError, match="noise"):
        NoiseContrastive(np.zeros(4))
    with pytest.raises(ValueError, match="fit_noise_layer"):
        principles.fit_noise_layer(ReLU(np.zeros(2)), [[0.0, 1.0]])


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="noise_std"):
        DenoisingScoreMatching(0.0)
    with pytest.raises(ValueError, match="noise_ratio"):
        NoiseContrastive(noise_ratio=-1.0)
    with pytest.raises(ValueError, match="eps"):
        DenoisingScoreMatching(0.1).value(random_model("gaussian", "binary", seed=0),
                                          np.zeros((2, 4)), np.zeros((3, 4)))
    with pytest.raises(TypeError, match="principle"):
        fit(random_model("binary", "binary", seed=0), np.zeros((2, 4)), rbm.CD(1))
