"""Probes run before the slip catalogue, and the rule that names a cause (public names,
private module).

A cause is named only when it is tested: the probes call the code again (the same input
twice, one row alone against the batch), fit what can be fitted (a temperature, a factor, a
weight decay), and a candidate that fits is named only when the test that separates it from
the others, the exact values included, has the check's power.  Otherwise the message says
that no tested cause fits and lists what was tested.  The float32 tolerance of the
deterministic checks, from the sizes of the summed terms, lives here too.
"""

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.stats import binom, norm

from rbm.model import RBM

from rbm.testing._shared import all_states, compare, joint_probabilities

# -- float32 without a twin --------------------------------------------------------------

EPS32 = float(np.finfo(np.float32).eps)
# The float32 tolerance of an entry is FLOAT32_FACTOR * EPS32 * (the sum of the magnitudes of
# the terms it is computed from, their first-order error propagation included), plus float32's
# smallest normal number (a tail probability below it underflows to 0).  Measured: correct
# float32 code (NumPy float32 arithmetic) stays within 0.99 of EPS32 * that sum for F, 0.91 for
# E[h | v], 0.30 for log Z and log p and 0.18 for the PL, on eleven models from 4 x 4 to
# 10 x 10 (weights 0.5 to 3 and x 40, hidden biases -5 to +10, |F| from 0.005 to 3e3); the
# factor 4 leaves a margin of 4 (tests/test_testing_probes.py re-derives the measure).
FLOAT32_FACTOR = 4
FLOAT32_TEXT = (f"{FLOAT32_FACTOR} float32 epsilons ({EPS32:.3g}) times the summed magnitudes "
                f"of the terms")


def _unit_terms(layer, I, S):
    """Per unit of `layer` given input `I` (bias excluded) and the magnitudes `S` of the
    summed inputs: |A(a)| + |mean| * S, the size of its log normaliser and its propagated error."""
    a = I + layer.bias
    A = np.logaddexp(0.0, a) if layer.values[0] == 0.0 else np.logaddexp(a, -a)
    return np.abs(A) + np.abs(layer.mean(I)) * S


def input_magnitudes(model, X, given):
    """|bias| + |x| @ |W|: the magnitudes summed into each unit's input of the other layer."""
    sx = np.abs(getattr(model, given).statistic(X))
    if given == "visible":
        return np.abs(model.hidden.bias) + sx @ np.abs(model.W)
    return np.abs(model.visible.bias) + sx @ np.abs(model.W.T)


def conditional_scale(model, X, given):
    """Per entry of E[y | x]: |mean| + Var * (summed input magnitudes)."""
    layer = model.hidden if given == "visible" else model.visible
    I = model.input_hidden(X) if given == "visible" else model.input_visible(X)
    m = layer.mean(I)
    low, high = layer.values
    return np.abs(m) + (m - low) * (high - m) * input_magnitudes(model, X, given)


def free_energy_scale(model, V):
    """Per row of `V`: sum |b_i v_i| + sum_j (|A_j| + |mean_j| * S_j)."""
    vis = np.abs(model.visible.statistic(V)) @ np.abs(model.visible.bias)
    S = input_magnitudes(model, V, "visible")
    return vis + _unit_terms(model.hidden, model.input_hidden(V), S).sum(axis=1)


def hidden_free_energy_scale(model, H):
    hid = np.abs(model.hidden.statistic(H)) @ np.abs(model.hidden.bias)
    S = input_magnitudes(model, H, "hidden")
    return hid + _unit_terms(model.visible, model.input_visible(H), S).sum(axis=1)


def log_partition_scale(model):
    """|log Z| + the larger of the p-weighted free-energy scales over v and over h."""
    from rbm import exact
    V, H = all_states(model.visible), all_states(model.hidden)
    log_z = exact.log_partition(model)
    p_v = np.exp(-model.free_energy(V) - log_z)
    p_h = np.exp(-model.free_energy_hidden(H) - log_z)
    return abs(log_z) + max(float(p_v @ free_energy_scale(model, V)),
                            float(p_h @ hidden_free_energy_scale(model, H)))


def joint_energy_scale(model, V, H):
    sv, sh = np.abs(model.visible.statistic(V)), np.abs(model.hidden.statistic(H))
    return (sv @ np.abs(model.visible.bias) + sh @ np.abs(model.hidden.bias)
            + np.einsum("ni,ij,nj->n", sv, np.abs(model.W), sh))


def pseudo_likelihood_scale(model, data):
    """Per row: |PL| + sum over units of the free-energy scales of v and of v with unit i flipped."""
    from rbm import pseudolikelihood
    pl = np.abs(pseudolikelihood.log_conditionals(model, data).sum(axis=1))
    out = pl.copy()
    low, high = model.visible.values
    for i in range(model.n_visible):
        flipped = data.copy()
        flipped[:, i] = low + high - flipped[:, i]
        out += free_energy_scale(model, data) + free_energy_scale(model, flipped)
    return out


