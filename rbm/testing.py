r"""Exact oracles for any RBM implementation: checks with a stated significance and power.

Each check takes *callables* from the implementation under test (NumPy
arrays in, NumPy arrays out) and the parameters they were built with, and
compares what they return with the exact values this package computes by
enumeration: the conditionals, the Gibbs transition matrix, the free
energy, :math:`\log Z`, the likelihood, the pseudo-likelihood, the exact
gradient and the exact expectation of the CD-k and persistent-CD
estimates.  A PyTorch or JAX implementation is wrapped in one line, e.g.
``lambda v: my_rbm.p_h(torch.from_numpy(v)).numpy()``.

**Parameters.**  ``model`` is an :class:`~rbm.model.RBM` or a tuple ``(W, b, c)``
(the binary model).  The convention is the book's,
:math:`E(v, h) = -b^\top v - c^\top h - v^\top W h` with ``W`` of shape
``(n_visible, n_hidden)``; scikit-learn's ``components_`` is ``W.T``.  A
model of ±1 spins is ``RBM(W, Spin(b), Spin(c))`` (:mod:`rbm.layers`): its
states are ±1, its conditional means are :math:`\tanh` of the inputs, and
every check below works on it unchanged (:func:`check_training_step` passes
the step the spin layers' biases as ``b`` and ``c``).  Other layers (Potts, Gaussian,
ReLU) are refused with a ValueError naming the layer: their statistics are
not the units themselves.  The exact functions enumerate states, so models
are small: the checks refuse more than ``MAX_BITS`` units in a layer.

**Conventions.**  The free energy is :math:`F(v) = -\log\sum_h e^{-E(v,h)}`
with no additive constant, so :math:`\log Z = \log\sum_v e^{-F(v)}`
exactly; an implementation whose energy carries a constant passes
:func:`check_free_energy` with ``up_to_constant=True``, and its
:math:`\log Z` is off by minus that constant.  The log-likelihood is per
row, :math:`\log p(v) = -F(v) - \log Z` (a callable that returns one
number is compared with the mean over the rows).  The pseudo-log-likelihood
of a row is :math:`\sum_i \log p(v_i \mid v_{-i})`, the sum over units
(``convention="sum"``), or its mean over units (``"mean"``).

**Statistics.**  Frequencies of sampled states are compared with their
exact probabilities by exact two-sided binomial tests; means of draws (of
a gradient estimate, of a stochastic score) by two-sided t-tests on the
draws.  Every check runs one test per entry and holds its family-wise
false-alarm rate at ``alpha`` by Bonferroni's correction: exactly for the
binomial tests; for the t-tests only approximately (Student's quantiles
are exact for normal draws; on discrete draws their level can be above
``alpha``: :func:`t_test_level` computes it).  The t-tests therefore refuse
fewer than ``MIN_MEAN_DRAWS`` draws, and refuse an entry whose draws are
all equal but differ from its exact value (its standard error is 0, so
no t statistic exists); draws identical at every call fail, naming a
random generator that does not advance.  Its power is reported as the
smallest error in any single entry that it detects with probability
``power`` (0.99 by default): exactly for the binomial tests
(:func:`binomial_power`) at a probability of 1/2 (not quite the worst
case of a discrete test: :func:`binomial_power` takes the probabilities
to minimise over), by the normal approximation for the t-tests;
:func:`binomial_draws_needed` and :func:`draws_needed` give the number of
draws for a stated power against a stated error.

**Results.**  A check that holds prints a one-line verdict
(:func:`rbm.checks.verdict`) and returns a :class:`CheckResult`.  A check
that fails raises :class:`CheckFailed`, an :class:`AssertionError` whose
message names the worst entries, their difference from the exact value
(and for draws, in standard errors), and a cause only where the values
were tested against it: a known mistake (the gradient's sign, CD-(k-1) in
place of CD-k, a transposed ``W``, a missing bias...), float32 rounding
(only when the values are float32 numbers, the same computation in
float64, passed as ``float64=``, holds the tolerance, *and* the float32
values are within 8 float32 spacings of it; a float64 counterpart that
fails while the float32 values are near exact is named instead, a shared
defect only when both agree and fail; without it rounding is called
untested),
an additive constant (only when every state's difference agrees within
the tolerance), an overflow (only at inputs past the overflow threshold),
a generator that does not advance (only when fresh generators give other
values).  An exception raised inside the code under test is reported as
such.  It runs inside pytest as it is.

**Beyond one call.**  :func:`check_stationary_law` tests the long-run
law of a sampler that carries state (persistent chains, the replicas of
parallel tempering) against the exact :math:`p(v)`;
:func:`check_log_partition_estimator` tests a stochastic estimate of
:math:`\log Z` (AIS and its kin) through :math:`\mathbb E[\hat Z]/Z = 1`;
:func:`check_persistent_estimator` drives a stateful estimator object
across calls, short batches included; :func:`centred_gradient` gives the
target of a centred estimator (Melchior et al. 2016).
"""

import contextlib
import dataclasses
import io
import warnings
from itertools import combinations
from math import comb

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom, norm, t as student_t

from rbm import exact, pseudolikelihood, transition
from rbm._kernels import row_statistics
from rbm._validation import check_positive_float, check_positive_int, check_rng
from rbm.checks import verdict
from rbm.model import RBM, Gradient

__all__ = ["MAX_BITS", "MIN_MEAN_DRAWS", "SIZING_Z", "CheckResult", "CheckFailed", "as_model",
           "failure_rate", "draws_needed", "binomial_power", "binomial_draws_needed",
           "t_test_level", "check_conditionals", "check_sampler", "check_gibbs_step",
           "check_stationary_law", "check_free_energy", "check_log_partition",
           "check_log_partition_estimator", "check_log_likelihood", "check_pseudo_likelihood",
           "expected_pcd_gradient", "centred_gradient", "check_gradient_estimator",
           "check_training_step", "check_persistent_estimator"]

# The checks enumerate a layer's states and hold one count per pair of visible states.
MAX_BITS = 10

# The fewest draws a t-test of means accepts.  At 4 draws correct code failed the CD-1 check
# on 33 of 200 seeds at alpha = 1e-3 (draws all equal give a standard error of 0); at 30 the
# centred CD-1 check failed on 3 of 400 (0.4 expected); at 50 the false alarms of every t-test
# of the package's test bed lie within the binomial range of alpha (tests/test_testing_levels.py,
# test_t_tests_hold_their_level_at_the_fewest_draws_they_accept).
MIN_MEAN_DRAWS = 50
#: :meth:`CheckFailed.draws_needed` sizes from the one-sided lower bound ``|difference| - z SE``.
SIZING_Z = 1.96


# Docstring parts every check shares, written once: a line ``    <key>`` of a docstring
# decorated with _documented stands for the text.
_DOCS = {
    "name, label, returns, raises": (
        "    name : str\n        What the verdict and the failure call the check.\n"
        "    label : str, optional\n        For :func:`rbm.checks.verdict`.\n\n"
        "    Returns\n    -------\n    CheckResult\n\n    Raises\n    ------\n"
        "    AssertionError"),
    "name and label": "    name : str\n        What the verdict and the failure call the check.\n"
                      "    label : str, optional\n        For :func:`rbm.checks.verdict`.",
    "returns a CheckResult": "    Returns\n    -------\n    CheckResult",
    "float64": (
        "    float64 : callable, optional\n"
        "        The same computation in float64, with the same signature (e.g. the\n"
        "        library's model built in float64).  Called only when a failure's values\n"
        "        are float32 numbers within a few dozen float32 spacings of the exact\n"
        "        values: float32 rounding is then named only if these values pass the\n"
        "        same tolerance and the float32 values are within 8 float32 spacings\n"
        "        of them (correct float32 code measured within 3.7); if the float32\n"
        "        values are near exact and these fail, the counterpart is named; a\n"
        "        shared defect only when both agree and fail.  Without it, rounding\n"
        "        is called untested."),
}


def _documented(f):
    """`f` with the shared parts of its docstring filled in (see _DOCS)."""
    for key, text in _DOCS.items():
        f.__doc__ = f.__doc__.replace(f"    <{key}>", text)
    return f


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """What a check that held measured.

    Attributes
    ----------
    name : str
        What was checked.
    largest_z : float
        The largest error over the entries, in standard errors (0 for
        deterministic checks).
    critical : float
        The critical value of each test (Bonferroni); ``nan`` for
        deterministic checks.
    n_tests : int
        The number of entries tested.
    n_draws : int
        Draws per entry (0 for deterministic checks).
    detectable : float
        The smallest error in one entry that the check detects with the
        stated power (the largest over entries); for deterministic checks the
        tolerance.
    """

    name: str
    largest_z: float
    critical: float
    n_tests: int
    n_draws: int
    detectable: float


class CheckFailed(AssertionError):
    """A check that failed: its message, and what it measured at the worst entry.

    An :class:`AssertionError` (pytest reports it as a failed assertion) with
    attributes for programs that act on the failure.

    Attributes
    ----------
    entry : str
        The worst entry (``"W[3, 1]"``, ``"T[(0, 1) -> (1, 1)]"``, ``"row 2"``).
    found, expected : float
        Its value in your implementation (the mean of the draws, or the
        frequency) and its exact value.
    z : float
        The error in standard errors (``inf`` for deterministic checks).
    sd : float
        The standard deviation of one draw of that entry (``nan`` for
        deterministic checks); with :func:`draws_needed` it gives the draws
        that detect this error with a stated power.
    n_draws, n_tests : int
        Draws per entry (0 for deterministic checks) and entries tested.
    slip : str or None
        The known mistake the values match, if any.
    """

    def __init__(self, message, *, entry, found, expected, z=np.inf, sd=np.nan, n_draws=0,
                 n_tests=1, slip=None, errors=None):
        super().__init__(message)
        self.entry, self.found, self.expected, self.z = entry, float(found), float(expected), z
        self.sd, self.n_draws, self.n_tests, self.slip = sd, n_draws, n_tests, slip
        self._errors = errors  # (effects, sds, sds under the null, alpha, t_test), per entry

    def draws_needed(self, power=0.99):
        r"""Draws estimated to catch this error with probability `power`, at the check's alpha.

        One failed run overstates its error (it failed *because* its largest
        error came out large: the winner's curse), so each entry's error is
        taken at its one-sided lower confidence bound,
        :math:`|\text{difference}| - z\,\text{SE}` with :math:`z` =
        ``SIZING_Z`` = 1.96 (97.5%), and the draws are the least over the
        entries whose bound is positive of :func:`draws_needed` for that
        error and the entry's spread (the normal approximation, with
        Student's quantiles for the t-tests).  Sized from the error itself,
        marginal bugs were caught in 36, 12 and 3 of 40 runs at a stated
        power of 0.99; sized from its bound, the tests measure the power on
        a marginal planted bug.  Never fewer than the check accepts
        (``MIN_MEAN_DRAWS`` for the t-tests); 1 for a deterministic check
        (one call).

        Parameters
        ----------
        power : float, default 0.99

        Returns
        -------
        int
        """
        if self._errors is None:
            return 1
        effects, sds, sds_null, alpha, t_test = self._errors
        floor = MIN_MEAN_DRAWS if t_test else 2
        bounds = effects - SIZING_Z * sds / np.sqrt(max(self.n_draws, 1))
        usable = (bounds > 0) & (sds > 0) & (sds_null > 0)
        if not usable.any():
            return floor
        return max(floor, min(draws_needed(e, s, alpha=alpha, power=power, n_tests=self.n_tests,
                                           sd_null=s0, t_test=t_test)
                              for e, s, s0 in zip(bounds[usable], sds[usable], sds_null[usable])))


# -- arguments --------------------------------------------------------------------------

def as_model(model):
    """The :class:`~rbm.model.RBM` of `model`: an RBM of {0,1} or ±1 layers, or ``(W, b, c)``.

    Parameters
    ----------
    model : RBM or tuple of array_like
        ``(W, b, c)`` with ``W`` of shape (n_visible, n_hidden).

    Returns
    -------
    RBM
        A copy: the checks never change the caller's arrays.

    Raises
    ------
    TypeError
        If `model` is neither.
    ValueError
        If a layer is not {0,1} or ±1, or has more than ``MAX_BITS`` units.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import as_model
    >>> as_model((np.zeros((3, 2)), np.zeros(3), np.zeros(2)))
    RBM(n_visible=3, n_hidden=2)
    """
    if isinstance(model, RBM):
        model = model.copy()
    elif isinstance(model, (tuple, list)) and len(model) == 3:
        model = RBM(*model)
    else:
        raise TypeError(f"model must be an rbm.RBM or a tuple (W, b, c), got "
                        f"{type(model).__name__}")
    for side in ("visible", "hidden"):
        layer = getattr(model, side)
        if layer.bits is None:
            raise ValueError(f"the checks need {{0,1}} or ±1 units; model.{side} is {layer!r}")
        if layer.n_units > MAX_BITS:
            raise ValueError(f"the checks enumerate states: model.{side} has {layer.n_units} "
                             f"units, more than MAX_BITS = {MAX_BITS}")
    return model


