"""Every layer, and every exact function on models of any two layers, against independent
computations: one-dimensional quadrature, brute-force sums over joint states, mpmath, finite
differences, and a peer implementation (PGM).  Statistical tests state their threshold and seed.
"""

import mpmath
import numpy as np
import pytest
from scipy import integrate

from rbm import RBM, exact
from rbm.layers import (Binary, DReLU, Gaussian, Potts, ReLU, Spin, half_gaussian_moments,
                        log_half_gaussian)
from rbm.model import Gradient, zero_sum_gauge

rng0 = np.random.default_rng(11)


def _r(*shape, scale=1.0):
    return scale * rng0.normal(size=shape)


LAYERS = {
    "binary": lambda n: Binary(_r(n)),
    "spin": lambda n: Spin(_r(n, scale=0.5)),
    "potts": lambda n: Potts(_r(n, 3)),
    "gaussian": lambda n: Gaussian(_r(n), 0.5 + np.abs(_r(n))),
    "relu": lambda n: ReLU(_r(n), 0.5 + np.abs(_r(n))),
    "drelu": lambda n: DReLU(_r(n), _r(n), 0.5 + np.abs(_r(n)), 0.5 + np.abs(_r(n))),
}
CONTINUOUS = {"gaussian", "relu", "drelu"}


def _unit(layer, j):
    """Unit `j` of `layer` as a layer of one unit."""
    one = layer.copy()
    for key in one._names:
        setattr(one, key, getattr(layer, key)[j:j + 1].copy())
    return one


def _unit_log_normaliser(layer, j, t, beta=1.0):
    r"""log of the sum or integral of exp(beta (-E(x) + t s(x))) for unit `j`, by brute force."""
    one = _unit(layer, j)
    if one.discrete:
        X = one.states(0, one.n_states)
        S = one.statistic(X).reshape(len(X), -1)
        return float(np.log(np.sum(np.exp(beta * (-one.energy(X) + S @ np.atleast_1d(t))))))

    def f(x):
        X = np.array([[x]])
        return np.exp(beta * (-one.energy(X)[0] + t * one.statistic(X)[0, 0]))
    low = 0.0 if isinstance(one, ReLU) else -np.inf
    parts = [integrate.quad(f, low, 0.0, epsabs=0, epsrel=1e-13, limit=200)[0]
             if low < 0 else 0.0,
             integrate.quad(f, 0.0, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]]
    return float(np.log(sum(parts)))


# -- the half-Gaussian integral, in closed form ------------------------------------------------

def test_log_half_gaussian_is_exact_to_1e12_over_the_whole_range():
    """L(g, t) against mpmath (50 digits) for z = t/sqrt(g) from -1e8 to 1e8 and g from 1e-8
    to 1e8: relative error at most 1e-12 wherever |L| > 1e-3, absolute 1e-14 elsewhere."""
    mpmath.mp.dps = 50
    worst = 0.0
    for g in (1e-8, 1e-3, 0.37, 1.0, 5.0, 1e4, 1e8):
        for z in (-1e8, -1e5, -1e3, -40.0, -26.0, -10.0, -3.0, -1.0, -1e-3, 0.0, 1e-3, 0.5,
                  2.0, 8.0, 30.0, 40.0, 1e3, 1e5, 1e8):
            t = z * np.sqrt(g)
            gm, tm = mpmath.mpf(g), mpmath.mpf(t)
            zm = tm / mpmath.sqrt(gm)
            exact_value = (mpmath.log(mpmath.sqrt(2 * mpmath.pi / gm)) + zm**2 / 2
                           + mpmath.log(mpmath.ncdf(zm)))
            got = float(log_half_gaussian(g, t))
            err = abs(got - float(exact_value))
            if abs(exact_value) > 1e-3:
                err /= abs(float(exact_value))
            else:
                assert err < 1e-14, (g, z)
                continue
            worst = max(worst, err)
            assert err < 1e-12, (g, z, got, float(exact_value))
    assert worst < 1e-12


def test_half_gaussian_moments_match_quadrature():
    for g, t in ((1.0, 0.3), (2.5, -1.7), (0.4, 3.0), (7.0, -20.0)):
        def w(x, k):
            return x**k * np.exp(-g * x * x / 2 + t * x)
        z = integrate.quad(w, 0, np.inf, args=(0,), epsabs=0, epsrel=1e-13)[0]
        m1 = integrate.quad(w, 0, np.inf, args=(1,), epsabs=0, epsrel=1e-13)[0] / z
        m2 = integrate.quad(w, 0, np.inf, args=(2,), epsabs=0, epsrel=1e-13)[0] / z
        got1, got2 = half_gaussian_moments(g, t)
        np.testing.assert_allclose([got1, got2], [m1, m2], rtol=1e-10)


