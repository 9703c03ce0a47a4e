"""TemperedPCD.accepted against an exact count of the accepted exchanges.

Issue 48: `accepted` returning counts instead of fractions passed every test (the one test that
read it asked only for more than 0.05).  On the model below every exchange's outcome is known
from the states the call leaves, so the fraction accepted is counted exactly:

One visible unit with bias 2000, no weight, no hidden bias, replicas at beta = 1, 1/2 and 0.
After its Gibbs step a replica at beta > 0 is at v = 1 with probability sigmoid(2000 beta),
1.0 in floating point; the replica at beta = 0 is uniform.  The Metropolis ratio of exchanging
states x and y between betas b_x > b_y is exp((b_x - b_y) 2000 (y - x)): 1 when y = x, exactly 0
in floating point (exp(-1000)) when x = 1 and y = 0.  So the pair (1, 1/2) always exchanges (two
states 1), and the pair (1/2, 0) exchanges exactly when the hot replica is at 1, which an
exchange leaves unchanged: the count is the number of hot replicas at 1 after the call.
"""

import numpy as np

from rbm import RBM
from rbm.tempering import TemperedPCD

PINNED = RBM(np.zeros((1, 1)), b=np.array([2000.0]), c=np.zeros(1))


def test_accepted_is_the_fraction_of_exchanges_accepted_per_pair_over_all_calls():
    pt = TemperedPCD(n_chains=7, betas=[1.0, 0.5, 0.0])
    assert np.array_equal(pt.accepted, [0.0, 0.0])       # before any call: nothing proposed
    rng = np.random.default_rng(0)
    hot_at_one = []
    for _ in range(6):
        pt.gradient(PINNED, [[0.0], [1.0]], rng=rng)
        assert np.array_equal(pt.chains[:2], np.ones((2, 7, 1)))
        hot_at_one.append(int(pt.chains[2].sum()))
    exact = np.array([6 * 7, sum(hot_at_one)]) / (6 * 7)   # accepted / proposed, per pair
    assert 0 < exact[1] < 1                                # a fraction, not 0 or 1
    assert np.abs(pt.accepted - exact).max() < 1e-15, (pt.accepted, exact)