def float32_allowance(scale):
    """FLOAT32_FACTOR * EPS32 * |scale| + float32's smallest normal number, entry by entry."""
    return (FLOAT32_FACTOR * EPS32 * np.abs(np.asarray(scale, dtype=float))
            + float(np.finfo(np.float32).tiny))


def valid_dtype(dtype):
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    return dtype


# -- deterministic probes ------------------------------------------------------------------

def _differ(a, b, tol, rtol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return True
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.any(~both_nan & ~(np.abs(a - b) <= tol + rtol * np.abs(b))))


def repeat_probe(again, values, tol, rtol, what):
    """(cause, slip) if a second call on the same input gave other values beyond the
    tolerance: the function is random, not the deterministic quantity; else None."""
    if not _differ(again, values, tol, rtol):
        return None
    gap = np.nanmax(np.abs(np.asarray(again, dtype=float) - values)) \
        if np.shape(again) == np.shape(values) else np.nan
    return (f" Two calls on the same input returned different values (by up to {gap:.3g}): "
            f"your {what} is random, not a deterministic function of its input (e.g. dropout "
            f"masks or noise drawn from a global generator). A deterministic function returns "
            f"the same values twice, so the difference is proof, whatever its size.",
            "not deterministic")


def row_probe(alone, rows, values, tol, rtol, what):
    """(cause, slip) if a row computed alone differs from the same row in the batch; else None.

    `alone` maps a row index to the values of that row computed on its own."""
    for i in rows:
        if _differ(alone[i], values[i], np.asarray(tol)[i] if np.ndim(tol) else tol, rtol):
            a, v = np.ravel(alone[i]), np.ravel(values[i])
            return (f" Row {i} computed alone gives {_short(a)}, within the batch "
                    f"{_short(v)}: one row's {what} depends on the other rows of the batch "
                    f"(e.g. a normalisation over the batch, or a statistic of the batch), so "
                    f"rows are not computed independently. Computed alone, each row must "
                    f"give what it gives in the batch; the difference is proof.",
                    "rows not independent")
    return None


def _short(x):
    return "(" + ", ".join(f"{v:.4g}" for v in np.ravel(x)[:4]) + (", ..." if np.size(x) > 4
                                                                    else "") + ")"


def tempered(model, beta):
    """The model at inverse temperature beta: every parameter times beta."""
    return RBM(beta * model.W, type(model.visible)(beta * model.visible.bias),
               type(model.hidden)(beta * model.hidden.bias))


def fit_beta(loss, lo=0.05, hi=20.0):
    """The beta in [lo, hi] minimising ``loss(beta)`` (a 1-D search on log beta)."""
    res = minimize_scalar(lambda t: loss(float(np.exp(t))), bounds=(np.log(lo), np.log(hi)),
                          method="bounded", options={"xatol": 1e-10})
    return float(np.exp(res.x))


def fitted_temperature(values, exact_of_beta, tol, rtol, allowance=0.0):
    """(beta, fits) for deterministic values: beta by least squares, fits within the tolerance."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        return None, False
    fitted = fit_beta(lambda b: float(np.sum((exact_of_beta(b) - values) ** 2)))
    for beta in (float(f"{fitted:.4g}"), fitted):  # a round value (T = 2) first
        target = exact_of_beta(beta)
        if np.all(np.abs(values - target) <= tol + rtol * np.abs(target) + allowance):
            return beta, abs(beta - 1) > 1e-6
    return fitted, False


def no_cause(tested):
    """The message when no tested cause fits: says so, and lists what was tested."""
    return " No tested cause fits. Tested: " + "; ".join(tested) + "."


# -- naming a cause among stochastic candidates ------------------------------------------------

def acceptance(n, p, level):
    """The counts [lo, hi] that the exact two-sided binomial test of p (doubled tail) accepts."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    lo = binom.ppf(level / 2, n, p)
    lo = np.where(binom.cdf(lo, n, p) <= level / 2, lo + 1, lo)
    lo_flip = binom.ppf(level / 2, n, 1 - p)
    lo_flip = np.where(binom.cdf(lo_flip, n, 1 - p) <= level / 2, lo_flip + 1, lo_flip)
    return lo, n - lo_flip


def binomial_separation(n, p_a, p_b, level):
    """A lower bound on the probability that the tests of law `p_a` reject when the draws follow
    `p_b`: the largest over the entries of the exact per-entry rejection probability."""
    lo, hi = acceptance(n, p_a, level)
    p_b = np.clip(p_b, 0.0, 1.0)
    accept = np.where(hi >= lo, binom.cdf(hi, n, p_b) - binom.cdf(lo - 1, n, p_b), 0.0)
    return float(np.max(1 - accept))


