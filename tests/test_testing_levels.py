"""rbm.testing's t-tests: their level at the fewest draws they accept, and the slips that break it.

Issue 36 found that at 4 draws (then "enough" for some bugs) correct code failed the CD-1 and
training-step checks on 33 of 200 seeds at alpha = 1e-3: draws all equal give a standard
error of 0.  The t-tests now refuse fewer than MIN_MEAN_DRAWS draws and entries whose draws
are all equal; here the false alarms of correct code at exactly MIN_MEAN_DRAWS draws are
counted over 200 seeds and must lie within the binomial range of alpha.  Issue 40 asked for a
package test that fails when the t-tests use n instead of n - 1 degrees of freedom, and when
check_gibbs_step names the least bad failing entry instead of the worst.
"""

import numpy as np
import pytest
from scipy.stats import binom
from scipy.stats import t as student_t

import rbm
from rbm import testing
from rbm.reference_impl import NumpyRBM

MODEL = rbm.RBM.random(4, 4, scale=1.0, bias_scale=1.0, rng=3)
DATA = np.random.default_rng(1).integers(0, 2, size=(6, 4)).astype(float)
CHAINS = np.random.default_rng(2).integers(0, 2, size=(6, 4)).astype(float)
N = testing.MIN_MEAN_DRAWS


def mean_checks(n_draws, alpha):
    """The t-test checks of the package's test bed, as functions of a seed."""
    i = NumpyRBM(MODEL.W, MODEL.b, MODEL.c)
    pcd_target = testing.expected_pcd_gradient(MODEL, DATA, CHAINS, k=1)
    mu, lam = DATA.mean(axis=0), np.full(4, 0.5)

    def step(W, b, c, data, rng):
        return NumpyRBM(W, b, c).cd_update(data, 0.1, 1, rng)
    return {
        "CD-1": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.cd_gradient(d, 1, r), MODEL, DATA, n_draws=n_draws, alpha=alpha,
            rng=s),
        "PCD-1": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.pcd_gradient(d, CHAINS.copy(), 1, r)[0], MODEL, DATA,
            target=pcd_target, n_draws=n_draws, alpha=alpha, rng=s),
        "centred CD-1": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.centred_cd_gradient(d, 1, r, mu, lam), MODEL, DATA,
            offsets=(mu, lam), n_draws=n_draws, alpha=alpha, rng=s),
        "training step": lambda s: testing.check_training_step(
            step, MODEL, DATA, learning_rate=0.1, n_draws=n_draws, alpha=alpha, rng=s),
        "one-bit PL": lambda s: testing.check_pseudo_likelihood(
            i.one_bit_pseudo_log_likelihood, MODEL, DATA, n_draws=n_draws, alpha=alpha,
            rng=s),
    }


@pytest.mark.parametrize("alpha", [0.05, 1e-3])
@pytest.mark.parametrize("name", sorted(mean_checks(N, 0.05)))
def test_t_tests_hold_their_level_at_the_fewest_draws_they_accept(name, alpha):
    """At MIN_MEAN_DRAWS draws, seeds 0..199: false alarms within the binomial range of alpha.

    The count must not exceed binom.isf(1e-3, 200, alpha) (21 at 0.05, 3 at 1e-3).  Measured
    at 50 draws: 8, 4, 11, 8, 8 of 200 at 0.05 and 0, 1, 0, 0, 1 at 1e-3 (CD-1, PCD-1, centred
    CD-1, training step, one-bit PL); at 4 draws the CD-1 check failed 33 times at 1e-3, and
    at 30 the centred CD-1 check 3 times in 200.
    """
    failed, total = testing.failure_rate(mean_checks(N, alpha)[name], range(200))
    assert failed <= binom.isf(1e-3, total, alpha), f"{failed} of {total} at alpha = {alpha}"