def _alpha(alpha):
    alpha = check_positive_float(alpha, "alpha")
    if not alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return alpha


def _power(power):
    power = check_positive_float(power, "power")
    if not 0.5 <= power < 1:
        raise ValueError(f"power must lie in [0.5, 1), got {power}")
    return power


def _common(model, f, f_name, alpha, power, rng):
    """The arguments every stochastic check takes, checked: the model, `f` callable, alpha,
    power and the generator."""
    _callable(f, f_name)
    return as_model(model), _alpha(alpha), _power(power), check_rng(rng)


def _callable(f, name):
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")
    return f


def _data(model, data):
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    return data


@contextlib.contextmanager
def _recorded(found):
    """Run the implementation under test, keeping its warnings for the message (not raising)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    found.extend(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))


# Words of numpy's (and most libraries') errors about shapes: only then is a shape named.
_SHAPE_WORDS = ("shape", "broadcast", "dimension", "aligned", "mismatch")


def _guarded(f, what, *args):
    """``f(*args)``; an exception in the code under test becomes a failed check naming it."""
    try:
        return f(*args)
    except CheckFailed:
        raise
    except Exception as exc:
        shapes = ", ".join(str(np.shape(a)) for a in args if isinstance(a, np.ndarray))
        about_shapes = any(word in str(exc).lower() for word in _SHAPE_WORDS)
        raise CheckFailed(
            f"{what} raised {type(exc).__name__}: {exc}"
            + (f" (on input of shape {shapes})" if shapes else "")
            + ". This is an exception inside your code (its traceback is chained above), not "
              "a comparison that failed."
            + (" The error is about shapes: does the model passed to the check have the "
               "shapes your code was built with?" if about_shapes else ""),
            entry=what, found=np.nan, expected=np.nan,
            slip=f"an exception in your code ({type(exc).__name__})") from exc


def _call(f, found, *args, what="your function"):
    with _recorded(found):
        out = _guarded(f, what, *args)
    return out


def _array(x, what, shape=None):
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise AssertionError(f"{what} did not return numbers: {exc}") from None
    if shape is not None and arr.shape != tuple(shape):
        raise AssertionError(f"{what} returned shape {arr.shape}, expected {tuple(shape)}")
    return arr


def _state(x):
    values = ", ".join(f"{v:g}" for v in np.ravel(x))
    return f"({values})"


def _warned(found):
    return f" It warned: {'; '.join(found)}." if found else ""


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
    _callable(check, "check")
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
    level = _alpha(alpha) / (2 * check_positive_int(n_tests, "n_tests"))
    power = _power(power)

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
    level = _alpha(alpha) / (2 * check_positive_int(n_tests, "n_tests"))
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
    level = _alpha(alpha) / check_positive_int(n_tests, "n_tests")
    powers = []
    for q0 in np.unique(_probabilities(p)):
        low, high = _binomial_region(n_draws, q0, level)
        powers += [binom.cdf(low, n_draws, q) + binom.sf(high - 1, n_draws, q)
                   for q in (q0 - effect, q0 + effect) if 0 <= q <= 1]
    if not powers:
        raise ValueError(f"p - effect and p + effect both lie outside [0, 1] (p = {p}, "
                         f"effect = {effect})")
    return float(min(powers))


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
    power = _power(power)
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


def _sized(n_draws, what, effect, alpha, power, n_tests, name, p=0.5):
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


# -- deterministic checks ------------------------------------------------------------

def _compare(found, exact_values, tol, rtol):
    """Entries beyond ``tol + rtol * |exact|``, worst first; non-finite values always fail."""
    gap = np.abs(found - exact_values)
    gap = np.where(np.isfinite(found), gap, np.inf)
    excess = gap - (tol + rtol * np.abs(exact_values))
    order = np.argsort(-excess, axis=None)
    return [np.unravel_index(i, found.shape) for i in order if excess.flat[i] > 0], gap


def _matches(found, candidates, tol, rtol):
    """The names of the candidate values that `found` equals within the tolerance."""
    return [name for name, value in candidates
            if value.shape == found.shape and not _compare(found, value, tol, rtol)[0]]


def _bits_hypotheses(model):
    """Models with one known slip each: (name, cause, model)."""
    kind_v, kind_h = type(model.visible), type(model.hidden)
    W, b, c = model.W, model.b, model.c
    out = [("W negated", "the energy's coupling sign is reversed (+v'Wh)",
            RBM(-W, kind_v(b), kind_h(c))),
           ("no visible bias", "the visible bias b is left out", RBM(W, kind_v(0 * b),
                                                                      kind_h(c))),
           ("no hidden bias", "the hidden bias c is left out", RBM(W, kind_v(b), kind_h(0 * c))),
           ("doubled visible bias", "the visible bias b is added twice",
            RBM(W, kind_v(2 * b), kind_h(c))),
           ("doubled hidden bias", "the hidden bias c is added twice",
            RBM(W, kind_v(b), kind_h(2 * c)))]
    if W.shape[0] == W.shape[1]:
        out += [("W transposed", "W is used transposed (W of shape (n_hidden, n_visible), as "
                 "scikit-learn's components_, read as (n_visible, n_hidden))",
                 RBM(W.T, kind_v(b), kind_h(c))),
                ("biases swapped", "b and c are swapped", RBM(W, kind_v(c), kind_h(b)))]
    return out


def _pass(name, result, label, text):
    verdict(f"{name}: {text}", label)
    return result


@_documented
def check_conditionals(model, *, prob_h_given_v=None, prob_v_given_h=None, tol=1e-10,
                       rtol=1e-10, float64=None, name="conditionals", label=None):
    r"""The conditional means :math:`\mathbb E[h \mid v]` and :math:`\mathbb E[v \mid h]` against exact values.

    For {0,1} units they are :math:`p(h_j{=}1 \mid v) = \sigma(c_j + (v^\top W)_j)`
    and :math:`p(v_i{=}1 \mid h) = \sigma(b_i + (W h)_i)`; for ±1 units
    :math:`\tanh` of the same inputs.  Every state of the given layer is
    passed at once, as the rows of one array.

    Parameters
    ----------
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    prob_h_given_v : callable, optional
        The code's :math:`\mathbb E[h \mid v]`: ``f(v) -> (n, n_hidden)``, called
        on the ``(n, n_visible)`` array of every visible state.
    prob_v_given_h : callable, optional
        The code's :math:`\mathbb E[v \mid h]`: ``f(h) -> (n, n_visible)``, called
        on the ``(n, n_hidden)`` array of every hidden state.  At least one of
        the two must be given.
    tol, rtol : float, default 1e-10
        An entry passes if it is within ``tol + rtol * |exact|`` (float32
        code needs about 1e-6).
    float64 : dict, optional
        ``{"prob_h_given_v": f, "prob_v_given_h": g}`` (either key or both):
        the same conditionals computed in float64.  Called only when a
        failure's values are float32 numbers within a few dozen float32
        spacings of the exact values: float32 rounding is then named only if
        these values pass the same tolerance and the float32 values are within
        8 float32 spacings of them; see :func:`check_free_energy`.  Without
        it, rounding is called untested.
    <name, label, returns, raises>
        Naming the worst entry, its exact value and the slip its values match, if any.
    TypeError, ValueError
        For bad arguments.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_conditionals
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> _ = check_conditionals((W, b, c), prob_h_given_v=impl.prob_h_given_v,
    ...                        prob_v_given_h=impl.prob_v_given_h)
    verdict: conditionals: every entry within 1e-10 + 1e-10 |exact| (4 + 4 states)
    >>> buggy = NumpyRBM(W, b, c, bug="transposed W")
    >>> check_conditionals((W, b, c), prob_v_given_h=buggy.prob_v_given_h)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: conditionals: E[v | h] at h = ...
    ... Your values match the model with W transposed...
    """
    model = as_model(model)
    tol = check_positive_float(tol, "tol", allow_zero=True)
    rtol = check_positive_float(rtol, "rtol", allow_zero=True)
    if prob_h_given_v is None and prob_v_given_h is None:
        raise ValueError("give prob_h_given_v, prob_v_given_h or both")
    float64 = {} if float64 is None else float64
    if not isinstance(float64, dict) or not set(float64) <= {"prob_h_given_v", "prob_v_given_h"}:
        raise ValueError("float64 must be a dict with the keys 'prob_h_given_v' and/or "
                         f"'prob_v_given_h', got {float64!r}")
    for key, f in float64.items():
        _callable(f, f"float64[{key!r}]")
    counts = []
    for f, given, out in ((prob_h_given_v, "visible", "hidden"),
                          (prob_v_given_h, "hidden", "visible")):
        if f is None:
            continue
        f_name = "prob_h_given_v" if given == "visible" else "prob_v_given_h"
        _callable(f, f_name)
        X = _all_states(getattr(model, given))
        what = "E[h | v]" if given == "visible" else "E[v | h]"
        mean = model.mean_h_given_v if given == "visible" else model.mean_v_given_h
        found_warnings = []
        values = _array(_call(f, found_warnings, X.copy(), what=f"your {f_name}"), f"your {what}",
                        (len(X), getattr(model, out).n_units))
        bad, _ = _compare(values, mean(X), tol, rtol)
        if bad:
            row, unit = bad[0]
            slips = [(hyp, cause) for hyp, cause, alt in _bits_hypotheses(model)
                     if _matches(values, [(hyp, (alt.mean_h_given_v if given == "visible"
                                                 else alt.mean_v_given_h)(X))], tol, rtol)]
            cause = (f" Your values match the model with {slips[0][0]}: a common cause is that "
                     f"{slips[0][1]}." if slips else
                     _rounding_cause(values, mean(X), tol, rtol, _float64_rerun(
                         float64.get(f_name), found_warnings, what, values.shape, X)) or
                     " Common causes: W transposed, a bias left out or added twice, the sign "
                     "of the coupling.")
            symbol = "v" if given == "visible" else "h"
            entry = f"{what} at {symbol} = {_state(X[row])}, unit {unit}"
            _fail(name, f"{entry} " + _gap(values[row, unit], mean(X)[row, unit], 6)
                  + f"; {len(bad)} of {values.size} entries beyond {tol:g} + {rtol:g} "
                  f"|exact|).", cause, found_warnings, entry=entry, found=values[row, unit],
                  expected=mean(X)[row, unit], n_tests=values.size,
                  slip=f"the model with {slips[0][0]}" if slips else None)
        counts.append(str(len(X)))
    return _pass(name, CheckResult(name, 0.0, np.nan, 0, 0, tol), label,
                 f"every entry within {tol:g} + {rtol:g} |exact| ({' + '.join(counts)} states)")


def _all_states(layer):
    return layer.states(0, layer.n_states ** layer.n_units)


# -- sampling checks ----------------------------------------------------------------

def _binomial_tests(counts, n, p, alpha):
    """Exact two-sided binomial tests (doubled tail) of `counts` of `n` against `p`, Bonferroni.

    Returns the z-scores, the p-values, the Bonferroni level and the indices that fail.
    """
    lower = binom.cdf(counts, n, p)
    upper = binom.sf(counts - 1, n, p)
    p_value = np.minimum(1.0, 2 * np.minimum(lower, upper))
    level = alpha / counts.size
    sd = np.sqrt(n * p * (1 - p))
    gap = counts - n * p
    z = np.divide(gap, sd, out=np.where(np.abs(gap) > 1e-9, np.inf, 0.0), where=sd > 0)
    return z, p_value, level, np.argwhere(p_value <= level)


def _joint_probabilities(model, X, given):
    r""":math:`p(y \mid x)` of every state of the other layer, one row per row of `X`."""
    target = model.hidden if given == "visible" else model.visible
    I = model.input_hidden(X) if given == "visible" else model.input_visible(X)
    Y = _all_states(target)
    log_p = I @ target.statistic(Y).T - target.energy(Y)[None, :] \
        - target.log_normaliser(I)[:, None]
    return np.exp(log_p), Y


def _shared_uniform(mean, layer):
    """The law of a sampler that compares every unit with one shared uniform number."""
    low, high = layer.values
    p_high = (mean - low) / (high - low)
    Y = _all_states(layer)
    out = np.zeros((len(mean), len(Y)))
    for row, p in enumerate(p_high):
        edges = np.concatenate([[0.0], np.sort(p), [1.0]])
        for u_low, u_high in zip(edges[:-1], edges[1:]):
            state = np.where(p > u_low, high, low)  # the units on for u in (u_low, u_high)
            out[row, layer.index_of(state[None, :])[0]] += u_high - u_low
    return out


def _frequency_errors(freq, p, alpha):
    """Per-entry errors and spreads (under the bug, under the null) of failed frequencies."""
    return (np.abs(freq - p).ravel(), np.sqrt(freq * (1 - freq)).ravel(),
            np.sqrt(p * (1 - p)).ravel(), alpha, False)


def _sampler_diagnosis(model, X, given, counts, n, alpha):
    """The first known slip whose law the counts pass, as a sentence."""
    out_layer = model.hidden if given == "visible" else model.visible
    candidates = []
    for hyp, cause, alt in _bits_hypotheses(model):
        candidates.append((f"the model with {hyp}", cause, _joint_probabilities(alt, X, given)[0]))
    mean = model.mean_h_given_v(X) if given == "visible" else model.mean_v_given_h(X)
    candidates.append(("one uniform number per row", "every unit of a row is compared with "
                       "the same uniform number, so the units are not drawn independently",
                       _shared_uniform(mean, out_layer)))
    for what, cause, P in candidates:
        if not len(_binomial_tests(counts, n, P, alpha)[3]):
            return f" Your draws match {what}: a common cause is that {cause}.", what
    return (" Common causes: a bias left out or doubled, W transposed, one random number "
            "shared by several units, a draw from the wrong layer's state."), None


@_documented
def check_sampler(sample, model, *, given="visible", n_draws=None, effect=0.05, power=0.99,
                  alpha=1e-3, rng, name="sampler", label=None):
    r"""A sampler's draws against the exact conditional :math:`p(h \mid v)` (or :math:`p(v \mid h)`).

    Every state ``x`` of the given layer is repeated `n_draws` times and
    passed at once; for each ``x`` the frequency of every state of the
    other layer is compared with its exact probability (exact binomial
    tests, Bonferroni over all pairs).  Testing whole states, not units
    one by one, also catches units drawn together instead of independently.

    Parameters
    ----------
    sample : callable
        ``sample(x, rng) -> y``, rows of states of the other layer.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    given : {"visible", "hidden"}
        The layer conditioned on: ``"visible"`` tests a sampler of
        :math:`p(h \mid v)`.
    n_draws : int, optional
        Draws per state; by default :func:`binomial_draws_needed` for an
        error of `effect` in a probability of 1/2 with the stated `power`
        (exact).  Draws too few for any count of a probability of 1/2 to
        fail are refused with a ValueError.
    effect : float, default 0.05
        In (0, 0.5).
    power : float, default 0.99
    alpha : float, default 1e-3
        Family-wise significance.
    rng : numpy.random.Generator or int
        Passed to `sample`.
    <name, label, returns, raises>
        Naming the worst pair, its count, its exact probability, and the slip it matches.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_sampler
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> _ = check_sampler(impl.sample_h_given_v, (W, b, c), rng=0)
    verdict: sampler: 16 probabilities of h | v, 4007 draws per v: largest |z| ...
    """
    model, alpha, power, rng = _common(model, sample, "sample", alpha, power, rng)
    if given not in ("visible", "hidden"):
        raise ValueError(f"given must be 'visible' or 'hidden', got {given!r}")
    X = _all_states(getattr(model, given))
    P, Y = _joint_probabilities(model, X, given)
    n_tests = P.size
    n_draws, detectable = _sized(n_draws, "n_draws", effect, alpha, power, n_tests, name)
    out_layer = model.hidden if given == "visible" else model.visible
    x_sym, y_sym = ("v", "h") if given == "visible" else ("h", "v")
    return _frequency_check(
        sample, (np.repeat(X, n_draws, axis=0), rng), "your sampler", out_layer, P,
        n_draws, alpha=alpha, name=name, label=label,
        entry=lambda i, j: f"p({y_sym} = {_state(Y[j])} | {x_sym} = {_state(X[i])})",
        diagnose=lambda counts: _sampler_diagnosis(model, X, given, counts, n_draws, alpha),
        passed=f"{n_tests} probabilities of {y_sym} | {x_sym}, {n_draws} draws per {x_sym}",
        power_text=f"an error of {detectable:.3f} in a probability of 1/2 is caught with "
                   f"power {power:g} (exact, at p = 1/2)", detectable=detectable)


def _frequency_check(f, args, what, layer, P, n_draws, *, alpha, name, label, entry, diagnose,
                     passed, power_text, detectable):
    """Counts of the states of `layer` that ``f(*args)`` returns, row block by row block (a
    block of `n_draws` rows per row of `P`), against `P` by exact binomial tests, Bonferroni.
    The one failure of the sampling checks names the worst failing entry and the diagnosis."""
    found_warnings = []
    draws = _array(_call(f, found_warnings, *args, what=what), what,
                   (len(P) * n_draws, layer.n_units))
    if not np.isin(draws, layer.values).all():
        _fail(name, f"{what} returned values other than {layer.values.tolist()}.", "",
              found_warnings, entry="values", found=np.nan, expected=np.nan)
    index = layer.index_of(draws).reshape(len(P), n_draws)
    counts = np.stack([np.bincount(row, minlength=P.shape[1]) for row in index])
    z, _, level, bad = _binomial_tests(counts, n_draws, P, alpha)
    if len(bad):
        i, j = max(map(tuple, bad), key=lambda ij: abs(z[ij]))  # the worst failing entry
        cause, slip = diagnose(counts)
        f = counts[i, j] / n_draws
        _fail(name, f"{entry(i, j)} of {what} is {f:.4g} ({counts[i, j]} of {n_draws} draws), "
              f"off by {abs(z[i, j]):.3g} standard errors; the exact value is {P[i, j]:.4g} "
              f"(difference {f - P[i, j]:.3g}; {len(bad)} of {P.size} entries fail at alpha = "
              f"{alpha:g}, Bonferroni).", cause, found_warnings, entry=entry(i, j), found=f,
              expected=P[i, j], z=abs(z[i, j]), sd=np.sqrt(f * (1 - f)), n_draws=n_draws,
              n_tests=P.size, slip=slip, errors=_frequency_errors(counts / n_draws, P, alpha))
    largest = float(np.max(np.abs(z)))
    return _pass(name, CheckResult(name, largest, norm.isf(level / 2), P.size, n_draws,
                                   detectable), label,
                 f"{passed}: largest |z| {largest:.2f}, exact binomial tests at alpha = "
                 f"{alpha:g} (Bonferroni); {power_text}")


def _transition_hypotheses(model, T, k):
    """(what, cause, law) for the Gibbs step's known slips."""
    V = _all_states(model.visible)
    A, H = _joint_probabilities(model, V, "visible")
    B = _joint_probabilities(model, H, "hidden")[0]
    out = []
    if k >= 2:
        # h_t drawn from v_{t-1}: v_{t+1} ~ T(v_{t-1}), so k steps move (k + 1) // 2
        half = (k + 1) // 2
        out.append((f"{half} Gibbs step{'s' * (half > 1)}", "h_t is drawn from v_{t-1} "
                    "instead of v_t (a chain of k steps then moves (k + 1) // 2)"
                    + (", or the loop runs one step short" if half == k - 1 else ""),
                    np.linalg.matrix_power(T, half)))
        if half != k - 1:
            out.append((f"{k - 1} Gibbs steps", "the loop runs one step short",
                        np.linalg.matrix_power(T, k - 1)))
    out.append((f"{k + 1} Gibbs steps", "the loop runs one step too many",
                np.linalg.matrix_power(T, k + 1)))
    for hyp, cause, alt in _bits_hypotheses(model):
        A_alt = _joint_probabilities(alt, V, "visible")[0]
        B_alt = _joint_probabilities(alt, H, "hidden")[0]
        for what, law in ((f"the model with {hyp}", A_alt @ B_alt),
                          (f"p(h | v) of the model with {hyp}", A_alt @ B),
                          (f"p(v | h) of the model with {hyp}", A @ B_alt)):
            out.append((what, cause, np.linalg.matrix_power(law, k)))
    return out


