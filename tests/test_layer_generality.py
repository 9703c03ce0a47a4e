"""Functions once written for {0,1} units, on the other layers they make sense for.

exact_weight_moments (any two discrete layers), the curvature module's symmetries and
centering, and the sparsity penalty (any hidden layer), each against brute force.
"""

import numpy as np
import pytest

from rbm import RBM, ais, estimators, exact, training
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
