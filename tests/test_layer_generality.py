"""Functions once written for {0,1} units, on the other layers they make sense for.

exact_weight_moments (any two discrete layers), the curvature module's symmetries and
centering, and the sparsity penalty (any hidden layer), each against brute force.
"""

import numpy as np
import pytest

from rbm import RBM, ais, exact
from rbm.layers import Binary, Gaussian, Potts, Spin

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
