"""Level, power and draws of the checks' tests: binomial and t-test power, the draws a
stated power needs, the measured false-alarm rate of a check."""

import contextlib
import functools
import io
from itertools import combinations
from math import comb

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom, norm, t as student_t

from rbm._validation import check_positive_float, check_positive_int

from rbm.testing._shared import MIN_MEAN_DRAWS, valid_alpha, valid_callable, valid_power


# Sizing a check by exact binomial power costs tens of power computations; a suite that runs
# one check on many seeds (a level test, a CI matrix) sizes it once.  At most this many
# results are kept.
_REMEMBERED = 256


def _remembered(function):
    """`function`, remembering its results by its arguments (arrays by their values)."""
    results = {}

    def key(value):
        if isinstance(value, (np.ndarray, list, tuple)):
            array = np.asarray(value, dtype=float)
            return ("array", array.shape, array.tobytes())
        return value

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        k = (tuple(key(a) for a in args), tuple(sorted((n, key(v)) for n, v in kwargs.items())))
        if k not in results:
            value = function(*args, **kwargs)
            if len(results) >= _REMEMBERED:
                results.pop(next(iter(results)))
            results[k] = value
        return results[k]
    return wrapper


# -- power ------------------------------------------------------------------------------

def failure_rate(check, seeds):
    """How often a check fails over seeds: the number of seeds whose check raised AssertionError.

    Runs ``check(seed)`` for each seed with its output suppressed: over
    seeds of a correct implementation it measures the false-alarm rate,
    over seeds of a buggy one the power.

    Parameters
    ----------
    check : callable
        ``check(seed)``, which raises :class:`AssertionError` when it fails.
    seeds : iterable of int

    Returns
    -------
    tuple of int
        Failures and seeds.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import failure_rate, check_gibbs_step
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> failure_rate(lambda s: check_gibbs_step(impl.gibbs_step, (W, b, c), n_draws=200,
    ...                                         alpha=0.05, rng=s), range(20))
    (1, 20)
    """
    valid_callable(check, "check")
    failed = total = 0
    for seed in seeds:
        total += 1
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check(seed)
        except AssertionError:
            failed += 1
    return failed, total


def draws_needed(effect, sd, *, alpha, power=0.99, n_tests=1, sd_null=None, t_test=False):
    r"""Draws for a two-sided test to detect an error `effect` in one of `n_tests` entries.

    With Bonferroni's correction each test runs at level
    :math:`\alpha / n_\text{tests}`; a mean of :math:`n` draws of standard
    deviation :math:`\sigma` (:math:`\sigma_0` under the null hypothesis) is
    off by `effect` :math:`= \delta` and is detected with probability about
    `power` :math:`= 1 - \beta` when

    .. math:: n \ge \Big(\frac{z_{1-\alpha/(2 n_\text{tests})}\,\sigma_0
              + z_{1-\beta}\,\sigma}{\delta}\Big)^2 .

    For a frequency, :math:`\sigma = \sqrt{p(1 - p)} \le 1/2` (the normal
    approximation of the binomial test, which is good when :math:`np` and
    :math:`n(1-p)` are not small).  With `t_test` the quantiles are those of
    Student's t with :math:`n - 1` degrees of freedom, found by iteration
    (the t-tests of :func:`check_gradient_estimator` need it at small
    :math:`n`), and the result is at least ``MIN_MEAN_DRAWS``, the fewest
    draws those tests accept.

    Parameters
    ----------
    effect : float
        The error to detect, > 0.
    sd : float
        Standard deviation of one draw, > 0.
    alpha : float
        Family-wise significance, in (0, 1).
    power : float, default 0.99
        In [0.5, 1).
    n_tests : int, default 1
        Entries tested together.
    sd_null : float, optional
        Standard deviation of one draw under the null hypothesis; `sd` by default.
    t_test : bool, default False

    Returns
    -------
    int
        At least 2 (at least ``MIN_MEAN_DRAWS`` with `t_test`).

    Examples
    --------
    >>> from rbm.testing import draws_needed
    >>> draws_needed(0.05, 0.5, alpha=0.05)  # one frequency off by 0.05
    1838
    >>> draws_needed(0.05, 0.5, alpha=0.05, n_tests=100)  # one of 100 frequencies
    3373
    >>> draws_needed(1.0, 0.1, alpha=1e-3, n_tests=24), draws_needed(
    ...     1.0, 0.1, alpha=1e-3, n_tests=24, t_test=True)
    (2, 50)
    """
    effect = check_positive_float(effect, "effect")
    sd = check_positive_float(sd, "sd")
    sd_null = sd if sd_null is None else check_positive_float(sd_null, "sd_null")
    level = valid_alpha(alpha) / (2 * check_positive_int(n_tests, "n_tests"))
    power = valid_power(power)

    def needed(crit, quantile):
        root = (crit * sd_null + quantile * sd) / effect
        if not root < 1e7:  # more than 1e14 draws: no check runs them (and the square overflows)
            raise ValueError(f"effect = {effect:g} is too small against sd = {sd:g}: it needs "
                             f"more than 1e14 draws")
        return max(2, int(np.ceil(root ** 2)))

    n = needed(norm.isf(level), norm.ppf(power))
    if not t_test:
        return n

    def enough(k):  # the t quantiles fall with k, so the draws needed at k do too
        return needed(student_t.isf(level, k - 1), student_t.ppf(power, k - 1)) <= k

    low, high = n - 1, n  # the smallest k >= n with enough(k): double, then bisect
    while not enough(high):
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return max(MIN_MEAN_DRAWS, high)