def t_separation(a, b, se, crit):
    """Power (normal approximation, each entry's standard error `se`) of the t-tests of mean `a`
    when the draws' means are `b`: the largest over the entries."""
    d = np.abs(np.asarray(a) - np.asarray(b))
    ok = se > 0
    if not ok.any():
        return float(np.any(d > 0))
    shift = d[ok] / se[ok]
    return float(np.max(norm.sf(crit - shift) + norm.cdf(-crit - shift)))


def name_candidate(fitting, candidates, separation, power):
    """The one candidate to name, or a sentence why none is, from those that fit.

    `candidates` is a list of (what, cause, values) or (what, cause, values, family) (the exact
    values first); `fitting` the indices that fit; ``separation(a, b)`` the power of the tests
    of `a`'s values against draws of `b`'s.  A candidate is named only if the tests of it
    reject every other candidate's values with at least `power`; candidates of one family
    (e.g. two places of a temperature) that all fit are named together as the family when
    each is separated from every candidate outside it.  Returns (cause, slip)."""
    if not fitting:
        return None, None

    def same(i, j):  # two names for one prediction (a bias that one conditional never uses)
        a, b = np.asarray(candidates[i][2], dtype=float), np.asarray(candidates[j][2], dtype=float)
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=0.0, atol=1e-12))
    fitting = [i for k, i in enumerate(fitting) if not any(same(i, j) for j in fitting[:k])]

    def family(i):
        return candidates[i][3] if len(candidates[i]) > 3 else None

    def weakest(i, others):
        return min(((separation(candidates[i][2], candidates[j][2]), candidates[j][0])
                    for j in others if not same(i, j)), default=(1.0, ""))
    if len(fitting) == 1:
        i = fitting[0]
        p, other = weakest(i, [j for j in range(len(candidates)) if j != i])
        what, why = candidates[i][:2]
        if p >= power:
            return (f" Your draws match {what}: a common cause is that {why}. (These draws tell "
                    f"{what} from every other tested cause, the exact values included, with "
                    f"power at least {power:g}.)", what)
    fam = {family(i) for i in fitting}
    if len(fam) == 1 and None not in fam:
        name = fam.pop()
        outside = [j for j in range(len(candidates)) if family(j) != name]
        worst = min(weakest(i, outside) for i in fitting)
        if worst[0] >= power:
            options = " or ".join(candidates[i][0] for i in fitting)
            return (f" Your draws match {name} ({options}): a common cause is that "
                    f"{candidates[fitting[0]][1]}. (These draws tell {name} from every other "
                    f"tested cause, the exact values included, with power at least {power:g}; "
                    f"not the forms of {name} from each other.)", name)
    if len(fitting) == 1:
        return (f" Your draws fit {what}, but these draws tell it from {other} with power only "
                f"{p:.2g} (< {power:g}): not rejecting it is not evidence for it, so no cause "
                f"is named.", None)
    names = ", ".join(candidates[i][0] for i in fitting)
    return (f" Your draws fit several tested causes ({names}), which these draws do not tell "
            f"apart with power {power:g}: naming one would be a guess.", None)


def first_cause(steps, tested=()):
    """Run the diagnosis `steps` in order: each ``step()`` returns (cause, slip, tested text);
    the first with a cause wins.  A cause without a slip (a float32 sentence) is followed by
    what else was tested; with none, the message says that no tested cause fits."""
    tested = list(tested)
    for step in steps:
        cause, slip, text = step()
        if cause:
            if slip is None and tested:
                cause += " Also tested, and none fits: " + "; ".join(tested) + "."
            return cause, slip
        if text:
            tested.append(text)
    return no_cause(tested), None


def probe_call(call, *args):
    """``call(*args)``, or None if the code under test raised (a probe never hides a failure)."""
    from rbm.testing.results import CheckFailed
    try:
        return call(*args)
    except (CheckFailed, AssertionError, ValueError, TypeError):
        return None


def repeat_and_row_steps(again, alone, rows, values, tol, rtol, what, per_row=True):
    """The two probes as steps: `again()` the values of a second call on the same input;
    `alone(i)` row i computed alone (None to skip the row probe)."""
    def repeat():
        second = again()
        if second is None:
            return None, None, "a second call on the same input (it raised)"
        found = repeat_probe(second, values, tol, rtol, what)
        return (found or (None, None)) + ("two calls on the same input (equal)",)

    def by_row():
        if alone is None or not per_row:
            return None, None, None
        rows_alone = {i: alone(i) for i in rows}
        rows_alone = {i: v for i, v in rows_alone.items() if v is not None}
        found = row_probe(rows_alone, list(rows_alone), values, tol, rtol, what) \
            if rows_alone else None
        text = (f"row{'s' * (len(rows) > 1)} {', '.join(map(str, rows))} computed alone "
                f"against the batch (equal)")
        return (found or (None, None)) + (text,)
    return [repeat, by_row]
