"""Functions once written for {0,1} units, on the other layers they make sense for.

exact_weight_moments (any two discrete layers), the curvature module's symmetries and
centering, and the sparsity penalty (any hidden layer), each against brute force.
"""

import numpy as np
import pytest

from rbm import RBM, ais, curvature, estimators, exact, training
from rbm.model import parameter_names
from rbm.layers import Binary, DReLU, Gaussian, Potts, ReLU, Spin

KINDS = {"binary": lambda n, r: Binary(0.5 * r.normal(size=n)),
         "spin": lambda n, r: Spin(0.3 * r.normal(size=n)),
         "potts": lambda n, r: Potts(0.5 * r.normal(size=(n, 3)))}
DISCRETE = [("spin", "spin"), ("spin", "binary"), ("potts", "binary"), ("binary", "potts"),
            ("potts", "spin")]


def _model(pair, n_visible=3, n_hidden=2, scale=0.8, seed=0):
    r = np.random.default_rng(seed)
    return RBM.random(KINDS[pair[0]](n_visible, r), KINDS[pair[1]](n_hidden, r), scale=scale,
                      rng=seed)


@pytest.mark.parametrize("pair", DISCRETE, ids="-".join)
def test_exact_weight_moments_give_the_ratio_of_partition_functions(pair):
    model = _model(pair)
    log_ratio = exact.log_partition(model) - exact.log_partition(ais.intermediate_model(model, 0.0))
    log_mean, mean_log = ais.exact_weight_moments(model, 6)
    assert abs(log_mean - log_ratio) < 1e-12
    assert mean_log < log_ratio
    # plain importance sampling from the base: E[log w] = sum_v p_A(v) log(p*_B / p*_A)
    base = ais.intermediate_model(model, 0.0)
    V = model.visible.states(0, model.visible.n_states ** model.n_visible)
    p_A = np.exp(exact.log_prob(base, V))
    brute = p_A @ (base.free_energy(V) - model.free_energy(V))
    assert abs(ais.exact_weight_moments(model, [0.0, 1.0])[1] - brute) < 1e-12


@pytest.mark.parametrize("pair", [("spin", "binary"), ("potts", "spin")], ids="-".join)
def test_exact_mean_log_weight_is_that_of_the_sampled_runs(pair):
    """20,000 forward AIS runs (seed 5): the mean log-weight within 5 standard errors."""
    model = _model(pair, scale=1.5)
    _, mean_log = ais.exact_weight_moments(model, 5)
    run = ais.ais_log_partition(model, n_runs=20_000, betas=5, rng=5)
    se = run.log_weights.std(ddof=1) / np.sqrt(len(run.log_weights))
    assert abs(run.log_weights.mean() - mean_log) < 5 * se


def test_exact_weight_moments_refuse_a_continuous_layer_by_name():
    model = RBM.random(Gaussian(np.zeros(2)), Binary(np.zeros(2)), rng=0)
    with pytest.raises(ValueError, match="model.visible is Gaussian"):
        ais.exact_weight_moments(model, 3)
    with pytest.raises(ValueError, match="n_visible must be at most"):
        ais.exact_weight_moments(RBM.random(Potts(np.zeros((9, 3))), Binary(np.zeros(1)),
                                            rng=0), 3)


HIDDEN = {"binary": lambda n, r: Binary(0.5 * r.normal(size=n)),
          "spin": lambda n, r: Spin(0.3 * r.normal(size=n)),
          "potts": lambda n, r: Potts(0.5 * r.normal(size=(n, 3))),
          "gaussian": lambda n, r: Gaussian(r.normal(size=n), 0.7 + 0.3 * r.random(n)),
          "relu": lambda n, r: ReLU(0.5 * r.normal(size=n), 1.0 + r.random(n)),
          "drelu": lambda n, r: DReLU(0.5 * r.normal(size=n), 0.5 * r.normal(size=n),
                                      1.0 + r.random(n), 1.0 + r.random(n))}