def t_test_level(values, probs, n_draws, *, alpha, n_tests=1):
    r"""Exact false-alarm rate of one entry's t-test when the draws take a few values.

    The checks of means (:func:`check_gradient_estimator`,
    :func:`check_training_step`, a stochastic :func:`check_pseudo_likelihood`)
    run a two-sided t-test of each entry at level
    :math:`\alpha / n_\text{tests}`; Student's quantiles are exact only for
    normal draws.  For i.i.d. draws from a discrete law (`values` with
    `probs`) the t statistic depends only on how many draws take each value,
    so its rejection probability under the correct mean is a sum over the
    multinomial counts, computed here exactly.

    Parameters
    ----------
    values : array_like of shape (K,)
        The values one draw takes.
    probs : array_like of shape (K,)
        Their probabilities (summing to 1).
    n_draws : int
        At least 2.
    alpha : float
        Family-wise significance, in (0, 1).
    n_tests : int, default 1
        Entries of the family (the per-entry level is ``alpha / n_tests``).

    Returns
    -------
    float
        The probability that the entry fails when the code is correct.

    Raises
    ------
    ValueError
        If the counts are too many to enumerate (more than 5 000 000).

    Examples
    --------
    >>> from rbm.testing import t_test_level
    >>> level = t_test_level([0.0, 1.0], [0.9, 0.1], 20, alpha=0.05)
    >>> bool(level > 0.05)  # 20 draws of a rare bit: the t-test fails too often
    True
    """
    values = np.asarray(values, dtype=float)
    probs = np.asarray(probs, dtype=float)
    if values.ndim != 1 or probs.shape != values.shape:
        raise ValueError(f"values and probs must be 1-d of one length, got shapes "
                         f"{values.shape} and {probs.shape}")
    if (probs < 0).any() or abs(probs.sum() - 1) > 1e-9:
        raise ValueError("probs must be non-negative and sum to 1")
    n = check_positive_int(n_draws, "n_draws", minimum=2)
    level = valid_alpha(alpha) / (2 * check_positive_int(n_tests, "n_tests"))
    K = len(values)
    total = comb(n + K - 1, K - 1)
    if total > 5_000_000:
        raise ValueError(f"n_draws = {n} with {K} values gives {total} counts to enumerate, "
                         f"more than 5 000 000")
    bars = np.array(list(combinations(range(n + K - 1), K - 1)), dtype=np.int64).reshape(-1,
                                                                                        K - 1)
    edges = np.hstack([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), n + K - 1)])
    counts = np.diff(edges, axis=1) - 1
    with np.errstate(divide="ignore"):
        log_p = gammaln(n + 1) - gammaln(counts + 1).sum(axis=1) + counts @ np.log(probs)
    mu = probs @ values
    mean = counts @ values / n
    var = np.maximum(counts @ (values - mu) ** 2 - n * (mean - mu) ** 2, 0.0) / (n - 1)
    gap = mean - mu
    exact_equal = np.abs(gap) <= 1e-9 * (1 + abs(mu))
    se = np.sqrt(var / n)
    t = np.divide(gap, se, out=np.where(exact_equal, 0.0, np.inf), where=se > 0)
    crit = student_t.isf(level, n - 1)
    return float(np.exp(log_p[np.abs(t) > crit]).sum())