@_documented
def check_gibbs_step(step, model, *, k=1, n_draws=None, effect=0.05, power=0.99, alpha=1e-3,
                     rng, name="Gibbs step", label=None):
    r"""A Gibbs step's empirical transition against the exact matrix :math:`T^k`.

    :math:`T(v, v') = \sum_h p(h \mid v)\,p(v' \mid h)`
    (:func:`rbm.transition.gibbs_transition_matrix`).  Every visible state is
    repeated `n_draws` times and passed at once; every entry of the
    empirical :math:`2^{n_v} \times 2^{n_v}` matrix is compared with
    :math:`T^k` by an exact binomial test (Bonferroni over the entries).

    Parameters
    ----------
    step : callable
        ``step(v, rng) -> v'``, rows of visible states after `k` steps.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    k : int, default 1
        Steps that one call of `step` makes (a chain of ``k >= 2`` steps
        shows slips in the order of sampling that one step cannot).
    n_draws : int, optional
        Draws per starting state; by default :func:`binomial_draws_needed`
        for an error of `effect` in an entry of 1/2 with the stated `power`
        (exact).  Draws too few for any count of an entry of 1/2 to fail
        are refused with a ValueError.
    effect : float, default 0.05
        In (0, 0.5).
    power : float, default 0.99
    alpha : float, default 1e-3
    rng : numpy.random.Generator or int
    <name, label, returns, raises>
        Naming the worst entry, its frequency and exact value, and the slip it matches.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_gibbs_step
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> _ = check_gibbs_step(impl.gibbs_step, (W, b, c), n_draws=2000, rng=0)
    verdict: Gibbs step: 16 entries of T, 2000 draws per state: largest |z| ...
    >>> two = NumpyRBM(W, b, c, bug="h from previous v")
    >>> check_gibbs_step(lambda v, rng: two.gibbs_chain(v, 2, rng)[0], (W, b, c), k=2,
    ...                  n_draws=2000, rng=0)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: Gibbs step: T^2[...] ... Your draws match 1 Gibbs step: ...
    """
    model, alpha, power, rng = _common(model, step, "step", alpha, power, rng)
    k = check_positive_int(k, "k")
    V = _all_states(model.visible)
    T = transition.gibbs_transition_matrix(model)
    Tk = np.linalg.matrix_power(T, k)
    n_tests = Tk.size
    n_draws, detectable = _sized(n_draws, "n_draws", effect, alpha, power, n_tests, name)
    power_name = "T" if k == 1 else f"T^{k}"

    def diagnose(counts):
        return next(((f" Your draws match {what}: a common cause is that {why}.", what)
                     for what, why, law in _transition_hypotheses(model, T, k)
                     if not len(_binomial_tests(counts, n_draws, law, alpha)[3])),
                    (" Common causes: the order of sampling, W transposed, a bias left out or "
                     "doubled, units drawn together.", None))
    return _frequency_check(
        step, (np.repeat(V, n_draws, axis=0), rng), "your step", model.visible, Tk,
        n_draws, alpha=alpha, name=name, label=label,
        entry=lambda i, j: f"{power_name}[{_state(V[i])} -> {_state(V[j])}]",
        diagnose=diagnose, passed=f"{n_tests} entries of {power_name}, {n_draws} draws per state",
        power_text=f"an error of {detectable:.3f} in an entry of 1/2 is caught with power "
                   f"{power:g} (exact, at p = 1/2)", detectable=detectable)


def _stationary_diagnosis(model, counts, n_chains, alpha, reach):
    """The first known slip whose stationary law the counts pass, as a sentence, or the burn-in."""
    V = _all_states(model.visible)
    for hyp, cause, alt in _bits_hypotheses(model):
        law = np.exp(exact.log_prob(alt, V))[None, :]
        if not len(_binomial_tests(counts, n_chains, law, alpha)[3]):
            return (f" Your draws match p(v) of the model with {hyp}: a common cause is that "
                    f"{cause}.", f"the model with {hyp}")
    if reach > 1e-6:
        return (f" Block Gibbs from the worst start is still {reach:.2g} from p(v) after the "
                f"burn-in: if your sampler mixes no faster, lengthen burn_in."), None
    return "", None