# -- each layer's formulas ---------------------------------------------------------------------

@pytest.mark.parametrize("beta", [1.0, 0.6])
@pytest.mark.parametrize("kind", list(LAYERS))
def test_log_normaliser_matches_brute_force_or_quadrature(kind, beta):
    layer = LAYERS[kind](3)
    I = _r(2, *layer.shape)
    got = layer.log_normaliser(I, beta)
    for n in range(2):
        want = sum(_unit_log_normaliser(layer, j, I[n, j], beta) for j in range(3))
        assert got[n] == pytest.approx(want, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_mean_statistic_is_the_derivative_of_the_log_normaliser(kind):
    layer = LAYERS[kind](3)
    I = _r(1, *layer.shape)
    eps = 1e-6
    grad = np.zeros(I.shape)
    for idx in np.ndindex(*I.shape[1:]):
        d = np.zeros(I.shape)
        d[(0,) + idx] = eps
        grad[(0,) + idx] = (layer.log_normaliser(I + d)[0] - layer.log_normaliser(I - d)[0]) / (2 * eps)
    np.testing.assert_allclose(layer.mean_statistic(I), grad, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_parameter_gradients_of_the_log_normaliser(kind):
    """normaliser_gradient is d A / d theta (finite differences); potential_gradient is
    d(-E + I.s)/d theta."""
    layer = LAYERS[kind](2)
    I = _r(3, *layer.shape)
    x = layer.sample(I, rng=0)
    eps = 1e-6
    analytic = layer.normaliser_gradient(I)
    potential = layer.potential_gradient(x, I)
    for key, arr in layer.parameters().items():
        for idx in np.ndindex(*arr.shape):
            saved = arr[idx]
            values = []
            for sign in (1, -1):
                arr[idx] = saved + sign * eps
                S = layer.statistic(x).reshape(3, -1)
                values.append((layer.log_normaliser(I),
                               -layer.energy(x) + np.sum(S * I.reshape(3, -1), axis=1)))
            arr[idx] = saved
            fd = (values[0][0] - values[1][0]) / (2 * eps)
            fd_pot = (values[0][1] - values[1][1]) / (2 * eps)
            np.testing.assert_allclose(analytic[key][(slice(None),) + idx], fd, rtol=1e-6,
                                       atol=1e-7, err_msg=key)
            np.testing.assert_allclose(potential[key][(slice(None),) + idx], fd_pot,
                                       rtol=1e-6, atol=1e-7, err_msg=key)


@pytest.mark.parametrize("beta", [1.0, 0.5])
@pytest.mark.parametrize("kind", list(LAYERS))
def test_samples_have_the_conditional_means(kind, beta):
    """Mean of 40,000 draws per unit against layer.mean: |z| < 5 on every unit (seed 3)."""
    layer = LAYERS[kind](3)
    I = np.repeat(_r(1, *layer.shape), 40_000, axis=0)
    x = layer.embed(layer.sample(I, rng=3, beta=beta))
    mean = layer.mean(I[:1], beta)[0]
    se = x.std(axis=0) / np.sqrt(len(x)) + 1e-12
    z = (x.mean(axis=0) - mean) / se
    assert np.all(np.abs(z) < 5), z


@pytest.mark.parametrize("kind", list(LAYERS))
def test_states_have_the_declared_values(kind):
    layer = LAYERS[kind](2)
    if layer.discrete:
        X = layer.states(0, layer.n_states**2)
        assert len({tuple(r) for r in X}) == layer.n_states**2
        layer.check_states(X, "X")
    x = layer.random_states(5, rng=0)
    layer.check_states(x, "x")


# -- models of two layers: exact values against brute force ------------------------------------

PAIRS = [("binary", "binary"), ("spin", "binary"), ("binary", "spin"), ("potts", "binary"),
         ("potts", "drelu"), ("gaussian", "binary"), ("gaussian", "spin"), ("binary", "relu"),
         ("spin", "drelu"), ("potts", "potts"), ("binary", "gaussian")]


def _model(pair, n_visible=3, n_hidden=2, scale=0.6, seed=0):
    visible, hidden = LAYERS[pair[0]](n_visible), LAYERS[pair[1]](n_hidden)
    return RBM.random(visible, hidden, scale=scale, rng=seed)


def _brute_log_partition(model):
    """Sum over the discrete layer's states with the other layer's units summed or integrated
    one by one (brute force or quadrature): shares no code with the engines."""
    side = "hidden" if model.hidden.discrete else "visible"
    x, y = getattr(model, side), getattr(model, "visible" if side == "hidden" else "hidden")
    X = x.states(0, x.n_states**x.n_units)
    terms = []
    for row in X:
        if side == "hidden":
            u = model.input_visible(row[None])[0]
        else:
            u = model.input_hidden(row[None])[0]
        log_y = sum(_unit_log_normaliser(y, j, u[j]) for j in range(y.n_units))
        terms.append(-x.energy(row[None])[0] + log_y)
    return float(np.logaddexp.reduce(terms))


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_log_partition_matches_brute_force(pair):
    model = _model(pair)
    assert exact.log_partition(model) == pytest.approx(_brute_log_partition(model), rel=1e-11)


@pytest.mark.parametrize("pair", [p for p in PAIRS if p[0] not in CONTINUOUS
                                  and p[1] not in CONTINUOUS], ids="-".join)
def test_two_discrete_layers_agree_with_the_joint_sum_either_way(pair):
    model = _model(pair)
    V = model.visible.states(0, model.visible.n_states**model.n_visible)
    H = model.hidden.states(0, model.hidden.n_states**model.n_hidden)
    VV, HH = np.repeat(V, len(H), axis=0), np.tile(H, (len(V), 1))
    joint = float(np.logaddexp.reduce(-model.energy(VV, HH)))
    for layer in ("visible", "hidden"):
        assert exact.log_partition(model, layer=layer) == pytest.approx(joint, rel=1e-12)
    p = exact.visible_distribution(model)
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-12)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_free_energy_is_minus_log_of_the_joint_summed_over_h(pair):
    model = _model(pair)
    v = model.visible.random_states(2, rng=1)
    for row in v:
        u = model.input_hidden(row[None])[0]
        want = model.visible.energy(row[None])[0] - sum(
            _unit_log_normaliser(model.hidden, j, u[j]) for j in range(model.n_hidden))
        assert model.free_energy(row) == pytest.approx(want, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_exact_gradient_is_the_derivative_of_the_log_likelihood(pair):
    """Central differences of exact.log_likelihood in every parameter (step 1e-5)."""
    model = _model(pair)
    data = model.visible.random_states(4, rng=2)
    g = exact.gradient(model, data)
    assert g.names == tuple(model.parameters())
    eps = 1e-5
    for key, arr in model.parameters().items():
        fd = np.zeros(arr.shape)
        for idx in np.ndindex(*arr.shape):
            saved = arr[idx]
            arr[idx] = saved + eps
            up = exact.log_likelihood(model, data)
            arr[idx] = saved - eps
            down = exact.log_likelihood(model, data)
            arr[idx] = saved
            fd[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g.fields[key], fd, rtol=1e-6, atol=1e-8, err_msg=key)


@pytest.mark.parametrize("pair", [("potts", "drelu"), ("gaussian", "binary"),
                                  ("spin", "binary")], ids="-".join)
def test_threads_and_executor_give_the_same_bits(pair):
    from concurrent.futures import ThreadPoolExecutor
    model = _model(pair, n_visible=6, n_hidden=5)
    one = exact.model_statistics(model, n_threads=1, chunk_size=16)
    two = exact.model_statistics(model, n_threads=2, chunk_size=16)
    with ThreadPoolExecutor(2) as pool:
        three = exact.model_statistics(model, executor=pool, chunk_size=16)
    for key in one.names:
        np.testing.assert_array_equal(one.fields[key], two.fields[key])
        np.testing.assert_array_equal(one.fields[key], three.fields[key])


def test_an_algorithm_names_the_layer_and_the_property_it_needs():
    model = _model(("gaussian", "relu"))
    with pytest.raises(ValueError, match="model.visible is Gaussian.*continuous"):
        exact.log_partition(model)
    from rbm import pseudolikelihood, transition
    with pytest.raises(ValueError, match="discrete visible layer; model.visible is Gaussian"):
        pseudolikelihood.pseudo_log_likelihood(model, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="needs discrete units; model.visible is Gaussian"):
        transition.gibbs_transition_matrix(_model(("gaussian", "binary")))
    from rbm import curvature
    with pytest.raises(ValueError, match=r"\{0,1\} units.*model.visible is Spin"):
        curvature.add_hidden_unit(_model(("spin", "binary")), [1, 0, 1], 1.0)


def test_spin_model_equals_its_binary_image():
    """A ±1 model is the binary model of its bits (b' = 2(b - W 1), c' = 2(c - W^T 1) for two
    spin layers): the same p(v), and log Z shifted by the constant kappa."""
    model = _model(("spin", "spin"))
    (av, bv), (ah, bh) = model.visible.bits, model.hidden.bits
    W, b, c = model.W, model.b, model.c
    image = RBM(av * ah * W, av * (b + W @ np.full(2, bh)), ah * (c + W.T @ np.full(3, bv)))
    kappa = bv * b.sum() + bh * c.sum() + bv * bh * W.sum()
    image2, kappa2 = model.to_binary()
    np.testing.assert_array_equal(image2.W, image.W)
    assert kappa2 == kappa
    assert exact.log_partition(model) == pytest.approx(exact.log_partition(image) + kappa,
                                                       rel=1e-13)
    np.testing.assert_allclose(exact.visible_distribution(model),
                               exact.visible_distribution(image), rtol=1e-12)


@pytest.mark.parametrize("hidden", ["binary", "gaussian", "relu", "drelu", "potts"])
def test_potts_zero_sum_gauge_keeps_the_distribution(hidden):
    model = _model(("potts", hidden))
    gauged = zero_sum_gauge(model)
    np.testing.assert_allclose(gauged.W.sum(axis=1), 0.0, atol=1e-14)
    np.testing.assert_allclose(gauged.b.sum(axis=1), 0.0, atol=1e-14)
    v = model.visible.random_states(4, rng=1)   # the free energy moves by a constant only
    shift = gauged.free_energy(v) - model.free_energy(v)
    np.testing.assert_allclose(shift, shift[0], rtol=1e-12)
    np.testing.assert_allclose(exact.visible_distribution(gauged),
                               exact.visible_distribution(model), rtol=1e-12)
    assert exact.log_partition(gauged) == pytest.approx(exact.log_partition(model) - shift[0],
                                                        rel=1e-13)
    if hidden != "gaussian":  # energy linear in the field: the constant is the mean of b
        assert shift[0] == pytest.approx(model.b.mean(axis=1).sum(), rel=1e-12)
    g = exact.gradient(model, model.visible.random_states(5, rng=0))
    np.testing.assert_allclose(g.b.sum(axis=1), 0.0, atol=1e-14)  # training keeps b's gauge


def test_gradient_container_arithmetic_over_any_fields():
    g = Gradient(W=np.ones((2, 3, 1)), b=np.zeros((2, 3)), gamma_h=np.ones(1))
    assert (2 * g - g).names == ("W", "b", "gamma_h")
    assert (g / 2).gamma_h.tolist() == [0.5]
    with pytest.raises(ValueError, match="different shapes or fields"):
        g + Gradient(W=np.ones((2, 1)), b=np.zeros(2), c=np.zeros(1))


# -- a peer: PGM (Tubiana) ---------------------------------------------------------------------
# Numbers computed here by PGM's own code (github.com/jertubiana/PGM, source/, run in double
# precision with a pure-Python stand-in for numba), on the models below.  The mapping:
#  * PGM's weights are ``(n_hidden, n_visible)`` (``(n_hidden, n_visible, q)`` for Potts
#    visible units): ours transposed (``W.transpose(2, 0, 1)``); its coupling is -W h v, ours
#    -v W h: the same sign.  Potts and Bernoulli fields are our biases.
#  * PGM's Gaussian energy is gamma x^2/2 + theta x with statistic x; ours is
#    (x - b)^2/(2 sigma^2) with statistic x/sigma: gamma = 1/sigma^2, theta = -b/sigma^2, the
#    weights of unit i divided by sigma_i, and our energy is larger by the constant
#    sum_i b_i^2/(2 sigma_i^2), so our F(h) is PGM's plus it and our log Z PGM's minus it.
#  * PGM's dReLU has our energy and parameters exactly (x_- = max(-x, 0), theta_- x_-).
# PGM's dReLU log-normaliser is an approximation: its free energies differ from ours by about
# 1e-6 relative, while ours match quadrature to 1e-11 (test_free_energy_... above and
# test_peer_drelu_deviation_is_pgms below).

def _peer_params():
    rng = np.random.default_rng(2024)

    def r(*s):
        return np.round(rng.normal(size=s), 3)
    potts = dict(W=0.7 * r(4, 3, 2), b=r(4, 3), tp=r(2), tm=r(2), gp=1.0 + np.abs(r(2)),
                 gm=1.0 + np.abs(r(2)))
    gauss = dict(W=0.5 * r(3, 4), b=r(3), sigma=0.5 + np.abs(r(3)), c=r(4))
    drelu = dict(W=0.4 * r(5, 2), b=r(5), tp=r(2), tm=r(2), gp=1.0 + np.abs(r(2)),
                 gm=1.0 + np.abs(r(2)))
    rng = np.random.default_rng(7)
    potts2 = dict(W=np.round(rng.normal(size=(4, 3, 3)), 3), b=np.round(rng.normal(size=(4, 3)), 3),
                  c=np.round(rng.normal(size=3), 3))
    return potts, gauss, drelu, potts2


PGM = {
    "potts_drelu_F": [-2.745317854373108, -1.8569321955840508, -3.4689714135409573],
    "potts_drelu_logZ": 8.127972625422819,
    "gauss_bernoulli_Fh": [-3.3566486320310505, -4.598975457339316, -3.6110488295172747],
    "gauss_bernoulli_logZ": 7.218865356518364,
    "bernoulli_drelu_F": [0.17469180615902113, -0.87252107739015, -0.933089352934577],
    "bernoulli_drelu_logZ": 4.61851085674542,
    "potts_bernoulli_F": [-1.7711102151588192, -1.7593268371165207, -1.708997347281393],
    "potts_bernoulli_logZ": 7.680443209456551,
}
V_POTTS = np.array([[0, 1, 2, 0], [2, 2, 1, 1], [1, 0, 0, 2]])


def _peer_models():
    potts, gauss, drelu, potts2 = _peer_params()
    return {
        "potts_drelu": RBM(potts["W"], Potts(potts["b"]),
                           DReLU(potts["tp"], potts["tm"], potts["gp"], potts["gm"])),
        "gauss_bernoulli": RBM(gauss["W"], Gaussian(gauss["b"], gauss["sigma"]),
                               Binary(gauss["c"])),
        "bernoulli_drelu": RBM(drelu["W"], Binary(drelu["b"]),
                               DReLU(drelu["tp"], drelu["tm"], drelu["gp"], drelu["gm"])),
        "potts_bernoulli": RBM(potts2["W"], Potts(potts2["b"]), Binary(potts2["c"])),
    }


def test_peer_potts_and_gaussian_agree_to_rounding():
    models = _peer_models()
    m = models["potts_bernoulli"]
    np.testing.assert_allclose(m.free_energy(V_POTTS), PGM["potts_bernoulli_F"], rtol=1e-13)
    assert exact.log_partition(m) == pytest.approx(PGM["potts_bernoulli_logZ"], rel=1e-13)
    m = models["gauss_bernoulli"]
    const = float(np.sum(m.visible.bias**2 / (2 * m.visible.sigma**2)))
    H = np.array([[0, 1, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    np.testing.assert_allclose(m.free_energy_hidden(H) - const, PGM["gauss_bernoulli_Fh"],
                               rtol=1e-13)
    assert exact.log_partition(m) + const == pytest.approx(PGM["gauss_bernoulli_logZ"],
                                                           rel=1e-13)


def test_peer_drelu_agrees_to_its_approximation():
    """With dReLU hidden units PGM agrees to 1e-5 relative (its log-normaliser's accuracy)."""
    models = _peer_models()
    m = models["potts_drelu"]
    np.testing.assert_allclose(m.free_energy(V_POTTS), PGM["potts_drelu_F"], rtol=1e-5)
    assert exact.log_partition(m) == pytest.approx(PGM["potts_drelu_logZ"], rel=1e-5)
    m = models["bernoulli_drelu"]
    V = np.array([[0, 1, 1, 0, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]])
    np.testing.assert_allclose(m.free_energy(V), PGM["bernoulli_drelu_F"], rtol=1e-4)
    assert exact.log_partition(m) == pytest.approx(PGM["bernoulli_drelu_logZ"], rel=1e-5)


def test_peer_drelu_deviation_is_pgms():
    """Where ours and PGM's dReLU free energies differ (by more than 1e-7), quadrature sides
    with ours to 1e-11."""
    m = _peer_models()["potts_drelu"]
    ours = m.free_energy(V_POTTS)
    assert np.max(np.abs(ours - PGM["potts_drelu_F"])) > 1e-7
    for row, f in zip(V_POTTS, ours):
        u = m.input_hidden(row[None])[0]
        want = m.visible.energy(row[None])[0] - sum(
            _unit_log_normaliser(m.hidden, j, u[j]) for j in range(m.n_hidden))
        assert f == pytest.approx(want, rel=1e-11)


@pytest.mark.parametrize("pair", [("spin", "binary"), ("potts", "spin"), ("potts", "potts")],
                         ids="-".join)
def test_curvature_of_any_discrete_layers(pair):
    """Fisher matrix = E_p(v)[score score^T] with the score from exact.gradient of one row;
    Hessians = finite differences of the model term and of the gradient."""
    from rbm import curvature
    model = _model(pair, n_visible=2, n_hidden=2)
    V = model.visible.states(0, model.visible.n_states**2)
    p = exact.visible_distribution(model)
    scores = np.array([exact.gradient(model, v[None]).flat() for v in V])
    np.testing.assert_allclose(curvature.fisher_information(model),
                               (scores * p[:, None]).T @ scores, atol=1e-12)
    data = model.visible.random_states(3, rng=4)
    params = list(model.parameters().values())
    flat = lambda: np.concatenate([a.ravel() for a in params])  # noqa: E731

    def jacobian(f, eps=1e-6):
        cols = []
        for arr in params:
            for idx in np.ndindex(*arr.shape):
                saved = arr[idx]
                arr[idx] = saved + eps
                up = f()
                arr[idx] = saved - eps
                down = f()
                arr[idx] = saved
                cols.append((up - down) / (2 * eps))
        return np.stack(cols, axis=1)
    assert curvature.n_parameters(model) == flat().size
    np.testing.assert_allclose(curvature.log_partition_hessian(model),
                               jacobian(lambda: exact.model_statistics(model).flat()),
                               atol=1e-7)
    np.testing.assert_allclose(curvature.log_likelihood_hessian(model, data),
                               jacobian(lambda: exact.gradient(model, data).flat()), atol=1e-7)
    step = curvature.natural_gradient(model, data)
    assert step.names == tuple(model.parameters())


def test_unit_values_hidden_marginal_and_model_means():
    assert Binary([0.0]).values.tolist() == [0.0, 1.0]
    assert Spin([0.0]).values.tolist() == [-1.0, 1.0]
    assert Potts(np.zeros((1, 3))).values.tolist() == [0.0, 1.0, 2.0]
    assert Gaussian([0.0]).values is None
    model = _model(("gaussian", "binary"))
    H, p = exact.hidden_marginal(model)
    F = model.free_energy_hidden(H)
    np.testing.assert_allclose(p, np.exp(-F - exact.log_partition(model)), rtol=1e-12)
    v_mean, h_mean = exact.model_means(model)
    moments = exact.model_expectations(model)
    np.testing.assert_allclose(v_mean, model.visible.sigma * moments.v, rtol=1e-12)
    np.testing.assert_allclose(h_mean, moments.h, rtol=1e-12)
    model = _model(("potts", "spin"))
    v_mean, h_mean = exact.model_means(model)
    moments = exact.model_expectations(model)
    np.testing.assert_allclose(v_mean, moments.v.ravel(), rtol=1e-12)
    np.testing.assert_allclose(h_mean, moments.h, rtol=1e-12)


@pytest.mark.parametrize("layer", [Binary(np.zeros(784)), Spin(np.zeros(300)),
                                   Potts(np.zeros((100, 3)))])
def test_states_of_a_wide_layer_by_index_without_overflow(layer):
    # q**n_units exceeds int64 here: the leading digits of any int64 index are 0, and
    # numbering them must not overflow (warnings are errors in this suite).
    index = np.array([0, 1, 5, 2**40 + 3])
    got = layer.states_at(index)
    q, n = layer.n_states, layer.n_units
    low = layer.states_at(np.array([0]))[0, 0]
    for row, i in zip(got, index.tolist()):
        want = []
        for _ in range(n):
            want.append(i % q)
            i //= q
        digits = np.array(want[::-1])
        if q == 2:
            assert np.array_equal(row != low, digits == 1)
        else:
            assert np.array_equal(row.reshape(n, q).argmax(axis=1) if row.size == n * q
                                  else row, digits)