def _binomial_p_values(x, n, p):
    return np.minimum(1.0, 2 * np.minimum(binom.cdf(x, n, p), binom.sf(x - 1, n, p)))


def _binomial_region(n, p, level):
    """The counts the exact two-sided test rejects: (largest low count, smallest high count).

    Evaluated near the quantiles ``level / 2`` and ``1 - level / 2`` and confirmed at the
    boundary counts; every count is evaluated only if that confirmation fails.
    """
    def edges(x):
        rejected = _binomial_p_values(x, n, p) <= level
        low, high = x[rejected & (x < n * p)], x[rejected & (x > n * p)]
        return (int(low.max()) if len(low) else -1), (int(high.min()) if len(high) else n + 1)

    guesses = [binom.ppf(level / 2, n, p), binom.isf(level / 2, n, p)]
    window = np.unique(np.clip(np.concatenate([np.arange(g - 3, g + 4) for g in guesses
                                               if np.isfinite(g)] + [[0, n]]), 0, n))
    low, high = edges(window.astype(np.int64))
    inside = np.array([x for x in (low + 1, high - 1) if 0 <= x <= n and x != n * p])
    confirmed = (len(inside) == 0 or (_binomial_p_values(inside, n, p) > level).all()) and (
        low < 0 or _binomial_p_values(low, n, p) <= level)
    return (low, high) if confirmed else edges(np.arange(n + 1))


def _probabilities(p):
    """`p` as a 1-d array of probabilities in (0, 1) (ValueError naming `p`)."""
    arr = np.atleast_1d(np.asarray(p, dtype=float))
    if arr.ndim != 1 or not len(arr) or not ((arr > 0) & (arr < 1)).all():
        raise ValueError(f"p must be a probability or probabilities in (0, 1), got {p!r}")
    return arr


def binomial_power(n_draws, effect, *, alpha, n_tests=1, p=0.5):
    r"""Exact power of the checks' binomial test of a probability `p` against `p` ± `effect`.

    The frequency of a state in `n_draws` draws is tested against `p` by the
    exact two-sided binomial test (doubled tail) at level
    :math:`\alpha / n_\text{tests}`, as in :func:`check_sampler` and
    :func:`check_gibbs_step`; the power is the probability that the test
    rejects when the true probability is :math:`p + \delta` or
    :math:`p - \delta`, the smaller of the two (a direction outside [0, 1] is
    left out).  With several `p`, the least power over them.  A frequency
    has its largest spread at :math:`p = 1/2`, but the test is discrete, so
    :math:`p = 1/2` is not exactly the worst case: at 4828 draws (the
    default of a 4-unit check) the power against 0.05 is 0.9903 at 1/2 and
    0.9896 at 0.475.

    Parameters
    ----------
    n_draws : int
    effect : float
        The error :math:`\delta`, in (0, 1).
    alpha : float
        Family-wise significance, in (0, 1).
    n_tests : int, default 1
    p : float or array_like, default 0.5
        The exact probability or probabilities, in (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> from rbm.testing import binomial_power
    >>> round(binomial_power(4821, 0.05, alpha=1e-3, n_tests=256), 4)
    0.9897
    >>> round(binomial_power(4828, 0.05, alpha=1e-3, n_tests=256), 4)
    0.9903
    >>> round(binomial_power(4828, 0.05, alpha=1e-3, n_tests=256, p=[0.475, 0.5]), 4)
    0.9896
    >>> binomial_power(4, 0.45, alpha=1e-3, n_tests=16)  # no count of 4 draws can fail
    0.0
    """
    n_draws = check_positive_int(n_draws, "n_draws")
    effect = check_positive_float(effect, "effect")
    if not effect < 1:
        raise ValueError(f"effect must lie in (0, 1), got {effect}")
    level = valid_alpha(alpha) / check_positive_int(n_tests, "n_tests")
    powers = []
    for q0 in np.unique(_probabilities(p)):
        low, high = _binomial_region(n_draws, q0, level)
        powers += [binom.cdf(low, n_draws, q) + binom.sf(high - 1, n_draws, q)
                   for q in (q0 - effect, q0 + effect) if 0 <= q <= 1]
    if not powers:
        raise ValueError(f"p - effect and p + effect both lie outside [0, 1] (p = {p}, "
                         f"effect = {effect})")
    return float(min(powers))