@_documented
def check_stationary_law(sample, model, *, burn_in=100, n_chains=None, effect=0.01, power=0.99,
                         alpha=1e-3, rng, name="stationary law", label=None):
    r"""A sampler's long-run law of the visible states against the exact :math:`p(v)`.

    The sampler may carry any state (persistent chains, the replicas of
    parallel tempering, adaptive temperatures): the check asks it for
    `n_chains` independent runs of `burn_in` steps each and counts the
    visible states they end in (for tempering, of the :math:`\beta = 1`
    replica).  Independent runs make the draws independent, so every
    state's frequency gets an exact two-sided binomial test against
    :math:`p(v)` (Bonferroni over the :math:`2^{n_v}` states), and the
    level is exact provided `burn_in` steps reach the stationary law: the
    verdict states how far block Gibbs is from :math:`p(v)` after `burn_in`
    steps from its worst start (a sampler meant to mix faster, such as
    tempering, is usually closer).

    By default the runs are sized exactly (:func:`binomial_draws_needed`,
    the least power over the model's own probabilities) to catch an error
    of `effect` = 0.01 in any one state's probability with power 0.99 at
    :math:`\alpha = 10^{-3}`.  On a 4-unit model that costs tens of
    thousands of runs (82 590 on the 4 x 4 model of weight scale 2 in the
    package's tests), each of `burn_in` steps: about 8 million sampler
    steps at the default burn-in, seconds for a vectorised NumPy sampler.

    Parameters
    ----------
    sample : callable
        ``sample(n_chains, n_steps, rng) -> (n_chains, n_visible)``: runs
        `n_chains` independent copies of the sampler (from any start it
        chooses) for `n_steps` steps and returns the visible state each ends
        in (of the :math:`\beta = 1` replica).
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    burn_in : int, default 100
    n_chains : int, optional
        Runs; by default sized for `effect` and `power`.  Runs too few for
        any count of the model's probabilities to fail are refused.
    effect : float, default 0.01
        In (0, 0.5).
    power : float, default 0.99
    alpha : float, default 1e-3
        Family-wise significance (Bonferroni over the states).
    rng : numpy.random.Generator or int
    <name, label, returns, raises>
        Naming the worst state, its frequency, its exact probability and
        the difference, and the slip the counts match (a bias left out or
        doubled, the coupling's sign), or how far block Gibbs is from
        :math:`p(v)` after the burn-in when that could explain it.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_stationary_law
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> def tempering(n_chains, n_steps, rng):
    ...     return impl.tempering_chains(n_chains, n_steps, [1.0, 0.5], rng)
    >>> _ = check_stationary_law(tempering, (W, b, c), burn_in=30, effect=0.02, rng=0)
    verdict: stationary law: 4 probabilities of v, ... runs of 30 steps: largest |z| ...
    """
    model, alpha, power, rng = _common(model, sample, "sample", alpha, power, rng)
    burn_in = check_positive_int(burn_in, "burn_in")
    V = _all_states(model.visible)
    P = np.exp(exact.log_prob(model, V))[None, :]
    n_chains, detectable = _sized(n_chains, "n_chains", effect, alpha, power, P.size, name,
                                  p=np.clip(P[0], 1e-300, 1 - 1e-16))
    T = transition.gibbs_transition_matrix(model)
    reach = float(np.abs(np.linalg.matrix_power(T, burn_in) - P).max())
    return _frequency_check(
        sample, (n_chains, burn_in, rng), "your sampler", model.visible, P, n_chains,
        alpha=alpha, name=name, label=label, entry=lambda i, j: f"p(v = {_state(V[j])})",
        diagnose=lambda counts: _stationary_diagnosis(model, counts, n_chains, alpha, reach),
        passed=f"{P.size} probabilities of v, {n_chains} runs of {burn_in} steps",
        power_text=f"an error of {detectable:.3g} in any one state's probability is caught "
                   f"with power {power:g} (exact, the least over the states); block Gibbs is "
                   f"within {reach:.1g} of p(v) after {burn_in} steps", detectable=detectable)


# -- free energy, log Z, likelihoods ---------------------------------------------------

# float32 code rounds at each operation.  An entry's spacings are counted at the magnitude of
# the terms it sums (`scale`: for F(v), |E_v(v)| + |A_h(x)|; for log p(v), |F(v)| + |log Z|;
# for the PL, 2 max |F|), since a small result of large terms keeps their rounding.  Measured:
# correct float32 code (numpy float32 arithmetic) is within 3.3 such spacings of the float64
# values for F, 1.7 for log p, 1.9 for the PL and 3.7 for E[h | v], on seven to nine models from
# 4 x 4 to 16 x 20 (weights 0.5 to 3, hidden biases -5 to +10; the tests re-derive F and
# E[h | v] on seven up to 10 x 10); JAX's float32 free energy 1.44 on the chapter's model.
# Rounding is named within _ROUNDING_SPACINGS (the largest, 3.7, times about 2); a gap past it
# is a defect.  Only values within _FLOAT32_SPACINGS of the exact ones are examined at all.
_ROUNDING_SPACINGS = 8
_FLOAT32_SPACINGS = 64
_EXP_OVERFLOW = {"float32": float(np.log(np.finfo(np.float32).max)),
                 "float64": float(np.log(np.finfo(np.float64).max))}
_WIDEST_FIRST = sorted(_EXP_OVERFLOW.items(), key=lambda item: -item[1])


def _is_float32(values):
    """Whether the finite `values` are float32 numbers (test on the raw values, not a difference)."""
    values = np.asarray(values, dtype=float)
    return bool(np.isfinite(values).all()
                and np.array_equal(values.astype(np.float32).astype(float), values))


def _float32_spacings(a, b, scale):
    """The largest |a - b| in float32 spacings at max(|scale|, 1), entry by entry."""
    spacing = np.spacing(np.maximum(np.abs(scale), 1.0).astype(np.float32)).astype(float)
    return float(np.max(np.abs(np.asarray(a, dtype=float) - b) / spacing))


def _rounding_cause(values, exact_values, tol, rtol, rerun=None, *, raw=None, scale=None):
    """A sentence about float32 rounding if the `raw` values (default `values`) are float32
    numbers and `values` are within ``_FLOAT32_SPACINGS`` float32 spacings of the exact values
    (counted at `scale`, the magnitude of the summed terms, default the exact values); else ''.

    Rounding is named only when it is tested: ``rerun()`` gives the same computation in float64
    (the check's `float64` argument); rounding is the cause only if those values pass and the
    float32 values are within ``_ROUNDING_SPACINGS`` of them.  If the float32 values are near
    the exact ones and the counterpart is off, the counterpart is named; a shared defect only
    when float32 and float64 agree and both fail.
    """
    values, exact_values = np.asarray(values, dtype=float), np.asarray(exact_values, dtype=float)
    scale = np.abs(exact_values) if scale is None else np.abs(np.asarray(scale, dtype=float))
    if not (_is_float32(values if raw is None else raw) and np.isfinite(values).all()):
        return ""
    spacings = _float32_spacings(values, exact_values, scale)
    if spacings > _FLOAT32_SPACINGS:
        return ""
    within = (f" Your values are float32 numbers, within {spacings:.3g} float32 spacings of "
              f"the exact values (spacings at the magnitude of the summed terms)")
    if rerun is None:
        return (f"{within}; float32 rounding would fit, but it is not tested, and a defect "
                f"of this size fits too: pass float64= (the same computation in float64), and "
                f"the check names rounding only if that passes and your float32 values are "
                f"within {_ROUNDING_SPACINGS} spacings of it.")
    values64 = np.asarray(rerun(), dtype=float)
    if _is_float32(values64):
        return (f"{within}; your float64 counterpart returns float32 numbers too (it does not "
                f"compute in float64), so float32 rounding is untested.")
    bad64, gap64 = _compare(values64, exact_values, tol, rtol)
    apart = _float32_spacings(values, values64, scale)
    gap = (f"your float32 and float64 values differ by up to {apart:.3g} float32 spacings "
           f"(correct float32 code stays within {_ROUNDING_SPACINGS})")
    off64 = (f"your float64 counterpart is off ({len(bad64)} of {values64.size} entries "
             f"beyond the tolerance, largest difference {float(np.max(gap64)):.3g})")
    if not bad64 and apart <= _ROUNDING_SPACINGS:
        rel = float(np.max(np.abs(values - exact_values) / np.maximum(np.abs(exact_values), 1.0)))
        return (f"{within}; your float64 counterpart passes and {gap}: the rounding of "
                f"float32 arithmetic (if float32 is meant, tol = rtol = {2 * rel:.1g} passes "
                f"them).")
    if not bad64:
        return (f"{within}, but your float64 counterpart passes and {gap}: a defect of your "
                f"float32 code that its float64 counterpart does not have, not rounding.")
    if spacings <= _ROUNDING_SPACINGS < apart:
        return (f"{within}, as close as float32 rounding allows, but {off64}: the counterpart "
                f"is wrong or computes something else, so float32 rounding is untested.")
    if apart <= _ROUNDING_SPACINGS:
        return (f"{within}, and {off64}; {gap}: a defect that float32 rounding does not "
                f"explain, shared by both (a looser tolerance would hide it).")
    return (f"{within}, and {off64}; {gap}: neither is the other rounded, so both have "
            f"defects (not float32 rounding).")


def _log_likelihood_terms(model, data, log_z, per_row):
    """|F(v)| + |log Z| per row of `data` (their mean if not `per_row`): log p's terms."""
    terms = np.abs(model.free_energy(data)) + abs(log_z)
    return terms if per_row else np.array(terms.mean())


def _pseudo_likelihood_terms(model, data, per_row):
    """2 max_v |F(v)| per row (their mean if not `per_row`): the PL's terms are differences of F
    (correct float32 code measured within 1.9 spacings at this scale, seven models)."""
    largest = float(np.max(np.abs(model.free_energy(_all_states(model.visible)))))
    terms = np.full(len(data), 2.0 * largest)
    return terms if per_row else np.array(terms.mean())


def _free_energy_terms(model, V):
    """|E_v(v)| + |A_h(input)| per row of `V`: the magnitude of F(v)'s two terms."""
    return (np.abs(model.visible.energy(V))
            + np.abs(model.hidden.log_normaliser(model.input_hidden(V))))


def _float64_rerun(float64, found_warnings, what, shape, *args):
    """``rerun`` for :func:`_rounding_cause`: the `float64` callable on `args`, or None."""
    if float64 is None:
        return None
    _callable(float64, "float64")
    return lambda: _array(_call(float64, found_warnings, *(np.copy(a) for a in args),
                                what=f"your float64 {what}"), f"your float64 {what}", shape)


def _overflow_cause(values, model):
    """A sentence naming the overflows the model's inputs can cause, if `values` are not finite."""
    if np.isfinite(values).all():
        return ""
    V = _all_states(model.visible)
    inputs = float(np.max(np.abs(model.input_hidden(V))))
    minus_f = float(np.max(np.abs(model.free_energy(V))))
    causes = []
    for reach, text in ((inputs, f"softplus written as log(1 + exp(x)) overflows in {{dtype}} "
                                 f"(the hidden inputs reach {inputs:.4g} > {{limit:.4g}}); "
                                 f"np.logaddexp(0, x) does not"),
                        (minus_f, f"log(sum(exp(-F))) overflows in {{dtype}} (|F| reaches "
                                  f"{minus_f:.4g} > {{limit:.4g}}) unless the largest term is "
                                  f"taken out first (scipy.special.logsumexp)")):
        over = [(dtype, limit) for dtype, limit in _WIDEST_FIRST if reach > limit]
        if over:
            causes.append(text.format(dtype=over[0][0], limit=over[0][1]))
    if not causes:
        return (f" Your values are not finite, though no exp of this model's inputs (up to "
                f"{inputs:.3g}) or free energies (up to {minus_f:.3g}) overflows even in "
                f"float32: look for a log of 0 or a division by 0.")
    return " Your values are not finite: " + "; or ".join(causes) + "."


def _minus_offset(values, exact_values, up_to_constant):
    """`values` less their median difference from `exact_values` if `up_to_constant`."""
    if up_to_constant and np.isfinite(values).all():
        return values - float(np.median(values - exact_values))
    return values


def _gap(found, expected, digits=10):
    """``is <found>; the exact value is <expected> (difference <d>``, shared by every check."""
    return (f"is {found:.{digits}g}; the exact value is {expected:.{digits}g} (difference "
            f"{found - expected:.3g}")