def test_four_draws_are_refused_and_draws_needed_never_suggests_fewer_than_accepted():
    checks = mean_checks(4, 1e-3)
    for name in checks:
        with pytest.raises(ValueError, match="n_draws = 4 is too few for a t-test"):
            checks[name](0)
    assert testing.draws_needed(1.0, 0.01, alpha=1e-3, n_tests=24, t_test=True) == N
    wrong = NumpyRBM(MODEL.W, MODEL.b, MODEL.c, bug="learning rate twice")
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_training_step(
            lambda W, b, c, d, r: NumpyRBM(W, b, c, bug=wrong.bug).cd_update(d, 0.1, 1, r),
            MODEL, DATA, learning_rate=0.1, rng=10)
    assert failure.value.draws_needed() == N  # was 4: the catalogue's "enough" column


def test_an_entry_whose_draws_are_all_equal_and_wrong_is_refused_not_failed():
    """One entry constant (and not its exact value), the others varying: no t-test exists."""
    i = NumpyRBM(MODEL.W, MODEL.b, MODEL.c)

    def no_hidden_gradient(d, r):
        dW, db, dc = i.cd_gradient(d, 1, r)
        return dW, db, np.zeros_like(dc)
    with pytest.raises(ValueError, match=r"c\[0\], c\[1\].* are all equal .* standard error of 0"):
        testing.check_gradient_estimator(no_hidden_gradient, MODEL, DATA, n_draws=N, rng=0)


# -- issue 40: n vs n - 1, and the worst entry ----------------------------------------------

def draws_with_t(t, n):
    """n draws of one entry whose t statistic against 0 is exactly t (sample sd 1)."""
    x = np.random.default_rng(0).standard_normal(n)
    x = (x - x.mean()) / x.std(ddof=1)
    return x + t / np.sqrt(n)


@pytest.mark.parametrize("n", [N, 200])
def test_the_t_test_rejects_exactly_beyond_students_quantile_with_n_minus_1_degrees(n):
    """Draws whose t statistic lies between the quantiles of n - 1 and n degrees of freedom.

    With n - 1 (right) the check passes and reports the t statistic computed by hand with
    the sample variance over n - 1; with n degrees of freedom, or the variance over n, it
    would fail.  Its level on normal draws is then exactly alpha per entry.
    """
    alpha = 0.05
    right, slip = student_t.isf(alpha / 2, n - 1), student_t.isf(alpha / 2, n)
    t = (right + slip) / 2
    x = draws_with_t(t, n)
    assert abs(x.mean() / (x.std(ddof=1) / np.sqrt(n)) - t) < 1e-9
    assert x.mean() / (x.std(ddof=0) / np.sqrt(n)) > right  # the variance over n: would fail
    target = rbm.Gradient(W=np.zeros((1, 1)), b=np.zeros(1), c=np.zeros(1))
    draws = iter(np.stack([x, draws_with_t(0.0, n), -draws_with_t(0.0, n)], axis=1))

    def estimate(data, rng):
        w, b, c = next(draws)
        return np.array([[w]]), np.array([b]), np.array([c])
    result = testing.check_gradient_estimator(estimate, (np.zeros((1, 1)), np.zeros(1),
                                                         np.zeros(1)), [[1.0]], target=target,
                                              n_draws=n, alpha=3 * alpha, rng=0)
    assert abs(result.critical - right) < 1e-12
    assert abs(student_t.sf(result.critical, n - 1) * 2 - alpha) < 1e-12
    assert result.largest_z >= t - 1e-9 and result.largest_z <= result.critical