@pytest.mark.parametrize("kind", sorted(HIDDEN))
def test_input_shift_is_a_shift_of_every_input(kind):
    """-E(h) + s(h).(I + delta) and -E'(h) + s(h).I differ by a constant in h."""
    r = np.random.default_rng(0)
    layer = HIDDEN[kind](3, r)
    delta = r.normal(size=layer.shape)
    moved = layer.copy()
    for key, change in layer.input_shift(delta).items():
        getattr(moved, key)[...] += change
    h = layer.sample(r.normal(size=(50,) + layer.shape), rng=1)
    S = layer.statistic(h).reshape(50, -1)
    a = -layer.energy(h) + S @ delta.ravel()
    b = -moved.energy(h)
    np.testing.assert_allclose(a - b, (a - b)[0], atol=1e-12)
    I = r.normal(size=(4,) + layer.shape)
    np.testing.assert_allclose(moved.mean(I), layer.mean(I + delta), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", sorted(HIDDEN))
def test_sparsity_penalty_on_any_hidden_layer(kind):
    r = np.random.default_rng(1)
    model = RBM.random(Spin(0.3 * r.normal(size=4)), HIDDEN[kind](2, r), scale=0.5, rng=1)
    data = model.visible.random_states(6, rng=2)
    target = 0.1 if kind in ("binary", "potts") else -0.2 if kind in ("spin", "drelu") else 0.3
    sparse = training.SparsityPenalty(estimators.ExactGradient(), target=target, cost=0.3,
                                      decay=0.0)
    got = sparse.gradient(model, data, rng=0) - exact.gradient(model, data)
    push = 0.3 * (model.mean_h_given_v(data).mean(axis=0) - target)
    expected = {k: np.zeros_like(v) for k, v in model.parameters().items()}
    expected["W"] = -np.multiply.outer(data.mean(axis=0), push)
    names = parameter_names("hidden", model.hidden)
    for key, change in model.hidden.input_shift(push).items():
        expected[names[key]] = -change
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(got, name), value, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("kind", ["spin", "relu"])
def test_sparsity_penalty_moves_the_mean_activity_towards_the_target(kind):
    """Exact-gradient training for 100 epochs (seed 0), with and without the penalty."""
    r = np.random.default_rng(3)
    model = RBM.random(Binary(np.zeros(4)), HIDDEN[kind](3, r), scale=0.5, rng=3)
    data = model.visible.random_states(8, rng=4)
    target = -0.8 if kind == "spin" else 0.05
    plain, penalised = model.copy(), model.copy()
    for m, est in ((plain, estimators.ExactGradient()),
                   (penalised, training.SparsityPenalty(estimators.ExactGradient(),
                                                        target=target, cost=1.0))):
        training.train(m, data, est, learning_rate=0.1, epochs=100, batch_size=4, rng=0)
    gap = [abs(m.mean_h_given_v(data).mean() - target) for m in (plain, penalised)]
    assert gap[1] < gap[0] - 0.05


@pytest.mark.parametrize("visible", ["binary", "spin", "potts", "gaussian", "relu"])
@pytest.mark.parametrize("hidden", ["binary", "spin"])
def test_flip_hidden_keeps_the_visible_marginal(visible, hidden):
    r = np.random.default_rng(2)
    model = RBM.random(HIDDEN[visible](3, r), HIDDEN[hidden](2, r), scale=0.7, rng=2)
    flipped = curvature.flip_hidden(model, 1)
    v = model.visible.sample(r.normal(size=(6,) + model.visible.shape), rng=3)
    diff = flipped.free_energy(v) - model.free_energy(v)
    np.testing.assert_allclose(diff, diff[0], atol=1e-12)   # F moves by a constant only
    h = model.hidden.random_states(6, rng=4)
    h_flip = h.copy()
    low, high = model.hidden.values
    h_flip[:, 1] = np.where(h[:, 1] == low, high, low)
    e = flipped.energy(v, h_flip) - model.energy(v, h)        # and E(v, h) -> E'(v, h')
    np.testing.assert_allclose(e, e[0], atol=1e-12)


@pytest.mark.parametrize("hidden", sorted(HIDDEN))
def test_permute_hidden_on_any_hidden_layer(hidden):
    r = np.random.default_rng(5)
    model = RBM.random(Spin(0.3 * r.normal(size=3)), HIDDEN[hidden](3, r), scale=0.7, rng=5)
    order = [2, 0, 1]
    permuted = curvature.permute_hidden(model, order)
    v = model.visible.random_states(5, rng=6)
    np.testing.assert_allclose(permuted.free_energy(v), model.free_energy(v), rtol=1e-13)
    h = model.hidden.sample(r.normal(size=(5,) + model.hidden.shape), rng=7)
    np.testing.assert_allclose(permuted.energy(v, h[:, order]), model.energy(v, h), rtol=1e-13)


def test_flip_hidden_refuses_units_of_more_than_two_states():
    with pytest.raises(ValueError, match="model.hidden is Potts"):
        curvature.flip_hidden(_model(("spin", "potts")), 0)


@pytest.mark.parametrize("pair", DISCRETE, ids="-".join)
def test_centering_on_discrete_layers_is_the_same_distribution(pair):
    model = _model(pair)
    r = np.random.default_rng(8)
    mu = r.random(model.visible.shape)
    lam = r.random(model.hidden.shape)
    centered = curvature.to_centered(model, mu, lam)
    back = curvature.from_centered(centered, mu, lam, like=model)
    for name, value in model.parameters().items():
        np.testing.assert_allclose(back.parameters()[name], value, rtol=1e-13, atol=1e-15)
    # brute force: the centered energy, from its definition, differs from E by a constant
    v = model.visible.random_states(6, rng=9)
    h = model.hidden.random_states(6, rng=10)
    sv = (model.visible.statistic(v) - mu).reshape(6, -1)
    sh = (model.hidden.statistic(h) - lam).reshape(6, -1)
    e_centered = -(sv @ centered.b.ravel() + sh @ centered.c.ravel()
                   + np.einsum("ni,ij,nj->n", sv, centered.W.reshape(sv.shape[1], -1), sh))
    diff = e_centered - model.energy(v, h)
    np.testing.assert_allclose(diff, diff[0], atol=1e-12)


def test_centering_refuses_a_continuous_layer_by_name():
    model = RBM.random(Gaussian(np.zeros(2)), Binary(np.zeros(2)), rng=0)
    with pytest.raises(ValueError, match="model.visible is Gaussian"):
        curvature.to_centered(model, np.zeros(2), np.zeros(2))
