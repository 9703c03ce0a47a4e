r"""Checks of :math:`\log Z`: an exact value, and a stochastic estimate through
:math:`\mathbb E[\hat Z]/Z = 1`."""

import numpy as np
from scipy.stats import norm

from rbm import deep, exact
from rbm._validation import check_positive_float

from rbm.testing._shared import (as_array, as_model, documented, gap_text, is_network,
                                 valid_callable)
from rbm.testing.results import (CheckResult, call, fail, float64_rerun, guarded, passing,
                                 valid_common)
from rbm.testing._causes import generator_cause, overflow_cause, rounding_step
from rbm.testing._probes import (first_cause, float32_allowance, log_partition_scale,
                                 probe_call, repeat_probe, valid_dtype)
from rbm.testing._means import collect, mean_draws


@documented
def check_log_partition(log_partition, model, *, tol=1e-9, dtype="float64", float64=None,
                        name="log Z", label=None):
    r""":math:`\log Z = \log \sum_{v, h} e^{-E(v, h)}` against its exact value (no additive constant).

    Parameters
    ----------
    log_partition : callable
        ``log_partition() -> float``.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    tol : float, default 1e-9
        Absolute tolerance.
    dtype : {"float64", "float32"}, default "float64"
        ``"float32"`` adds 4 float32 epsilons times :math:`|\log Z|` plus the
        summed magnitudes of the free energies' terms, weighted by their
        probabilities (see :func:`check_free_energy`).
    <float64>
    <name, label, returns, raises>
        With the exact value and the difference, named when it is a known
        convention (a multiple of log 2, the sign), after a second call
        (a random function).

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
    valid_callable(log_partition, "log_partition")
    if float64 is not None:
        valid_callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    dtype = valid_dtype(dtype)
    log_z = exact.log_partition(model)
    allowed = tol + (float(float32_allowance(log_partition_scale(model)))
                     if dtype == "float32" else 0.0)
    found_warnings = []
    value = float(as_array(call(log_partition, found_warnings, what="your log_partition"),
                           "your log Z", ()))
    gap = value - log_z
    if not abs(gap) <= allowed:
        cause = overflow_cause(np.array([value]), model)
        slip = "non-finite values" if cause else None
        ratio = gap / np.log(2) if np.isfinite(gap) else 0.5
        second = None if cause else probe_call(
            lambda: float(as_array(call(log_partition, found_warnings), "log Z", ())))
        if second is not None and not abs(second - value) <= allowed:
            cause, slip = repeat_probe(np.array(second), np.array(value), allowed, 0.0, "log Z")
        elif not cause and abs(ratio - round(ratio)) < 1e-9 and round(ratio):
            cause = (f" The difference is {round(ratio)} log 2: a constant in the energy, or a "
                     "layer summed over a different set of states (±1 against {0,1}).")
            slip = f"{round(ratio)} log 2 off"
        elif not cause and abs(value + log_z) <= allowed:
            cause, slip = " Your value is -log Z: the sign is reversed.", "-log Z"
        elif not cause:
            cause = first_cause([lambda: (None, None, "two calls (equal); a multiple of log 2; "
                                          "the sign"),
                                 rounding_step(np.array(value), np.array(log_z), tol, 0.0,
                                                float64_rerun(float64, found_warnings, "log Z",
                                                              ()), dtype,
                                                float32_allowance(log_partition_scale(model)))
                                 ])[0]
        fail(name, "your value " + gap_text(value, log_z) + f" > {allowed:g}).", cause,
             found_warnings, entry="log Z", found=value, expected=log_z, slip=slip)
    return passing(name, CheckResult(name, 0.0, np.nan, 1, 0, tol), label,
                   f"{log_z:.6g} within {allowed:.3g} of the exact value")


# The distribution-free test of E[Z_hat / Z] <= 1 bets with these fractions (a mixture of
# test martingales): each is an e-value under any law of Z_hat with E[Z_hat] <= Z.
_BETS = (0.05, 0.1, 0.2, 0.4, 0.8)


@documented
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
    model : RBM, tuple, DBM or DBN
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`); or an
        :class:`rbm.deep.DBM` or :class:`rbm.deep.DBN` (exact :math:`\log Z` by
        :func:`rbm.deep.log_partition`), e.g. for :func:`rbm.deep.ais_log_partition`.
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
    model, alpha, power, rng = valid_common(model, estimate, "estimate", alpha, power, rng,
                                            networks=True)
    n = mean_draws(n_draws)
    log_z = (deep.log_partition if is_network(model) else exact.log_partition)(model)

    def one_draw(r):
        return as_array(guarded(estimate, "your estimator", r), "your estimator", ()).reshape(1)

    draws, found_warnings = collect(one_draw, n, rng)
    log_r = draws[:, 0] - log_z
    if not np.isfinite(log_r).all():
        fail(name, "your estimates hold NaN or infinity.", overflow_cause(log_r, model),
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
            return passing(name, CheckResult(name, 0.0, np.nan, 1, n, 0.0), label,
                         f"{n} draws, all equal to the exact log Z (a deterministic estimate)")
        cause, slip = generator_cause(one_draw, "your estimator")
        fail(name, f"all {n} draws are {draws[0, 0]:.10g}; the exact log Z is {log_z:.10g} "
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
        fail(name, f"{facts}; at alpha = {alpha:g}, " + " and ".join(failed) + ".", cause,
              found_warnings, entry="log E[Z_hat]/Z", found=log_mean_r + log_z, expected=log_z,
              z=abs(stat), sd=np.sqrt(s2), n_draws=n, slip=slip)
    detectable = float((crit + norm.ppf(power)) * se)
    return passing(name, CheckResult(name, abs(stat), crit, 1, n, detectable), label,
                 f"{n} draws: {facts}; passes the betting test of E[Z_hat]/Z <= 1 and the "
                 f"lognormal test at alpha = {alpha:g} (each at alpha/2); an error of "
                 f"{detectable:.2g} in log E[Z_hat]/Z is caught with power {power:g} (normal "
                 f"approximation)")