def test_check_gibbs_step_names_the_worst_failing_entry():
    """The reported entry and z are the largest |z| over the failing entries, recomputed from
    the very draws the step returned (a doubled visible bias: many entries fail)."""
    buggy = NumpyRBM(MODEL.W, MODEL.b, MODEL.c, bug="doubled visible bias")
    kept = []

    def step(v, rng):
        kept.append(buggy.gibbs_step(v, rng))
        return kept[-1]
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_gibbs_step(step, MODEL, n_draws=500, rng=0)
    n = 500
    V = rbm.exact.all_states(4)
    counts = np.stack([np.bincount(row, minlength=16) for row in
                       MODEL.visible.index_of(kept[0]).reshape(16, n)])
    T = rbm.transition.gibbs_transition_matrix(MODEL)
    p_value = np.minimum(1, 2 * np.minimum(binom.cdf(counts, n, T), binom.sf(counts - 1, n, T)))
    z = np.abs(counts - n * T) / np.sqrt(n * T * (1 - T))
    failing = p_value <= 1e-3 / T.size
    assert failing.sum() >= 3
    i, j = np.unravel_index(np.argmax(np.where(failing, z, -1)), z.shape)
    assert abs(failure.value.z - z[i, j]) < 1e-9
    def state(x):
        return "(" + ", ".join(f"{u:g}" for u in x) + ")"
    assert failure.value.entry == f"T[{state(V[i])} -> {state(V[j])}]"


def test_check_sampler_names_the_worst_failing_entry():
    buggy = NumpyRBM(MODEL.W, MODEL.b, MODEL.c, bug="missing hidden bias")
    kept = []

    def sample(v, rng):
        kept.append(buggy.sample_h_given_v(v, rng))
        return kept[-1]
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_sampler(sample, MODEL, n_draws=500, rng=0)
    n, V = 500, rbm.exact.all_states(4)
    P = np.array([[np.prod(np.where(h == 1, p, 1 - p)) for h in V]
                  for p in MODEL.prob_h_given_v(V)])
    counts = np.stack([np.bincount(row, minlength=16) for row in
                       MODEL.hidden.index_of(kept[0]).reshape(16, n)])
    p_value = np.minimum(1, 2 * np.minimum(binom.cdf(counts, n, P), binom.sf(counts - 1, n, P)))
    z = np.abs(counts - n * P) / np.sqrt(n * P * (1 - P))
    failing = p_value <= 1e-3 / P.size
    assert failing.sum() >= 3
    assert abs(failure.value.z - z[failing].max()) < 1e-9


def test_binomial_power_at_one_half_is_not_the_least_over_p():
    """At 4828 draws (the default of a 4-unit Gibbs check) the power against 0.05 is 0.9903
    at p = 1/2 and 0.9896 at 0.475: sizing by the least power over p needs more draws."""
    at_half = testing.binomial_power(4828, 0.05, alpha=1e-3, n_tests=256)
    near = testing.binomial_power(4828, 0.05, alpha=1e-3, n_tests=256, p=0.475)
    assert at_half >= 0.99 > near
    grid = np.linspace(0.3, 0.7, 81)
    n = testing.binomial_draws_needed(0.05, alpha=1e-3, n_tests=256, p=grid)
    assert n > 4828
    assert testing.binomial_power(n, 0.05, alpha=1e-3, n_tests=256, p=grid) >= 0.99


def test_remembered_sizes_equal_fresh_ones_and_the_store_stays_bounded():
    from rbm.testing import power
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    first = power.binomial_draws_needed(0.05, alpha=1e-3, n_tests=4, p=probs)
    fresh = power.binomial_draws_needed.__wrapped__(0.05, alpha=1e-3, n_tests=4, p=probs)
    assert first == fresh == power.binomial_draws_needed(0.05, alpha=1e-3, n_tests=4,
                                                         p=probs.copy())
    # other probabilities are another key, not the remembered answer
    other = power.binomial_draws_needed(0.05, alpha=1e-3, n_tests=4, p=probs / 4)
    assert other != first
    assert other == power.binomial_draws_needed.__wrapped__(0.05, alpha=1e-3, n_tests=4,
                                                            p=probs / 4)
    for k in range(power._REMEMBERED + 5):
        power.binomial_draws_needed(0.2 + k * 1e-4, alpha=0.05)
    store = power.binomial_draws_needed.__closure__
    sizes = [len(c.cell_contents) for c in store if isinstance(c.cell_contents, dict)]
    assert sizes and max(sizes) <= power._REMEMBERED