@_documented
def check_free_energy(free_energy, model, *, up_to_constant=False, tol=1e-9, rtol=1e-12,
                      float64=None, name="free energy", label=None):
    r"""A free energy :math:`F(v) = -\log \sum_h e^{-E(v, h)}` at every visible state.

    Parameters
    ----------
    free_energy : callable
        ``free_energy(v) -> (n,)`` for rows of visible states.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
        Choose weights large enough to reach the range where your code
        could overflow (inputs :math:`c_j + (v^\top W)_j` beyond 88.7 in float32).
    up_to_constant : bool, default False
        Accept :math:`F + \text{const}` (an energy with an additive
        constant); the constant is reported.
    tol, rtol : float
        An entry passes within ``tol + rtol * |exact|``.
    <float64>
    <name, label, returns, raises>
        Naming the worst state, and a cause: a constant offset, the sign,
        an overflowing softplus, float32 rounding (tested with `float64`).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_free_energy
    >>> from rbm.reference_impl import NumpyRBM
    >>> W = 100 * np.array([[1.0, -2.0], [0.5, 1.0]])
    >>> b, c = np.array([0.1, -0.3]), np.zeros(2)
    >>> _ = check_free_energy(NumpyRBM(W, b, c).free_energy, (W, b, c))
    verdict: free energy: every visible state (4) within 1e-09 + 1e-12 |exact|
    >>> overflow = NumpyRBM(W, b, c, bug="softplus overflow")
    >>> check_free_energy(overflow.free_energy, (W, b, c))
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: free energy: F(...) is -inf; the exact value is ...
    ... overflows ...

    Float32 values are blamed on rounding only if the same code in float64 passes:

    >>> in_float32 = lambda v: NumpyRBM(W, b, c).free_energy(v).astype(np.float32)
    >>> check_free_energy(in_float32, (W, b, c), float64=NumpyRBM(W, b, c).free_energy)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: free energy: ... the rounding of float32 arithmetic ...
    """
    model = as_model(model)
    _callable(free_energy, "free_energy")
    if float64 is not None:
        _callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    rtol = check_positive_float(rtol, "rtol", allow_zero=True)
    V = _all_states(model.visible)
    F = model.free_energy(V)
    found_warnings = []
    values = _array(_call(free_energy, found_warnings, V.copy(), what="your free_energy"),
                    "your free energy", (len(V),))
    offset = 0.0
    if up_to_constant and np.isfinite(values).all():  # one state off stays one state off
        offset = float(np.median(values - F))
    bad, _ = _compare(values - offset, F, tol, rtol)
    if bad:
        (i,) = bad[0]
        cause, slip = _overflow_cause(values, model), None
        shift = values - F
        constant = float(np.median(shift)) if not cause else 0.0
        terms = _free_energy_terms(model, V)
        noise = 0.0  # float32 values: allow float32 rounding around the constant
        if _is_float32(values):
            noise = _ROUNDING_SPACINGS * np.spacing(
                np.maximum(terms, 1.0).astype(np.float32)).astype(float)
        if cause:
            slip = "non-finite values"
        elif not up_to_constant and np.all(np.abs(values - constant - F)
                                           <= tol + rtol * np.abs(F) + noise) \
                and abs(constant) > np.max(noise):  # a constant beyond rounding's reach
            within = " and float32 rounding" if _is_float32(values) else ""
            cause = (f" Your values are F + {constant:.6g} at every state, within the "
                     f"tolerance{within}: an additive constant in your energy (pass "
                     f"up_to_constant=True if it is meant).")
            slip = "F plus a constant"
        elif _matches(values, [("-F", -F)], tol, rtol):
            cause = " Your values are -F(v): the sign is reversed (log sum_h e^{-E} is -F)."
            slip = "-F"
        else:
            rerun = _float64_rerun(float64, found_warnings, "free energy", (len(V),), V)
            cause = _rounding_cause(values - offset, F, tol, rtol, rerun and (
                lambda: _minus_offset(rerun(), F, up_to_constant)), raw=values, scale=terms)
        entry = f"F{_state(V[i])}"
        _fail(name, f"{entry} " + _gap(values[i] - offset, F[i])
              + f"; {len(bad)} of {len(V)} states beyond {tol:g} + {rtol:g} |exact|"
              + (f", after the constant {offset:.6g}" if up_to_constant else "") + ").", cause,
              found_warnings, entry=entry, found=values[i] - offset, expected=F[i],
              n_tests=len(V), slip=slip)
    text = f"every visible state ({len(V)}) within {tol:g} + {rtol:g} |exact|"
    if up_to_constant:
        text += f", up to the constant {offset:.6g}"
    return _pass(name, CheckResult(name, 0.0, np.nan, len(V), 0, tol), label, text)


@_documented
def check_log_partition(log_partition, model, *, tol=1e-9, float64=None, name="log Z",
                        label=None):
    r""":math:`\log Z = \log \sum_{v, h} e^{-E(v, h)}` against its exact value (no additive constant).

    Parameters
    ----------
    log_partition : callable
        ``log_partition() -> float``.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    tol : float, default 1e-9
        Absolute tolerance.
    <float64>
    <name, label, returns, raises>
        With the exact value and the difference, named when it is a known
        convention (a multiple of log 2, the sign).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_log_partition
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> _ = check_log_partition(NumpyRBM(W, b, c).log_partition, (W, b, c))
    verdict: log Z: 3.09561 within 1e-09 of the exact value
    """
    model = as_model(model)
    _callable(log_partition, "log_partition")
    if float64 is not None:
        _callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    log_z = exact.log_partition(model)
    found_warnings = []
    value = float(_array(_call(log_partition, found_warnings, what="your log_partition"),
                         "your log Z", ()))
    gap = value - log_z
    if not abs(gap) <= tol:
        cause = _overflow_cause(np.array([value]), model)
        slip = "non-finite values" if cause else None
        ratio = gap / np.log(2) if np.isfinite(gap) else 0.5
        if not cause and abs(ratio - round(ratio)) < 1e-9 and round(ratio):
            cause = (f" The difference is {round(ratio)} log 2: a constant in the energy, or a "
                     "layer summed over a different set of states (±1 against {0,1}).")
            slip = f"{round(ratio)} log 2 off"
        elif not cause and abs(value + log_z) <= tol:
            cause, slip = " Your value is -log Z: the sign is reversed.", "-log Z"
        elif not cause:
            cause = _rounding_cause(np.array(value), np.array(log_z), tol, 0.0, _float64_rerun(
                float64, found_warnings, "log Z", ()))
        _fail(name, "your value " + _gap(value, log_z) + f" > {tol:g}).", cause,
              found_warnings, entry="log Z", found=value, expected=log_z, slip=slip)
    return _pass(name, CheckResult(name, 0.0, np.nan, 1, 0, tol), label,
                 f"{log_z:.6g} within {tol:g} of the exact value")


# The distribution-free test of E[Z_hat / Z] <= 1 bets with these fractions (a mixture of
# test martingales): each is an e-value under any law of Z_hat with E[Z_hat] <= Z.
_BETS = (0.05, 0.1, 0.2, 0.4, 0.8)


@_documented
def check_log_partition_estimator(estimate, model, *, n_draws=1000, alpha=1e-3, power=0.99,
                                  rng, name="log Z estimate", label=None):
    r"""Draws of a stochastic :math:`\log \hat Z` (AIS and its kin) against the exact log Z.

    An importance-sampling estimate such as AIS is unbiased for :math:`Z`,
    not for :math:`\log Z`: the check tests :math:`\mathbb E[\hat Z]/Z = 1`
    from `n_draws` independent calls, and reports the bias of
    :math:`\log \hat Z` (negative for an unbiased :math:`\hat Z`, by
    Jensen's inequality).  The ratio :math:`R = \hat Z / Z` has a heavy
    right tail, so a t-test of its mean has no stated level.  Two tests,
    each at :math:`\alpha/2`:

    * **too high**: :math:`\mathbb E[R] \le 1` against
      :math:`\mathbb E[R] > 1`, by betting (a mixture over fractions
      :math:`\lambda` of :math:`\prod_i (1 + \lambda (R_i - 1))`, whose
      expectation is at most 1 for any law of :math:`R \ge 0` with
      :math:`\mathbb E[R] \le 1`; rejected when it reaches :math:`2/\alpha`,
      by Markov's inequality).  Its level holds whatever the tail.
    * **too low or too high, in logs**: :math:`\log R` normal (as for AIS
      with many intermediate distributions, a sum of many log-weights) gives
      :math:`\log \mathbb E[R] = \mu + \sigma^2/2`; the statistic
      :math:`(m + s^2/2) / \sqrt{s^2/n + s^4/(2(n-1))}` of the draws' mean
      :math:`m` and variance :math:`s^2` of :math:`\log R` is compared with
      the normal quantile.  Its level rests on that normality.

    An estimate too low on average cannot be detected without such an
    assumption: a rare huge :math:`\hat Z` can carry the missing mean.

    Parameters
    ----------
    estimate : callable
        ``estimate(rng) -> float``: one estimate of :math:`\log Z` of `model`.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    n_draws : int, default 1000
        At least ``MIN_MEAN_DRAWS``.
    alpha : float, default 1e-3
    power : float, default 0.99
        For the error in :math:`\log \mathbb E[\hat Z]/Z` reported as detectable
        (normal approximation of the second test).
    rng : numpy.random.Generator or int
    <name and label>

    <returns a CheckResult>
        ``largest_z`` is the second test's statistic, ``detectable`` the
        error in :math:`\log \mathbb E[\hat Z] - \log Z` caught with `power`.

    Raises
    ------
    AssertionError
        With the estimated :math:`\log \mathbb E[\hat Z]/Z`, the bias of
        :math:`\log \hat Z`, which test failed, and a constant offset of a
        multiple of :math:`\log 2` when the draws match one.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_log_partition_estimator
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> impl = NumpyRBM(W, b, c)
    >>> betas = np.linspace(0, 1, 20)
    >>> _ = check_log_partition_estimator(lambda rng: impl.ais_log_partition(10, betas, rng),
    ...                                   (W, b, c), n_draws=300, rng=0)
    verdict: log Z estimate: 300 draws: log E[Z_hat]/Z = ... bias of log Z_hat ...
    """
    model, alpha, power, rng = _common(model, estimate, "estimate", alpha, power, rng)
    n = _mean_draws(n_draws)
    log_z = exact.log_partition(model)

    def one_draw(r):
        return _array(_guarded(estimate, "your estimator", r), "your estimator", ()).reshape(1)

    draws, found_warnings = _collect(one_draw, n, rng)
    log_r = draws[:, 0] - log_z
    if not np.isfinite(log_r).all():
        _fail(name, "your estimates hold NaN or infinity.", _overflow_cause(log_r, model),
              found_warnings, entry="log Z", found=np.nan, expected=log_z, n_draws=n,
              slip="non-finite values")
    m, s2 = float(log_r.mean()), float(log_r.var(ddof=1))
    top = log_r.max()
    log_mean_r = float(top + np.log(np.mean(np.exp(log_r - top))))
    facts = (f"log E[Z_hat]/Z = {log_mean_r:.3g} from the mean of the draws, {m + s2 / 2:.3g} "
             f"as mean + variance/2 of log Z_hat - log Z; bias of log Z_hat {m:.3g} +- "
             f"{np.sqrt(s2 / n):.2g}")
    if s2 == 0:
        if abs(m) <= 1e-9 * (1 + abs(log_z)):
            return _pass(name, CheckResult(name, 0.0, np.nan, 1, n, 0.0), label,
                         f"{n} draws, all equal to the exact log Z (a deterministic estimate)")
        cause, slip = _generator_cause(one_draw, "your estimator")
        _fail(name, f"all {n} draws are {draws[0, 0]:.10g}; the exact log Z is {log_z:.10g} "
              f"(difference {m:.3g}).", cause, found_warnings, entry="log Z", found=draws[0, 0],
              expected=log_z, n_draws=n, slip=slip)
    log_bets = np.logaddexp(np.log1p(-np.array(_BETS))[:, None],
                            np.log(_BETS)[:, None] + log_r[None, :]).sum(axis=1)
    log_e = float(np.logaddexp.reduce(log_bets) - np.log(len(_BETS)))
    se = float(np.sqrt(s2 / n + s2 ** 2 / (2 * (n - 1))))
    stat = (m + s2 / 2) / se
    crit = float(norm.isf(alpha / 4))
    failed = [what for what, bad in (
        (f"the betting test of E[Z_hat]/Z <= 1 (distribution-free) reaches "
         f"{np.exp(min(log_e, 700)):.3g} >= 2 / alpha", log_e >= np.log(2 / alpha)),
        (f"the lognormal test of log E[Z_hat]/Z = 0 gives |z| = {abs(stat):.3g} > {crit:.3g}",
         abs(stat) > crit)) if bad]
    if failed:
        k = round(m / np.log(2))
        cause, slip = "", None
        if k and abs(m - k * np.log(2)) <= 3 * np.sqrt(s2 / n) \
                and abs(log_mean_r - k * np.log(2)) <= 3 * se + 0.5 * s2:
            cause = (f" Your estimates are about log Z + {k} log 2: a constant left out, such as "
                     f"the base model's log Z over {abs(k)} units ({abs(k)} log 2).")
            slip = f"{k} log 2 off"
        _fail(name, f"{facts}; at alpha = {alpha:g}, " + " and ".join(failed) + ".", cause,
              found_warnings, entry="log E[Z_hat]/Z", found=log_mean_r + log_z, expected=log_z,
              z=abs(stat), sd=np.sqrt(s2), n_draws=n, slip=slip)
    detectable = float((crit + norm.ppf(power)) * se)
    return _pass(name, CheckResult(name, abs(stat), crit, 1, n, detectable), label,
                 f"{n} draws: {facts}; passes the betting test of E[Z_hat]/Z <= 1 and the "
                 f"lognormal test at alpha = {alpha:g} (each at alpha/2); an error of "
                 f"{detectable:.2g} in log E[Z_hat]/Z is caught with power {power:g} (normal "
                 f"approximation)")


