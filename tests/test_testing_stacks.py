"""rbm.testing on stacks of RBMs: the block-Gibbs sampler of a DBM, AIS for a DBM and the DBM
gradient, each passing when right and failing, with the cause named, on a known slip.

Seeded; the levels are the checks' own (alpha = 1e-3).
"""

import numpy as np
import pytest

from rbm import deep, exact
from rbm.deep import DBM, DBN
from rbm.model import RBM
from rbm.testing import (CheckFailed, check_gradient_estimator, check_log_partition_estimator,
                         check_stationary_law, network_gradient)

DBM_SMALL = DBM.random((3, 2, 2), scale=2.0, bias_scale=0.5, rng=54)
DATA = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])


def block_gibbs(model):
    def sample(n_chains, n_steps, rng):
        start = [layer.random_states(n_chains, rng=rng) for layer in model.layers]
        return deep.gibbs_sweeps(model, start, n_steps, rng=rng)[0]
    return sample


def test_block_gibbs_of_a_dbm_passes_the_stationary_law_and_the_lower_layers_alone_fail():
    check_stationary_law(block_gibbs(DBM_SMALL), DBM_SMALL, burn_in=40, effect=0.02, rng=0)
    cut = DBM([DBM_SMALL.weights[0], np.zeros((2, 2))], DBM_SMALL.layers)
    with pytest.raises(CheckFailed, match="first two layers"):
        check_stationary_law(block_gibbs(cut), DBM_SMALL, burn_in=40, effect=0.02, rng=0)


def test_ancestral_sampling_of_a_dbn_passes_and_its_first_rbm_alone_fails():
    dbn = DBN([RBM.random(3, 2, scale=1.5, bias_scale=0.5, rng=42),
               RBM.random(2, 3, scale=1.5, bias_scale=0.5, rng=43)])
    check_stationary_law(lambda n, _, rng: deep.sample(dbn, n, rng=rng), dbn, burn_in=1,
                         effect=0.02, rng=1)
    with pytest.raises(CheckFailed, match="top RBM's prior"):
        check_stationary_law(lambda n, _, rng: exact.sample(dbn.rbms[0], n, rng=rng), dbn,
                             burn_in=1, effect=0.02, rng=1)


def test_ais_for_a_dbm_passes_and_a_forgotten_base_log_z_is_named():
    def ais(rng):
        return deep.ais_log_partition(DBM_SMALL, n_runs=20, betas=100, rng=rng).log_z
    check_log_partition_estimator(ais, DBM_SMALL, n_draws=200, rng=0)
    with pytest.raises(CheckFailed, match="log 2"):
        check_log_partition_estimator(lambda rng: ais(rng) - 7 * np.log(2), DBM_SMALL,
                                      n_draws=200, rng=0)


def test_exact_draws_pass_and_mean_field_plus_chains_is_named():
    """An unbiased stochastic gradient (the exact data term, the model term from 50 exact
    draws) passes; mean field + chains fails with its cause named.  (``deep.gradient`` is the
    check's own target, so it would pass by construction.)"""
    def exact_draws(d, rng):
        pos = deep.statistics(DBM_SMALL, d)
        neg = deep.sample_statistics(DBM_SMALL, deep.sample_exact(DBM_SMALL, 50, rng=rng))
        return {key: [a - b for a, b in zip(pos[key], neg[key])] for key in pos}
    check_gradient_estimator(exact_draws, DBM_SMALL, DATA, target="exact", n_draws=300, rng=0)

    def mean_field_pcd(d, rng):
        start = [layer.random_states(50, rng=rng) for layer in DBM_SMALL.layers]
        chains = deep.gibbs_sweeps(DBM_SMALL, start, 40, rng=rng)
        pos = deep.mean_field_statistics(DBM_SMALL, d)
        neg = deep.sample_statistics(DBM_SMALL, chains)
        return {key: [a - b for a, b in zip(pos[key], neg[key])] for key in pos}
    with pytest.raises(CheckFailed, match="mean-field means"):
        check_gradient_estimator(mean_field_pcd, DBM_SMALL, DATA, target="exact",
                                 n_draws=300, rng=0)


def test_stacks_are_refused_where_the_check_cannot_take_them():
    with pytest.raises(ValueError, match="target 'exact'"):
        check_gradient_estimator(lambda d, rng: deep.gradient(DBM_SMALL, d), DBM_SMALL, DATA,
                                 n_draws=50, rng=0)
    g = network_gradient(deep.gradient(DBM_SMALL, DATA))
    assert g.names == ("W1", "W2", "b", "c1", "c2")
    with pytest.raises(TypeError, match="terms"):
        network_gradient([1, 2])
