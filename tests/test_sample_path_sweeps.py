"""``partition.sample_path`` makes exactly ``n_sweeps`` Gibbs sweeps at each temperature.

Issue 40: a slip leaving the chains one sweep short per temperature when ``n_sweeps >= 2`` was
caught only by a notebook.  Here the law of the chains' final states is computed exactly, as the
base distribution pushed through ``n_sweeps`` sweeps of each intermediate model (transition
matrices of ``rbm.transition``, intermediate models of ``rbm.ais``), and compared with the
chains by a G-test.
"""

import numpy as np
import pytest
from scipy import stats

from rbm import RBM, exact, partition
from rbm.ais import intermediate_model
from rbm.transition import gibbs_transition_matrix

N_CHAINS = 20_000
ALPHA = 1e-3
BETAS = np.array([0.0, 0.5, 1.0])


def _model():
    """A 4 x 3 model with strong weights and biases, so that each sweep moves the law visibly."""
    rng = np.random.default_rng(6)
    return RBM(3.0 * rng.normal(size=(4, 3)), 2.0 * rng.normal(size=4), rng.normal(size=3))


def _law(model, n_sweeps):
    """Exact law of the final states: uniform base, then n_sweeps sweeps at each beta > 0."""
    p = np.full(2**model.n_visible, 2.0**-model.n_visible)
    for beta in BETAS[1:]:
        p = p @ np.linalg.matrix_power(gibbs_transition_matrix(intermediate_model(model, beta)),
                                       n_sweeps)
    return p


def _g_test(law, states):
    index = exact.state_index(states)
    counts = np.bincount(index, minlength=len(law))
    expected = law * len(states)
    keep = counts > 0
    g = 2.0 * np.sum(counts[keep] * np.log(counts[keep] / expected[keep]))
    return stats.chi2.sf(g, df=len(law) - 1)


@pytest.mark.parametrize("n_sweeps", [1, 2, 3])
def test_final_states_follow_n_sweeps_per_temperature(n_sweeps):
    """G-test at level 1e-3, 20,000 chains, seed 7; the law one sweep short is rejected with a
    G statistic's expected excess of 2 N KL (over 400 on this model, see the next test; the 1e-3 critical value at 15 degrees of freedom is 37.7)."""
    model = _model()
    path = partition.sample_path(model, BETAS, n_chains=N_CHAINS, n_sweeps=n_sweeps, rng=7)
    assert path.total_sweeps == N_CHAINS * n_sweeps * (len(BETAS) - 1)
    assert _g_test(_law(model, n_sweeps), path.final_states) > ALPHA


@pytest.mark.parametrize("n_sweeps", [2, 3])
def test_one_sweep_short_is_far_from_the_law(n_sweeps):
    """The test above has power: the law one sweep short differs by 2 N KL > 400."""
    model = _model()
    right, short = _law(model, n_sweeps), _law(model, n_sweeps - 1)
    assert 2 * N_CHAINS * np.sum(short * np.log(short / right)) > 400