@_documented
def check_log_likelihood(log_likelihood, model, data, *, tol=1e-9, float64=None,
                         name="log-likelihood", label=None):
    r""":math:`\log p(v) = -F(v) - \log Z` of the rows of `data` (per row, or their mean).

    Parameters
    ----------
    log_likelihood : callable
        ``log_likelihood(data) -> (n,)`` (per row) or ``-> float`` (the mean).
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    tol : float, default 1e-9
        Absolute tolerance, per row or on the mean.
    <float64>
    <name, label, returns, raises>
        With the exact value, and the convention it matches if any (the sum
        over rows, :math:`-F` without :math:`\log Z`, base 2).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_log_likelihood
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> _ = check_log_likelihood(NumpyRBM(W, b, c).log_likelihood, (W, b, c), data)
    verdict: log-likelihood: the mean over 2 rows within 1e-09 of the exact value
    """
    model = as_model(model)
    _callable(log_likelihood, "log_likelihood")
    if float64 is not None:
        _callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    data = _data(model, data)
    log_p = exact.log_prob(model, data)
    found_warnings = []
    values = _array(_call(log_likelihood, found_warnings, data.copy(),
                          what="your log_likelihood"), "your log-likelihood")
    if values.shape not in ((), (len(data),)):
        raise AssertionError(f"{name}: your log-likelihood returned shape {values.shape}; "
                             f"expected () or ({len(data)},)")
    per_row = values.ndim == 1
    target = log_p if per_row else np.array(log_p.mean())
    bad, _ = _compare(values, target, tol, 0.0)
    if bad:
        log_z = exact.log_partition(model)
        alternatives = [("the sum over rows", log_p.sum()), ("-F(v), without log Z",
                                                              log_p + log_z),
                        ("log base 2", log_p / np.log(2))]
        if per_row:
            alternatives = alternatives[1:]
        else:
            alternatives = [(what, np.mean(x)) if what != "the sum over rows" else (what, x)
                            for what, x in alternatives]
        slips = _matches(values, [(what, np.asarray(x, dtype=float))
                                  for what, x in alternatives], tol, 0.0)
        cause = (f" Your values are {slips[0]}." if slips else
                 _overflow_cause(values, model) or _rounding_cause(values, target, tol, 0.0,
                                                                   _float64_rerun(
                     float64, found_warnings, "log-likelihood", values.shape, data),
                     scale=_log_likelihood_terms(model, data, log_z, per_row)))
        where = f" of row {bad[0][0]}" if per_row else " (the mean over rows)"
        _fail(name, f"your value{where} " + _gap(values[bad[0]], target[bad[0]]) + ").", cause,
              found_warnings, entry=f"row {bad[0][0]}" if per_row else "mean over rows",
              found=values[bad[0]], expected=target[bad[0]], n_tests=values.size,
              slip=slips[0] if slips else None)
    what = f"{len(data)} rows" if per_row else f"the mean over {len(data)} rows"
    return _pass(name, CheckResult(name, 0.0, np.nan, values.size, 0, tol), label,
                 f"{what} within {tol:g} of the exact value")


_CONVENTIONS = ("sum", "mean")


@_documented
def check_pseudo_likelihood(pseudo_likelihood, model, data, *, convention="sum", tol=1e-9,
                            n_draws=None, alpha=1e-3, rng=None, float64=None,
                            name="pseudo-likelihood", label=None):
    r"""The pseudo-log-likelihood of each row, exact or estimated, against its exact value.

    :math:`\operatorname{PL}(v) = \sum_i \log p(v_i \mid v_{-i})` with
    ``convention="sum"``, or :math:`\operatorname{PL}(v) / n_\text{visible}`
    with ``"mean"`` (:func:`rbm.pseudolikelihood.log_conditionals`).

    A deterministic implementation is compared within `tol`.  A stochastic
    one (`n_draws` given, e.g. scikit-learn's one-bit estimate) is called
    `n_draws` times; the mean of its draws for each row is compared with the
    exact value by t-tests, Bonferroni over the rows.

    Parameters
    ----------
    pseudo_likelihood : callable
        ``f(data) -> (n,)`` (or ``-> float``, the mean over rows); with
        `n_draws`, ``f(data, rng) -> (n,)``.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    convention : {"sum", "mean"}
    tol : float, default 1e-9
    n_draws : int, optional
        For a stochastic estimate: draws, at least ``MIN_MEAN_DRAWS``.
    alpha : float, default 1e-3
    rng : numpy.random.Generator or int, optional
        Needed with `n_draws`.
    float64 : callable, optional
        Without `n_draws` only: the same computation in float64, with the
        same signature.  Called only when a failure's values are float32
        numbers within a few dozen float32 spacings of the exact values:
        float32 rounding is then named only if these values pass the same
        tolerance and the float32 values are within 8 float32 spacings of
        them; see :func:`check_free_energy`.  Without it, rounding is called
        untested.
    <name, label, returns, raises>
        Naming the worst row and the convention the values match, if another.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_pseudo_likelihood
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> _ = check_pseudo_likelihood(NumpyRBM(W, b, c).pseudo_log_likelihood, (W, b, c), data)
    verdict: pseudo-likelihood: 2 rows (sum over units) within 1e-09 of the exact value
    >>> bug = NumpyRBM(W, b, c, bug="PL times n_visible")
    >>> check_pseudo_likelihood(bug.pseudo_log_likelihood, (W, b, c), data)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: ... Your values are n_visible times the sum over units.
    """
    model = as_model(model)
    _callable(pseudo_likelihood, "pseudo_likelihood")
    if float64 is not None:
        if n_draws is not None:
            raise ValueError("float64 is for a deterministic pseudo-likelihood (no n_draws): "
                             "the t-tests of draws do not name float32 rounding")
        _callable(float64, "float64")
    if convention not in _CONVENTIONS:
        raise ValueError(f"convention must be 'sum' or 'mean', got {convention!r}")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    data = _data(model, data)
    pl_sum = pseudolikelihood.log_conditionals(model, data).sum(axis=1)
    n_vis = model.n_visible
    scales = {"sum": 1.0, "mean": 1.0 / n_vis}
    target = pl_sum * scales[convention]
    alternatives = [("the sum over units", "the convention is the sum over units (pass "
                     "convention='sum')", pl_sum),
                    ("the mean over units", "the convention is the mean over units (pass "
                     "convention='mean')", pl_sum / n_vis),
                    ("n_visible times the sum over units", "the sum over units is multiplied "
                     "by n_visible again (the factor of a one-bit estimate applied to the "
                     "exact sum)", n_vis * pl_sum)]
    alternatives = [alt for alt in alternatives if not np.allclose(alt[2], target)]
    conv = "sum over units" if convention == "sum" else "mean over units"
    found_warnings = []
    if n_draws is None:
        values = _array(_call(pseudo_likelihood, found_warnings, data.copy(),
                              what="your pseudo_likelihood"),
                        "your pseudo-likelihood")
        per_row = values.ndim == 1
        if values.shape not in ((), (len(data),)):
            raise AssertionError(f"{name}: your function returned shape {values.shape}; "
                                 f"expected () or ({len(data)},)")
        goal = target if per_row else np.array(target.mean())
        bad, _ = _compare(values, goal, tol, 0.0)
        if bad:
            alts = [(what, x if per_row else np.array(x.mean())) for what, _, x in alternatives]
            slips = _matches(values, alts, tol, 0.0)
            cause = (f" Your values are {slips[0]}." if slips else
                     _overflow_cause(values, model) or _rounding_cause(
                         values, goal, tol, 0.0, _float64_rerun(
                             float64, found_warnings, "pseudo-likelihood", values.shape, data),
                         scale=_pseudo_likelihood_terms(model, data, per_row)))
            where = f"row {bad[0][0]}" if per_row else "the mean over rows"
            _fail(name, f"your value for {where} ({conv}) " + _gap(values[bad[0]], goal[bad[0]])
                  + ").", cause, found_warnings, entry=where, found=values[bad[0]],
                  expected=goal[bad[0]], n_tests=values.size, slip=slips[0] if slips else None)
        what = f"{len(data)} rows" if per_row else f"the mean over {len(data)} rows"
        return _pass(name, CheckResult(name, 0.0, np.nan, values.size, 0, tol), label,
                     f"{what} ({conv}) within {tol:g} of the exact value")
    if rng is None:
        raise TypeError("rng is needed with n_draws: a numpy.random.Generator or an int seed")
    n_draws = _mean_draws(n_draws)
    alpha = _alpha(alpha)
    rng = check_rng(rng)

    def one_draw(r):
        return _array(_guarded(pseudo_likelihood, "your pseudo_likelihood", data.copy(), r),
                      "your pseudo-likelihood", (len(data),))

    return _mean_check(one_draw, n_draws, rng, target, model=model, alpha=alpha, power=0.99,
                       name=name, label=label, entries=[f"row {i}" for i in range(len(data))],
                       alternatives=lambda: alternatives, caller="your pseudo_likelihood",
                       what=f"the mean of {n_draws} draws per row ({conv})")


# -- means of draws: gradient estimates and training steps ------------------------------

def _t_scores(draws, target):
    """t statistics of the mean of `draws` (n, m) against `target` (m,); constant columns exact."""
    n = draws.shape[0]
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(n)
    se[se <= 1e-13 * (1 + np.abs(mean))] = 0.0  # the rounding of equal draws, not a spread
    gap = mean - target
    exact_equal = np.abs(gap) <= 1e-9 * (1 + np.abs(target))
    z = np.divide(gap, se, out=np.where(exact_equal, 0.0, np.inf), where=se > 0)
    return z, mean, se


def _collect(one_draw, n_draws, rng):
    """`n_draws` calls of ``one_draw(rng)`` stacked, and the warnings they raised."""
    found_warnings = []
    with _recorded(found_warnings):
        draws = np.stack([one_draw(rng) for _ in range(n_draws)])
    return draws, found_warnings


def _generator_cause(one_draw, what):
    """Why every call gave the same value: tested by calling `one_draw` with fresh generators."""
    with _recorded([]):
        a, b = (one_draw(np.random.default_rng(seed)) for seed in (1, 2))
    if not np.array_equal(a, b):
        return (f" Every call gave the same value, yet {what} gives other values with other "
                "generators: it does not advance the generator it is given (it copies it, "
                "or seeds a new one from it at every call).", "a generator that does not advance")
    return (f" Every call gave the same value, and {what} gives it with any generator: it "
            "ignores the generator it is given (it draws from one of its own, re-seeded at "
            "every call, or it is not random).", "a generator that does not advance")


def _fail(name, text, cause="", found_warnings=(), **attrs):
    """Raise the one failure of every check: ``name: text`` + the tested cause + warnings."""
    raise CheckFailed(f"{name}: {text}" + cause + _warned(found_warnings), **attrs)


def _mean_check(one_draw, n_draws, rng, target, *, model, alpha, power, name, label, entries,
                alternatives, what, caller):
    """Per-entry t-tests of the mean of `n_draws` draws against `target`, Bonferroni.

    ``one_draw(rng)`` is one flat draw of the code under test; `alternatives` is called on
    failure only and returns (what, cause, values) of known slips.
    """
    draws, found_warnings = _collect(one_draw, n_draws, rng)
    largest, crit, detectable = _t_tests(
        draws, target, alpha=alpha, power=power, name=name, entries=entries,
        alternatives=alternatives, found_warnings=found_warnings, model=model,
        identical=lambda: _generator_cause(one_draw, caller))
    n, m = draws.shape
    return _pass(name, CheckResult(name, largest, crit, m, n, detectable), label,
                 f"{what}: largest |t| {largest:.2f} <= {crit:.2f} (alpha = {alpha:g}, "
                 f"Bonferroni over {m} entries); an error of {detectable:.2g} in one entry "
                 f"is caught with power {power:g}")


