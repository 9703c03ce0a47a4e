"""``rbm.testing.check_gibbs_step`` names the worst failing entry, not any failing entry.

Issue 40: a slip naming the least bad failing entry instead of the worst was caught only by a
notebook.  Here a step that never moves (``v' = v``) fails many entries of :math:`T` by different
margins; the z-scores of every entry are computed independently (scipy's exact binomial tail
for which entries fail at the Bonferroni level, the normal z for the margin) and the failure
must report the largest.
"""

import numpy as np
import pytest
from scipy.stats import binomtest

from rbm import RBM
from rbm.testing import CheckFailed, check_gibbs_step
from rbm.transition import gibbs_transition_matrix

ALPHA = 1e-3
N_DRAWS = 400


def test_the_reported_entry_is_the_worst_failing_one():
    model = RBM(np.array([[1.5, -0.7], [0.4, 1.1]]), np.array([0.3, -0.5]), np.array([0.2, -0.1]))
    T = gibbs_transition_matrix(model)
    counts = N_DRAWS * np.eye(len(T))       # the step leaves every state where it is
    level = ALPHA / T.size
    failing = [(i, j) for i in range(len(T)) for j in range(len(T))
               if binomtest(int(counts[i, j]), N_DRAWS, T[i, j]).pvalue <= level]
    z = np.abs(counts - N_DRAWS * T) / np.sqrt(N_DRAWS * T * (1 - T))
    worst = max(z[ij] for ij in failing)
    least = min(z[ij] for ij in failing)
    assert len(failing) >= 4 and worst > 1.5 * least  # the two readings differ here
    with pytest.raises(CheckFailed) as failure:
        check_gibbs_step(lambda v, rng: v.copy(), model, n_draws=N_DRAWS, alpha=ALPHA, rng=0)
    assert failure.value.z == pytest.approx(worst, rel=1e-12)
