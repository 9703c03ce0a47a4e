"""t-tests of means of draws (public names, private module): gradient estimates, training
steps, stochastic scores."""

import numpy as np
from scipy.stats import norm, t as student_t

from rbm._validation import check_positive_int

from rbm.testing._shared import MIN_MEAN_DRAWS
from rbm.testing.results import CheckResult, fail, passing, recorded
from rbm.testing._causes import generator_cause, overflow_cause
from rbm.testing._probes import name_candidate, no_cause, probe_call, t_separation


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


def collect(one_draw, n_draws, rng):
    """`n_draws` calls of ``one_draw(rng)`` stacked, and the warnings they raised."""
    found_warnings = []
    with recorded(found_warnings):
        draws = np.stack([one_draw(rng) for _ in range(n_draws)])
    return draws, found_warnings


def mean_check(one_draw, n_draws, rng, target, *, model, alpha, power, name, label, entries,
                alternatives, what, caller, fits=None):
    """Per-entry t-tests of the mean of `n_draws` draws against `target`, Bonferroni.

    ``one_draw(rng)`` is one flat draw of the code under test; `alternatives` is called on
    failure only and returns (what, cause, values) of known slips.
    """
    draws, found_warnings = collect(one_draw, n_draws, rng)
    largest, crit, detectable = t_tests(
        draws, target, alpha=alpha, power=power, name=name, entries=entries,
        alternatives=alternatives, found_warnings=found_warnings, model=model,
        identical=lambda: generator_cause(one_draw, caller), fits=fits,
        probe=lambda: same_generator_probe(one_draw, caller))
    n, m = draws.shape
    return passing(name, CheckResult(name, largest, crit, m, n, detectable), label,
                 f"{what}: largest |t| {largest:.2f} <= {crit:.2f} (alpha = {alpha:g}, "
                 f"Bonferroni over {m} entries); an error of {detectable:.2g} in one entry "
                 f"is caught with power {power:g}")


def t_tests(draws, target, *, alpha, power, name, entries, alternatives, found_warnings,
            model, identical, fits=None, probe=None):
    """Two-sided t-tests of each column's mean against `target`, Bonferroni; raise on failure.

    Returns the largest |t|, the critical value and the smallest error caught with `power`.
    ``identical()`` gives (cause, slip) when every draw is the same; on failure the known
    slips of ``alternatives()`` are tried first, then those that ``fits(mean, se)`` fits to
    the draws (a factor, a temperature, a weight decay), and one is named only under the
    separation rule of :func:`name_candidate`.
    """
    n, m = draws.shape
    if not np.isfinite(draws).all():
        bad = int(np.flatnonzero(~np.isfinite(draws).all(axis=0))[0])
        fail(name, f"your draws of {entries[bad]} hold NaN or infinity.",
              overflow_cause(draws, model), found_warnings, entry=entries[bad], found=np.nan,
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
        fail(name, f"all {n} draws are identical, and {len(flat)} of {m} entries differ from "
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
        cause, slip = _named(draws, target, mean, se, crit, power, alternatives(), fits)
        cause = (probe() if probe is not None else "") + cause
        i = worst[0]
        fail(name, "; ".join(lines) + f". {len(bad)} of {m} entries fail at alpha = "
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


def mean_draws(n_draws):
    """`n_draws` for a t-test: an int of at least ``MIN_MEAN_DRAWS`` (ValueError naming it)."""
    n = check_positive_int(n_draws, "n_draws")
    if n < MIN_MEAN_DRAWS:
        raise ValueError(f"n_draws = {n} is too few for a t-test of means: the checks accept "
                         f"at least MIN_MEAN_DRAWS = {MIN_MEAN_DRAWS} (at 4 draws correct "
                         f"code fails on about 1 seed in 6)")
    return n


def _named(draws, target, mean, se, crit, power, catalogue, fits):
    """(cause, slip): the catalogued slips first, then the fitted ones, named under the
    separation rule; or that no tested cause fits, with what was tested."""
    def fitting(cands):
        return [i for i, c in enumerate(cands, start=1)
                if np.all(np.abs(_t_scores(draws, c[2])[0]) <= crit)]

    def separation(a, b):
        return t_separation(a, b, se, crit)
    tested = [c[0] for c in catalogue]
    candidates = list(catalogue)
    if not fitting(candidates) and fits is not None:
        fitted, fitted_text = fits(mean, se)
        candidates += fitted
        tested += fitted_text
    found = fitting(candidates)
    everything = [("the exact values", "", target)] + candidates
    cause, slip = name_candidate(found, everything, separation, power)
    if cause is None:
        return no_cause(tested) + " (t-tests at the check's level.)" if tested else "", None
    if slip is None:
        cause += " Tested: " + "; ".join(tested) + "."
    return cause, slip


def same_generator_probe(one_draw, what):
    """A sentence if two draws with generators in the same state differ (the code draws from a
    generator it is not given: dropout masks, a library's global generator); else ''."""
    with recorded([]):
        first = probe_call(lambda: one_draw(np.random.default_rng(20261129)))
        second = probe_call(lambda: one_draw(np.random.default_rng(20261129)))
    if first is None or second is None or np.array_equal(first, second):
        return ""
    return (f" Two calls of {what} with generators in the same state gave different draws: it "
            f"also draws from a generator it is not given (e.g. dropout masks or noise from a "
            f"global generator); if those draws change its expectation (masks do), that is the "
            f"cause.")