@_remembered
def binomial_draws_needed(effect, *, alpha, power=0.99, n_tests=1, p=0.5):
    r"""The fewest draws whose exact binomial test catches `p` ± `effect` with probability `power`.

    :func:`draws_needed` with :math:`\sigma = \sqrt{p(1-p)}` is the normal
    approximation; this function searches from it for the smallest ``n``
    (by bisection; the power of a discrete test is not quite monotone in
    ``n``) with :func:`binomial_power` at least `power`, so that the power
    a check states holds exactly, at `p` (with several, at the least
    power over them).

    Parameters
    ----------
    effect : float
        In (0, 1).
    alpha : float
    power : float, default 0.99
    n_tests : int, default 1
    p : float or array_like, default 0.5

    Returns
    -------
    int

    Examples
    --------
    >>> from rbm.testing import binomial_power, binomial_draws_needed
    >>> n = binomial_draws_needed(0.05, alpha=1e-3, n_tests=256)
    >>> n > 4821 and binomial_power(n, 0.05, alpha=1e-3, n_tests=256) >= 0.99
    True
    """
    power = valid_power(power)
    probs = _probabilities(p)

    def enough(n):
        return binomial_power(n, effect, alpha=alpha, n_tests=n_tests, p=probs) >= power

    guess = draws_needed(effect, float(np.sqrt(probs * (1 - probs)).max()), alpha=alpha,
                         power=power, n_tests=n_tests)
    low, high = max(1, guess // 2), guess
    while not enough(high):
        low, high = high, 2 * high
    while enough(low) and low > 1:
        low, high = max(1, low // 2), low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return int(high)


@_remembered
def _binomial_detectable(n_draws, power, alpha, n_tests, name, p=0.5):
    """The smallest error in a probability `p` (1/2; or the least over several) that the
    check catches with `power`, exactly.

    Refuses (ValueError) draws too few for a count of such a probability ever to fail.
    """
    def caught(d):
        return binomial_power(n_draws, d, alpha=alpha, n_tests=n_tests, p=p) >= power

    if not caught(0.5):
        where = "a probability of 1/2" if np.ndim(p) == 0 else "the exact probabilities"
        least = binomial_draws_needed(0.25, alpha=alpha, power=power, n_tests=n_tests, p=p)
        raise ValueError(
            f"n_draws = {n_draws} is too few for {name}: no count of {where} in "
            f"{n_draws} draws can fail the exact binomial test at level alpha / {n_tests}; use "
            f"at least {least} draws (to catch an error of 0.25 with power {power:g})")
    low, high = 0.0, 0.5
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (low, mid) if caught(mid) else (mid, high)
    return high


def sized_draws(n_draws, what, effect, alpha, power, n_tests, name, p=0.5):
    """`n_draws` (argument `what`; by default sized exactly for `effect` at `p`) and the
    smallest error caught with `power`; draws too few for any count to fail are refused."""
    if n_draws is None:
        n_draws = binomial_draws_needed(_frequency_effect(effect), alpha=alpha, power=power,
                                        n_tests=n_tests, p=p)
    n_draws = check_positive_int(n_draws, what)
    return n_draws, _binomial_detectable(n_draws, power, alpha, n_tests, name, p=p)


def _frequency_effect(effect):
    effect = check_positive_float(effect, "effect")
    if not effect < 0.5:
        raise ValueError(f"effect must lie in (0, 0.5): the draws are sized for a probability "
                         f"of 1/2, got {effect}")
    return effect