def _t_tests(draws, target, *, alpha, power, name, entries, alternatives, found_warnings,
             model, identical):
    """Two-sided t-tests of each column's mean against `target`, Bonferroni; raise on failure.

    Returns the largest |t|, the critical value and the smallest error caught with `power`.
    ``identical()`` gives (cause, slip) when every draw is the same.
    """
    n, m = draws.shape
    if not np.isfinite(draws).all():
        bad = int(np.flatnonzero(~np.isfinite(draws).all(axis=0))[0])
        _fail(name, f"your draws of {entries[bad]} hold NaN or infinity.",
              _overflow_cause(draws, model), found_warnings, entry=entries[bad], found=np.nan,
              expected=target[bad], n_draws=n, n_tests=m, slip="non-finite values")
    z, mean, se = _t_scores(draws, target)
    crit = float(student_t.isf(alpha / (2 * m), n - 1))
    flat = np.flatnonzero(np.isinf(z))  # all draws equal, and not the exact value
    if len(flat) and (draws == draws[0]).all():
        i = flat[np.argmax(np.abs(mean[flat] - target[flat]))]
        matches = [alt for alt, _, values in alternatives()
                   if np.all(np.abs(_t_scores(draws, values)[0]) <= crit)]
        cause, slip = identical()
        if matches:
            cause += f" The values are {matches[0]}."
        _fail(name, f"all {n} draws are identical, and {len(flat)} of {m} entries differ from "
              f"their exact values: {entries[i]} is {mean[i]:.5g}, the exact value "
              f"{target[i]:.5g} (difference {mean[i] - target[i]:.3g}).", cause,
              found_warnings, entry=entries[i], found=mean[i], expected=target[i], n_draws=n,
              n_tests=m, slip=slip)
    bad = np.flatnonzero(np.isfinite(z) & (np.abs(z) > crit))
    if len(bad):
        worst = bad[np.argsort(-np.abs(z[bad]))][:3]
        lines = [f"{entries[i]} is off by {abs(z[i]):.3g} standard errors (mean {mean[i]:.5g} "
                 f"over {n} draws, standard error {se[i]:.2g}; the exact value is "
                 f"{target[i]:.5g}, difference {mean[i] - target[i]:.3g})" for i in worst]
        cause, slip = next(((f" Your draws match {alt}: a common cause is that {why}.", alt)
                            for alt, why, values in alternatives()
                            if np.all(np.abs(_t_scores(draws, values)[0]) <= crit)), ("", None))
        i = worst[0]
        _fail(name, "; ".join(lines) + f". {len(bad)} of {m} entries fail at alpha = "
              f"{alpha:g} (Bonferroni, |t| > {crit:.3g}).", cause, found_warnings,
              entry=entries[i], found=mean[i], expected=target[i], z=abs(z[i]),
              sd=se[i] * np.sqrt(n), n_draws=n, n_tests=m, slip=slip,
              errors=(np.abs(mean - target), se * np.sqrt(n), se * np.sqrt(n), alpha, True))
    if len(flat):
        i = flat[0]
        raise ValueError(
            f"{name}: the {n} draws of {', '.join(entries[j] for j in flat[:4])}"
            f"{' ...' if len(flat) > 4 else ''} are all equal ({entries[i]}: {mean[i]:.5g}; "
            f"the exact value is {target[i]:.5g}, difference {mean[i] - target[i]:.3g}), so "
            "their t-tests have a standard error of 0 and no level: draw more (an entry that "
            "takes one value with probability q repeats it in all n draws with probability "
            "q**n). If these entries of your code never vary, that is the defect.")
    detectable = float(np.max((crit + norm.ppf(power)) * se))
    return float(np.max(np.abs(z))), crit, detectable


def _mean_draws(n_draws):
    """`n_draws` for a t-test: an int of at least ``MIN_MEAN_DRAWS`` (ValueError naming it)."""
    n = check_positive_int(n_draws, "n_draws")
    if n < MIN_MEAN_DRAWS:
        raise ValueError(f"n_draws = {n} is too few for a t-test of means: the checks accept "
                         f"at least MIN_MEAN_DRAWS = {MIN_MEAN_DRAWS} (at 4 draws correct "
                         f"code fails on about 1 seed in 6)")
    return n


def _entry_names(grad):
    return [f"{field}[{', '.join(map(str, idx))}]" if idx else field
            for field, value in grad.fields.items() for idx in np.ndindex(value.shape)]


def _flat(x, like, what):
    """The fields of `x` (a tuple in the order of `like`'s fields, a dict or a Gradient), flat."""
    if isinstance(x, Gradient):
        fields = x.fields
    elif isinstance(x, dict):
        fields = x
    elif isinstance(x, (tuple, list)) and len(x) == len(like.fields):
        fields = dict(zip(like.fields, x))
    else:
        raise AssertionError(f"{what} must return a tuple {tuple(like.fields)}, a dict or a "
                             f"Gradient, got {type(x).__name__}")
    out = []
    for key, value in like.fields.items():
        if key not in fields:
            raise AssertionError(f"{what} returned no {key}")
        out.append(_array(fields[key], f"{what}'s {key}", value.shape).ravel())
    return np.concatenate(out)


def _target(model, data, target, offsets=None):
    """The expected gradient (centred with `offsets`), a phrase naming it, and the uncentred one."""
    if isinstance(target, str) and target == "exact":
        raw, phrase = exact.gradient(model, data), "the exact gradient"
    elif isinstance(target, Gradient):
        raw, phrase = target, "the expected value"
    elif isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        k = check_positive_int(int(target), "target")
        raw, phrase = transition.cd_expected_gradient(model, data, k), f"E[CD-{k}]"
    else:
        raise TypeError(f"target must be a number of CD steps k, 'exact' or a Gradient, got "
                        f"{target!r}")
    if offsets is None:
        return raw, phrase, raw
    return centred_gradient(raw, *offsets), f"{phrase}, centred", raw


def centred_gradient(gradient, visible_offset, hidden_offset):
    r"""The centred gradient of Melchior et al. (2016), in the model's own parameters.

    With offsets :math:`\mu` (visible) and :math:`\lambda` (hidden), the
    centred RBM's statistics are :math:`v - \mu` and :math:`h - \lambda`; its
    gradient, mapped back to :math:`(W, b, c)`, is

    .. math::
        \Delta W = \nabla W - \mu\, \nabla c^\top - \nabla b\, \lambda^\top, \qquad
        \Delta b = \nabla b - \Delta W \lambda, \qquad
        \Delta c = \nabla c - \Delta W^\top \mu,

    with :math:`\nabla` the ordinary gradient (data term minus model term).
    It is linear in the statistics, so the expected centred estimate is this
    map of the expected ordinary one, for offsets fixed during the step
    (e.g. the data mean and a running mean of the hidden means): pass it as
    the `target` of :func:`check_gradient_estimator`, or pass ``offsets=``.
    The formula is Melchior, Fischer and Wiskott, *How to center deep
    Boltzmann machines*, JMLR 17 (2016), written here from the paper's
    algorithm as read; it agrees with ``center_gradient`` of
    RestrictedBoltzmannMachines.jl (``src/train/centering.jl``).

    Parameters
    ----------
    gradient : Gradient
        With fields ``W`` of shape (n_visible, n_hidden), ``b`` and ``c``.
    visible_offset : array_like of shape (n_visible,)
    hidden_offset : array_like of shape (n_hidden,)

    Returns
    -------
    Gradient

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import Gradient
    >>> from rbm.testing import centred_gradient
    >>> g = Gradient(np.ones((2, 1)), np.array([0.5, 0.0]), np.array([0.25]))
    >>> centred_gradient(g, np.zeros(2), np.zeros(1)).W.tolist()  # zero offsets: unchanged
    [[1.0], [1.0]]
    >>> c = centred_gradient(g, np.array([0.5, 0.5]), np.array([0.5]))
    >>> c.W.ravel().tolist(), c.b.tolist(), c.c.tolist()
    ([0.625, 0.875], [0.1875, -0.4375], [-0.5])
    """
    if not isinstance(gradient, Gradient) or set(gradient.fields) != {"W", "b", "c"}:
        raise TypeError(f"gradient must be a Gradient with fields W, b, c, got "
                        f"{type(gradient).__name__}")
    n_visible, n_hidden = gradient.W.shape
    mu = _offset(visible_offset, "visible_offset", n_visible)
    lam = _offset(hidden_offset, "hidden_offset", n_hidden)
    dW = gradient.W - np.outer(mu, gradient.c) - np.outer(gradient.b, lam)
    return Gradient(dW, gradient.b - dW @ lam, gradient.c - dW.T @ mu)


def _offset(x, name, size):
    arr = np.asarray(x, dtype=float)
    if arr.shape != (size,) or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, of shape ({size},), got shape {arr.shape}")
    return arr


def _gradient_alternatives(model, data, expected, scale=1.0, offsets=None):
    """(what, cause, flat values) of known slips, for an expected gradient times `scale`."""
    n = len(data)
    centre = (lambda g: g) if offsets is None else (lambda g: centred_gradient(g, *offsets))
    out = [("minus the expected value", "the sign is reversed (model term minus data term, "
            "or an update subtracted)", -scale * expected.flat()),
           (f"{n} times the expected value", "the statistics are summed over the rows, not "
            "averaged", n * scale * expected.flat()),
           ("the exact gradient", "the negative phase samples the model (exact samples, or "
            "chains run to equilibrium), not CD-k",
            scale * centre(exact.gradient(model, data)).flat())]
    cd = transition.cd_expected_gradient(model, data, [1, 2, 3])
    out += [(f"E[CD-{j}]", f"the chains start at the data and move {j} step{'s' * (j > 1)}: "
             "persistent chains re-initialised, a loop off by one, or h_t drawn from "
             "v_{t-1} (a chain of k steps then moves (k + 1) // 2)", scale * centre(g).flat())
            for j, g in zip([1, 2, 3], cd)]
    if model.is_binary:
        paired = transition.cd1_variant_expected_gradient(model, data, negative_hidden="data")
        out.append(("E[CD-1 with v_1 paired with h_0]", "the negative statistic uses h_0, the "
                    "hidden sample of the data step, instead of p(h = 1 | v_1)",
                    scale * centre(paired).flat()))
    return out


def _centring_alternatives(raw, offsets, scale):
    """(what, cause, flat values) of the slips of a centred estimator, from the uncentred target."""
    if offsets is None:
        return []
    dW = centred_gradient(raw, *offsets).W
    return [("the uncentred expected value", "the offsets are not applied (an ordinary "
             "gradient)", scale * raw.flat()),
            ("the centred W with uncorrected biases", "the biases' updates leave out the "
             "corrections -dW lambda and -dW' mu", scale * Gradient(dW, raw.b, raw.c).flat())]


@_documented
def check_gradient_estimator(estimate, model, data, *, target=1, offsets=None, n_draws=1000,
                             alpha=1e-3, power=0.99, rng, name="gradient estimate",
                             label=None):
    r"""The mean of a gradient estimator's draws against its exact expectation, entry by entry.

    `estimate` is called `n_draws` times; each entry of the mean of its
    draws (``W``, ``b``, ``c``) is compared with the exact expected value by
    a two-sided t-test, Bonferroni over the entries.

    Parameters
    ----------
    estimate : callable
        ``estimate(data, rng) -> (dW, db, dc)`` in the ascent direction (data
        term minus model term), averaged over the rows of `data` (a
        :class:`~rbm.model.Gradient` or a dict of the fields also do).
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    target : int, "exact" or Gradient, default 1
        ``k``: the exact expectation of CD-k,
        :func:`rbm.transition.cd_expected_gradient`; ``"exact"``: the
        gradient of the mean log-likelihood (for an unbiased estimator); a
        Gradient: that value (e.g. :func:`expected_pcd_gradient`).
    offsets : tuple of array_like, optional
        ``(visible_offset, hidden_offset)`` for a centred estimator: the
        target is then :func:`centred_gradient` of the above.
    n_draws : int, default 1000
        At least ``MIN_MEAN_DRAWS``.
    alpha : float, default 1e-3
        Family-wise significance.
    power : float, default 0.99
        For the smallest error reported as detectable.
    rng : numpy.random.Generator or int
        Passed to `estimate` at every call.
    <name, label, returns, raises>
        Naming up to three entries, their error in standard errors, their
        exact values, and the known slip the draws match, if one does (the
        sign, a sum over rows, CD-j for another j, the exact gradient,
        ``v_1`` paired with ``h_0``; centring left out or its bias
        correction); draws identical at every call name a generator that
        does not advance.
    ValueError
        For bad arguments, fewer than ``MIN_MEAN_DRAWS`` draws, or an entry
        whose draws are all equal but not its exact value (no t-test).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_gradient_estimator
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> impl = NumpyRBM(W, b, c)
    >>> _ = check_gradient_estimator(lambda d, rng: impl.cd_gradient(d, 1, rng), (W, b, c),
    ...                              data, rng=0)
    verdict: gradient estimate: the mean of 1000 draws against E[CD-1]: largest |t| ...
    >>> wrong = NumpyRBM(W, b, c, bug="gradient sign")
    >>> check_gradient_estimator(lambda d, rng: wrong.cd_gradient(d, 1, rng), (W, b, c),
    ...                          data, rng=0)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: gradient estimate: ... is off by ... standard errors
    ... the sign is reversed ...
    """
    model, alpha, power, rng = _common(model, estimate, "estimate", alpha, power, rng)
    data = _data(model, data)
    n_draws = _mean_draws(n_draws)
    expected, phrase, raw = _target(model, data, target, offsets)

    def one_draw(r):
        return _flat(_guarded(estimate, "your estimator", data.copy(), r), expected,
                     "your estimator")

    def alternatives():
        return (_centring_alternatives(raw, offsets, 1.0)
                + _gradient_alternatives(model, data, expected, offsets=offsets))
    return _mean_check(one_draw, n_draws, rng, expected.flat(), model=model, alpha=alpha,
                       power=power, name=name, label=label, entries=_entry_names(expected),
                       alternatives=alternatives, caller="your estimator",
                       what=f"the mean of {n_draws} draws against {phrase}")


def expected_pcd_gradient(model, data, chains, *, k=1, chain_layer="visible"):
    r"""The exact expectation of a persistent-CD estimate, given the chains' current states.

    From each chain state the chain runs `k` Gibbs steps; the negative
    statistics are those of the visible states reached, with
    :math:`\mathbb E[h \mid v]` for the hidden units (the expectation is the
    same with sampled ``h``):

    .. math::
        \mathbb E[\Delta W] = \langle v\,\mathbb E[h \mid v]^\top\rangle_\text{data}
        - \sum_{v'} r(v')\, v'\,\mathbb E[h \mid v']^\top,
        \qquad r = \frac{1}{C}\sum_{c=1}^{C} \delta_{x_c} T^k,

    with ``T`` the Gibbs transition.  When the chains hold hidden states
    (scikit-learn keeps ``h_samples_``), the first step starts at
    :math:`p(v \mid h_c)`: :math:`r = \frac1C \sum_c p(\cdot \mid h_c)\, T^{k-1}`.

    Parameters
    ----------
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    chains : array_like of shape (n_chains, n_visible) or (n_chains, n_hidden)
        The chains' states before the call.
    k : int, default 1
    chain_layer : {"visible", "hidden"}
        The layer the chains' states belong to.

    Returns
    -------
    Gradient
        In the ascent direction.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import as_model, expected_pcd_gradient
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> from rbm import transition
    >>> g = expected_pcd_gradient((W, b, c), data, chains=data, k=2)
    >>> bool((g - transition.cd_expected_gradient(as_model((W, b, c)), data, 2)).max_abs()
    ...      < 1e-12)   # chains at the data: CD-k
    True
    """
    model = as_model(model)
    data = _data(model, data)
    k = check_positive_int(k, "k")
    if chain_layer not in ("visible", "hidden"):
        raise ValueError(f"chain_layer must be 'visible' or 'hidden', got {chain_layer!r}")
    layer = getattr(model, chain_layer)
    chains, _ = layer.check_states(chains, "chains", allow_1d=False)
    V = _all_states(model.visible)
    T = transition.gibbs_transition_matrix(model)
    if chain_layer == "visible":
        r = np.bincount(model.visible.index_of(chains), minlength=len(V)) / len(chains)
        steps = k
    else:
        r = _joint_probabilities(model, chains, "hidden")[0].mean(axis=0)
        steps = k - 1
    r = r @ np.linalg.matrix_power(T, steps)
    pos = exact.data_statistics(model, data)
    neg = row_statistics(model, V, weights=r, accurate=True)
    return pos - Gradient.from_fields(neg)


def check_training_step(step, model, data, *, learning_rate, target=1, offsets=None,
                        n_draws=1000, alpha=1e-3, power=0.99, rng, name="training step",
                        label=None):
    r"""One training update against the exact expected update, ``learning_rate`` times a gradient.

    `step` is called `n_draws` times from the same parameters; the mean of
    the updates (new minus old parameters) is compared entry by entry with
    ``learning_rate * E[estimate]`` by t-tests, Bonferroni over the entries.

    Parameters
    ----------
    step : callable
        ``step(W, b, c, data, rng) -> (W_new, b_new, c_new)``, with ``b`` and
        ``c`` the biases of `model`'s layers ({0,1} or ±1 units: the step
        knows which it trains); it must not keep state between calls (or restore it: for persistent chains, set
        them before each update and pass their expected gradient as `target`).
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    learning_rate : float
    target : int, "exact" or Gradient, default 1
        The expected gradient, as in :func:`check_gradient_estimator`.
    offsets : tuple of array_like, optional
        For a centred step, as in :func:`check_gradient_estimator`.
    n_draws, alpha, power, rng, name, label
        As in :func:`check_gradient_estimator`.

    Returns
    -------
    CheckResult

    Raises
    ------
    AssertionError
        Naming the worst entries and the slip the updates match, if one
        does (the learning rate applied twice or not at all, the sign...).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_training_step
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> def step(W, b, c, data, rng):
    ...     return NumpyRBM(W, b, c, bug="learning rate twice").cd_update(data, 0.5, 1, rng)
    >>> check_training_step(step, (W, b, c), data, learning_rate=0.5, rng=0)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: training step: ... the learning rate is applied twice ...
    """
    model, alpha, power, rng = _common(model, step, "step", alpha, power, rng)
    data = _data(model, data)
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    n_draws = _mean_draws(n_draws)
    expected, phrase, raw = _target(model, data, target, offsets)
    old = Gradient(model.W, model.b, model.c).flat()

    def one_draw(r):
        return _flat(_guarded(step, "your step", model.W.copy(), model.b.copy(), model.c.copy(),
                              data.copy(), r), expected, "your step") - old

    lr = learning_rate

    def alternatives():
        return [(f"learning_rate**2 times {phrase}", "the learning rate is applied twice (once "
                 "to the gradient, once to the update)", lr * lr * expected.flat()),
                (f"{phrase} without the learning rate", "the learning rate is not applied",
                 expected.flat())] + _centring_alternatives(raw, offsets, lr) \
            + _gradient_alternatives(model, data, expected, scale=lr, offsets=offsets)
    return _mean_check(one_draw, n_draws, rng, lr * expected.flat(), model=model,
                       alpha=alpha, power=power,
                       name=name, label=label, entries=_entry_names(expected),
                       alternatives=alternatives, caller="your step",
                       what=f"the mean of {n_draws} updates against learning_rate x {phrase}")



# Calls per batch size the persistent check accepts.  Its residuals change law from call to
# call; at 30 calls correct code failed on 3 of 200 seeds at alpha = 1e-3 (above the binomial
# range of alpha), at 100 within it (tests/test_testing_new_checks.py).
_MIN_CALLS = 100


@_documented
def check_persistent_estimator(estimate, chains, model, data, *, batch_size, n_passes=100, k=1,
                               chain_layer="visible", parameters=None, learning_rate=None,
                               alpha=1e-3, power=0.99, rng, name="persistent estimator",
                               label=None):
    r"""A stateful estimator driven across calls, each update against its exact expectation.

    Persistent CD keeps chains between calls, so one call cannot be
    repeated from the same state; a defect that shows only across calls (the
    chains reset when a batch is short, or never advanced) needs the object
    itself.  The check runs `n_passes` passes over `data` in batches of
    `batch_size` rows (the last batch of a pass is short when the rows are
    not a multiple of it), and before each call reads the chains the object
    holds.  Given them, the call's update has the exact expectation
    :math:`E_t` of :func:`expected_pcd_gradient`; the residuals
    :math:`g_t - E_t` have mean zero at every call whatever the chains did
    before (they form a martingale difference sequence), so their means are
    tested entry by entry by t-tests, separately for each batch size (the
    short batches on their own), Bonferroni over entries and batch sizes.

    Parameters
    ----------
    estimate : callable
        ``estimate(batch, rng) -> (dW, db, dc)``: one call of your object
        (it advances its chains), in the ascent direction, averaged over the
        rows of `batch`.
    chains : callable
        ``chains() -> (n_chains, n_units)``: the states your object's chains
        hold now (read before every call).
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`):
        the parameters your object holds (for a trainer, at the start).
    data : array_like of shape (n_samples, n_visible)
    batch_size : int
    n_passes : int, default 100
        Each batch size must occur in at least 100 calls.
    k : int, default 1
        Gibbs steps per call.
    chain_layer : {"visible", "hidden"}
        The layer the chains' states belong to.
    parameters : callable, optional
        For a trainer, whose parameters change at every call:
        ``parameters() -> (W, b, c)`` (or an RBM), read before every call;
        each expectation is taken at them.
    learning_rate : float, optional
        For a trainer: `estimate` returns the new parameters
        ``(W, b, c)``, and the update (new minus old) is compared with
        ``learning_rate`` times the expected gradient.
    alpha, power : float
    rng : numpy.random.Generator or int
        Passed to `estimate` at every call: one generator for the whole run.
    <name, label, returns, raises>
        Naming the batch size and entries whose residuals fail, and the
        slip they match (the chains restarted at the batch, so that the call
        is CD-k; the model term summed over the chains and divided by the
        batch's rows; the sign); a failure on the short batch alone says so.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_persistent_estimator
    >>> from rbm.reference_impl import PersistentCD
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 1.0]])
    >>> pcd = PersistentCD(W, b, c, chains=np.zeros((3, 2)))
    >>> _ = check_persistent_estimator(pcd.gradient, lambda: pcd.chains, (W, b, c), data,
    ...                                batch_size=3, rng=0)
    verdict: persistent estimator: 200 calls in batches of 3 and 2 rows: ...
    """
    model, alpha, power, rng = _common(model, estimate, "estimate", alpha, power, rng)
    _callable(chains, "chains")
    data = _data(model, data)
    batch_size = check_positive_int(batch_size, "batch_size")
    n_passes = check_positive_int(n_passes, "n_passes")
    k = check_positive_int(k, "k")
    if chain_layer not in ("visible", "hidden"):
        raise ValueError(f"chain_layer must be 'visible' or 'hidden', got {chain_layer!r}")
    batches = [data[i:i + batch_size] for i in range(0, len(data), batch_size)]
    sizes = sorted({len(batch) for batch in batches}, reverse=True)
    calls = {size: n_passes * sum(len(batch) == size for batch in batches) for size in sizes}
    if min(calls.values()) < _MIN_CALLS:
        raise ValueError(f"n_passes = {n_passes} gives batches of {min(calls, key=calls.get)} "
                         f"rows {min(calls.values())} calls, fewer than the {_MIN_CALLS} the "
                         f"check accepts")
    cd = {len(batch): None for batch in batches}
    residuals = {size: [] for size in sizes}
    restarted = {size: [] for size in sizes}
    weighted = {size: [] for size in sizes}  # the model term weighted by chains / rows
    n_chains = {}
    template = Gradient(model.W, model.b, model.c)
    if parameters is not None:
        _callable(parameters, "parameters")
    lr = 1.0 if learning_rate is None else check_positive_float(learning_rate, "learning_rate")
    found_warnings = []
    with _recorded(found_warnings):
        for _ in range(n_passes):
            for batch in batches:
                if parameters is not None:
                    model = as_model(_guarded(parameters, "your parameters"))
                    cd[len(batch)] = None
                held = _guarded(chains, "your chains")
                expected = lr * expected_pcd_gradient(model, batch, held, k=k,
                                                      chain_layer=chain_layer).flat()
                if cd[len(batch)] is None or len(batches) > len(sizes):
                    cd[len(batch)] = lr * transition.cd_expected_gradient(model, batch, k).flat()
                g = _flat(_guarded(estimate, "your estimator", batch.copy(), rng), template,
                          "your estimator")
                if learning_rate is not None:
                    g = g - Gradient(model.W, model.b, model.c).flat()
                residuals[len(batch)].append(g - expected)
                restarted[len(batch)].append(cd[len(batch)] - expected)
                data_term = lr * exact.data_statistics(model, batch).flat()
                n_chains[len(batch)] = len(held)
                weighted[len(batch)].append(
                    len(held) / len(batch) * (expected - data_term) + data_term - expected)
    names = _entry_names(template)
    results = []
    for size in sizes:
        draws, shift = np.stack(residuals[size]), np.mean(restarted[size], axis=0)
        entries = [f"the residual of {entry} (batches of {size} rows)" for entry in names]

        def alternatives(shift=shift, size=size):
            slips = [("the chains restarted at the batch", "the object restarts its chains at "
                      "the data in these calls (e.g. when the batch is shorter than the chains), "
                      "so the call is CD-k", shift)]
            if n_chains[size] != size:
                slips.append((f"the model term weighted by chains / rows "
                              f"({n_chains[size]}/{size})", f"the model term is summed over "
                              f"the {n_chains[size]} chains and divided by the {size} rows of "
                              f"the batch, not averaged over the chains",
                              np.mean(weighted[size], axis=0)))
            return slips
        try:
            results.append(_t_tests(draws, np.zeros(draws.shape[1]), alpha=alpha / len(sizes),
                                    power=power, name=name, entries=entries,
                                    alternatives=alternatives, found_warnings=found_warnings,
                                    model=model, identical=lambda: ("", None)))
        except CheckFailed as failure:
            if size == batch_size or failure.slip is not None:
                raise
            raise CheckFailed(  # the full batches passed: say where it fails
                f"{failure} The full batches of {batch_size} rows pass; this is the short "
                f"batch of {size} rows with {n_chains[size]} chains"
                + (" (a model term weighted by chains / rows was tested and does not fit)."
                   if n_chains[size] != size else "."), entry=failure.entry,
                found=failure.found, expected=failure.expected, z=failure.z, sd=failure.sd,
                n_draws=failure.n_draws, n_tests=failure.n_tests, slip=None,
                errors=failure._errors) from None
    largest = max(r[0] for r in results)
    detectable = max(r[2] for r in results)
    n_calls = sum(calls.values())
    sizes_text = " and ".join(map(str, sizes))
    return _pass(name, CheckResult(name, largest, results[0][1], len(names) * len(sizes),
                                   min(calls.values()), detectable), label,
                 f"{n_calls} calls in batches of {sizes_text} rows: the mean residual against "
                 f"the exact expectation from the chains held, largest |t| {largest:.2f} "
                 f"(alpha = {alpha:g}, Bonferroni over {len(names)} entries x {len(sizes)} "
                 f"batch sizes); an error of {detectable:.2g} in one entry is caught with "
                 f"power {power:g}")
