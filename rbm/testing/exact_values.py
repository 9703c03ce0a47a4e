"""Checks of deterministic values against exact ones: conditionals, free energy,
log-likelihood and pseudo-log-likelihood."""

import numpy as np

from rbm import exact, pseudolikelihood
from rbm._validation import check_positive_float, check_rng

from rbm.testing._shared import (all_states, as_array, as_model, compare, documented, gap_text,
                                 matches, state_text, valid_alpha, valid_callable, valid_data)
from rbm.testing.results import CheckResult, call, fail, float64_rerun, guarded, passing
from rbm.testing._causes import (ROUNDING_SPACINGS, bits_hypotheses, rounding_step,
                                 free_energy_terms, is_float32,
                                 log_likelihood_terms, minus_offset, overflow_cause,
                                 pseudo_likelihood_terms, rounding_cause, softplus_cut)
from rbm.testing._means import mean_check, mean_draws
from rbm.testing._probes import (FLOAT32_TEXT, conditional_scale, first_cause,
                                 fitted_temperature, float32_allowance, free_energy_scale,
                                 log_partition_scale, probe_call, pseudo_likelihood_scale,
                                 repeat_and_row_steps, tempered, valid_dtype,
                                 joint_energy_scale)


@documented
def check_conditionals(model, *, prob_h_given_v=None, prob_v_given_h=None, tol=1e-10,
                       rtol=1e-10, dtype="float64", float64=None, name="conditionals",
                       label=None):
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
        An entry passes if it is within ``tol + rtol * |exact|``.
    dtype : {"float64", "float32"}, default "float64"
        ``"float32"`` adds to each entry's tolerance 4 float32 epsilons times the
        summed magnitudes of the terms it is computed from (``FLOAT32_FACTOR``;
        correct float32 code is measured within one): for code that computes
        only in float32, with no float64 counterpart.
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
    dtype = valid_dtype(dtype)
    if prob_h_given_v is None and prob_v_given_h is None:
        raise ValueError("give prob_h_given_v, prob_v_given_h or both")
    float64 = {} if float64 is None else float64
    if not isinstance(float64, dict) or not set(float64) <= {"prob_h_given_v", "prob_v_given_h"}:
        raise ValueError("float64 must be a dict with the keys 'prob_h_given_v' and/or "
                         f"'prob_v_given_h', got {float64!r}")
    for key, f in float64.items():
        valid_callable(f, f"float64[{key!r}]")
    counts, n_entries = [], 0
    for f, given, out in ((prob_h_given_v, "visible", "hidden"),
                          (prob_v_given_h, "hidden", "visible")):
        if f is None:
            continue
        f_name = "prob_h_given_v" if given == "visible" else "prob_v_given_h"
        valid_callable(f, f_name)
        X = all_states(getattr(model, given))
        what = "E[h | v]" if given == "visible" else "E[v | h]"
        mean = model.mean_h_given_v if given == "visible" else model.mean_v_given_h
        found_warnings = []
        shape = (len(X), getattr(model, out).n_units)
        values = as_array(call(f, found_warnings, X.copy(), what=f"your {f_name}"), f"your {what}",
                          shape)
        exact_mean = mean(X)
        scale32 = conditional_scale(model, X, given)
        allowed = tol + (float32_allowance(scale32) if dtype == "float32" else 0.0)
        bad, _ = compare(values, exact_mean, allowed, rtol)
        if bad:
            row, unit = bad[0]
            cause, slip = _conditionals_diagnosis(
                model, f, X, given, values, exact_mean, tol, rtol, allowed, scale32, bad, dtype,
                found_warnings, float64_rerun(float64.get(f_name), found_warnings, what,
                                              values.shape, X), what, shape)
            symbol = "v" if given == "visible" else "h"
            entry = f"{what} at {symbol} = {state_text(X[row])}, unit {unit}"
            fail(name, f"{entry} " + gap_text(values[row, unit], exact_mean[row, unit], 6)
                 + f"; {len(bad)} of {values.size} entries beyond {_tolerance_text(tol, rtol, dtype)}"
                 f").", cause, found_warnings, entry=entry, found=values[row, unit],
                 expected=exact_mean[row, unit], n_tests=values.size, slip=slip)
        counts.append(str(len(X)))
        n_entries += values.size
    return passing(name, CheckResult(name, 0.0, np.nan, n_entries, 0, tol), label,
                   f"every entry within {_tolerance_text(tol, rtol, dtype)} "
                   f"({' + '.join(counts)} states)")


def _tolerance_text(tol, rtol, dtype):
    return (f"{tol:g}" + (f" + {rtol:g} |exact|" if rtol is not None else "")
            + (f" + {FLOAT32_TEXT}" if dtype == "float32" else ""))


def _rows_to_probe(bad):
    """The rows of the worst failing entries, at most 4, in order."""
    rows = []
    for index in bad:
        if index[0] not in rows:
            rows.append(int(index[0]))
        if len(rows) == 4:
            break
    return rows


def _conditionals_diagnosis(model, f, X, given, values, exact_mean, tol, rtol, allowed, scale32,
                            bad, dtype, found_warnings, rerun, what, shape):
    """(cause, slip) of failed conditionals: probes, the catalogue, a fitted temperature,
    float32 rounding, in this order; or that no tested cause fits."""
    layer = model.hidden if given == "visible" else model.visible
    I = model.input_hidden(X) if given == "visible" else model.input_visible(X)
    # candidate values are matched with float32's allowance when the values are float32 numbers
    loose = allowed if dtype == "float32" or not is_float32(values) \
        else tol + float32_allowance(scale32)

    def again():
        return probe_call(lambda: as_array(call(f, found_warnings, X.copy()), what, shape))

    def alone(i):
        return probe_call(lambda: as_array(call(f, found_warnings, X[i:i + 1].copy()), what,
                                           (1, shape[1]))[0])

    near_exact = not compare(values, exact_mean, loose, rtol)[0]  # within float32 rounding

    def catalogue():
        if near_exact:
            return None, None, None
        for hyp, cause, alt in bits_hypotheses(model):
            alt_mean = alt.mean_h_given_v(X) if given == "visible" else alt.mean_v_given_h(X)
            if compare(alt_mean, exact_mean, loose, rtol)[0] \
                    and not compare(values, alt_mean, loose, rtol)[0]:
                return (f" Your values match the model with {hyp}: a common cause is that "
                        f"{cause}.", f"the model with {hyp}", None)
        return None, None, "W negated, a bias left out or doubled" + (
            ", W transposed, the biases swapped" if model.W.shape[0] == model.W.shape[1]
            else "")

    def temperature():
        if near_exact:
            return None, None, None
        beta, fits = fitted_temperature(values, lambda b: layer.mean(I, b), 0.0, rtol,
                                        loose)
        if fits:
            return (f" Your values are the conditionals at {beta:.4g} times the inputs "
                    f"(fitted by least squares; every entry within the tolerance): a common "
                    f"cause is a temperature T = {1 / beta:.4g} (inputs divided by T).",
                    "a temperature", None)
        return None, None, ("a temperature (the best fitting beta, "
                            f"{beta:.3g}, does not fit)" if beta is not None else None)
    steps = repeat_and_row_steps(again, alone, _rows_to_probe(bad), values, loose, rtol,
                                 what) + [catalogue, temperature, rounding_step(
                                     values, exact_mean, tol, rtol, rerun, dtype,
                                     float32_allowance(scale32))]
    return first_cause(steps)



@documented
def check_free_energy(free_energy, model, *, up_to_constant=False, tol=1e-9, rtol=1e-12,
                      dtype="float64", float64=None, name="free energy", label=None):
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
    dtype : {"float64", "float32"}, default "float64"
        ``"float32"`` adds to each state's tolerance 4 float32 epsilons times
        :math:`\sum_i |b_i v_i| + \sum_j (|\operatorname{softplus}(x_j)| +
        \sigma(x_j) S_j)`, with :math:`S_j` the summed magnitudes of the input
        :math:`x_j` (``FLOAT32_FACTOR``; correct float32 code is measured within
        one): for code that computes only in float32, near :math:`F = 0` and
        with large weights alike.
    <float64>
    <name, label, returns, raises>
        Naming the worst state, and a cause, tested in this order: an
        overflow, two calls on the same input (a random function), the worst
        rows alone against the batch (rows not independent), a constant
        offset, the sign, a bias left out or doubled (and the catalogue of
        :func:`check_conditionals`), a fitted temperature, a softplus cut at a
        fitted threshold (:math:`\log(1 + e^x)` written as :math:`x` past it),
        float32 rounding (tested with `float64`); or that no tested cause
        fits, with what was tested.

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
    valid_callable(free_energy, "free_energy")
    if float64 is not None:
        valid_callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    rtol = check_positive_float(rtol, "rtol", allow_zero=True)
    dtype = valid_dtype(dtype)
    V = all_states(model.visible)
    F = model.free_energy(V)
    found_warnings = []
    values = as_array(call(free_energy, found_warnings, V.copy(), what="your free_energy"),
                      "your free energy", (len(V),))
    offset = 0.0
    if up_to_constant and np.isfinite(values).all():  # one state off stays one state off
        offset = float(np.median(values - F))
    scale32 = free_energy_scale(model, V)
    allowed = tol + (float32_allowance(scale32) if dtype == "float32" else 0.0)
    bad, _ = compare(values - offset, F, allowed, rtol)
    return _values_verdict(
        name, label, bad, values - offset, F, lambda i: f"F{state_text(V[i])}",
        f"{len(V)} states", f"every visible state ({len(V)})", tol, rtol,
        offset if up_to_constant else None, dtype, found_warnings,
        lambda: _free_energy_diagnosis(free_energy, model, V, F, values, offset, up_to_constant,
                                       tol, rtol, allowed, scale32, bad, dtype, float64,
                                       found_warnings))


def _free_energy_diagnosis(free_energy, model, V, F, values, offset, up_to_constant, tol, rtol,
                           allowed, scale32, bad, dtype, float64, found_warnings):
    """(cause, slip) of a failed free energy: an overflow, the probes, a constant, the sign,
    the catalogue (a bias doubled...), a fitted temperature, float32 rounding; or none fits."""
    overflow = overflow_cause(values, model)
    if overflow:
        return overflow, "non-finite values"
    loose = allowed if dtype == "float32" or not is_float32(values) \
        else tol + float32_allowance(scale32)
    shifted = values - offset
    near_exact = not compare(shifted, F, loose, rtol)[0]

    def again():
        return probe_call(lambda: as_array(call(free_energy, found_warnings, V.copy()), "F",
                                           (len(V),)))

    def alone(i):
        return probe_call(lambda: as_array(call(free_energy, found_warnings, V[i:i + 1].copy()),
                                           "F", (1,))[0])

    def constant():
        terms = free_energy_terms(model, V)
        noise = 0.0  # float32 values: allow float32 rounding around the constant
        if is_float32(values):
            noise = ROUNDING_SPACINGS * np.spacing(
                np.maximum(terms, 1.0).astype(np.float32)).astype(float)
        shift = float(np.median(values - F))
        if not up_to_constant and np.all(np.abs(values - shift - F)
                                         <= allowed + rtol * np.abs(F) + noise) \
                and abs(shift) > np.max(noise):  # a constant beyond rounding's reach
            within = " and float32 rounding" if is_float32(values) else ""
            return (f" Your values are F + {shift:.6g} at every state, within the "
                    f"tolerance{within}: an additive constant in your energy (pass "
                    f"up_to_constant=True if it is meant).", "F plus a constant", None)
        return None, None, "an additive constant" if not up_to_constant else None

    def catalogue():
        if near_exact:
            return None, None, None
        if not compare(shifted, -F, loose, rtol)[0]:
            return (" Your values are -F(v): the sign is reversed (log sum_h e^{-E} is -F).",
                    "-F", None)
        for hyp, cause, alt in bits_hypotheses(model):
            alt_f = alt.free_energy(V)
            if compare(alt_f, F, loose, rtol)[0] and not compare(shifted, alt_f, loose, rtol)[0]:
                return (f" Your values are the free energy of the model with {hyp}: a common "
                        f"cause is that {cause}.", f"the model with {hyp}", None)
        return None, None, ("the sign, W negated, a bias left out or doubled" + (
            ", W transposed, the biases swapped" if model.W.shape[0] == model.W.shape[1]
            else ""))

    def temperature():
        if near_exact:
            return None, None, None
        beta, fits = fitted_temperature(shifted, lambda b: tempered(model, b).free_energy(V),
                                        0.0, rtol, loose)
        if fits:
            return (f" Your values are the free energy of the model with every parameter "
                    f"times {beta:.4g} (fitted by least squares; every state within the "
                    f"tolerance): a temperature T = {1 / beta:.4g} in the energy.",
                    "a temperature", None)
        return None, None, (f"a temperature (the best fitting beta, {beta:.3g}, does not fit)"
                            if beta is not None else None)

    rerun = float64_rerun(float64, found_warnings, "free energy", (len(V),), V)
    rounding = rounding_step(shifted, F, tol, rtol, rerun and (
        lambda: minus_offset(rerun(), F, up_to_constant)), dtype, float32_allowance(scale32),
        raw=values, scale=free_energy_terms(model, V))
    def cut():
        if near_exact or up_to_constant:
            return None, None, None
        return softplus_cut(shifted, model, V, F, tol, rtol, loose)

    steps = repeat_and_row_steps(again, alone, _rows_to_probe(bad), values, loose, rtol,
                                 "free energy") + [constant, catalogue, temperature, cut,
                                                   rounding]
    return first_cause(steps)


def _values_verdict(name, label, bad, found, exact_values, entry, what, held, tol, rtol, offset,
                    dtype, found_warnings, diagnosis):
    """The end of a check of exact values at every state: its failure at the worst entry (with
    ``diagnosis()``'s cause and slip), or its verdict (`offset`: the constant allowed)."""
    if bad:
        (i,) = bad[0]
        cause, slip = diagnosis()
        fail(name, f"{entry(i)} " + gap_text(found[i], exact_values[i])
             + f"; {len(bad)} of {what} beyond {_tolerance_text(tol, rtol, dtype)}"
             + (f", after the constant {offset:.6g}" if offset is not None else "") + ").",
             cause, found_warnings, entry=entry(i), found=found[i], expected=exact_values[i],
             n_tests=int(what.split()[0]), slip=slip)
    text = f"{held} within {_tolerance_text(tol, rtol, dtype)}"
    if offset is not None:
        text += f", up to the constant {offset:.6g}"
    n = int(held.split("(")[1].rstrip(")"))
    return passing(name, CheckResult(name, 0.0, np.nan, n, 0, tol), label, text)


@documented
def check_log_likelihood(log_likelihood, model, data, *, tol=1e-9, dtype="float64",
                         float64=None, name="log-likelihood", label=None):
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
    dtype : {"float64", "float32"}, default "float64"
        ``"float32"`` adds 4 float32 epsilons times the summed magnitudes of
        the terms of :math:`F(v)` and :math:`\log Z` (see :func:`check_free_energy`).
    <float64>
    <name, label, returns, raises>
        With the exact value, and the convention it matches if any (the sum
        over rows, :math:`-F` without :math:`\log Z`, base 2), after the
        probes (two calls on the same input, rows alone against the batch).
    ValueError
        For bad arguments, or a return value that is neither one number nor
        one per row (a usage error, not a failed check).

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
    valid_callable(log_likelihood, "log_likelihood")
    if float64 is not None:
        valid_callable(float64, "float64")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    dtype = valid_dtype(dtype)
    data = valid_data(model, data)
    log_p = exact.log_prob(model, data)
    found_warnings = []
    values = as_array(call(log_likelihood, found_warnings, data.copy(),
                           what="your log_likelihood"), "your log-likelihood")
    if values.shape not in ((), (len(data),)):
        raise ValueError(f"{name}: log_likelihood returned shape {values.shape}; expected one "
                         f"number () or one per row ({len(data)},)")
    per_row = values.ndim == 1
    target = log_p if per_row else np.array(log_p.mean())
    scale32 = free_energy_scale(model, data) + log_partition_scale(model)
    scale32 = scale32 if per_row else np.array(scale32.mean())
    allowed = tol + (float32_allowance(scale32) if dtype == "float32" else 0.0)
    bad, _ = compare(values, target, allowed, 0.0)
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
        cause, slip = _row_values_diagnosis(
            log_likelihood, data, values, target, per_row, alternatives, model, tol, allowed,
            scale32, dtype, float64_rerun(float64, found_warnings, "log-likelihood",
                                          values.shape, data),
            log_likelihood_terms(model, data, log_z, per_row), found_warnings, "log-likelihood")
        where = f" of row {bad[0][0]}" if per_row else " (the mean over rows)"
        fail(name, f"your value{where} " + gap_text(values[bad[0]], target[bad[0]]) + ").", cause,
             found_warnings, entry=f"row {bad[0][0]}" if per_row else "mean over rows",
             found=values[bad[0]], expected=target[bad[0]], n_tests=values.size, slip=slip)
    what = f"{len(data)} rows" if per_row else f"the mean over {len(data)} rows"
    return passing(name, CheckResult(name, 0.0, np.nan, values.size, 0, tol), label,
                   f"{what} within {_tolerance_text(tol, None, dtype)} of the exact value")


def _row_values_diagnosis(f, data, values, target, per_row, alternatives, model, tol, allowed,
                          scale32, dtype, rerun, terms, found_warnings, what):
    """(cause, slip) of failed values per row (or their mean): an overflow, the probes, the
    conventions in `alternatives` ((what, values)), float32 rounding; or none fits."""
    overflow = overflow_cause(values, model)
    if overflow:
        return overflow, "non-finite values"
    loose = allowed if dtype == "float32" or not is_float32(values) \
        else tol + float32_allowance(scale32)

    def again():
        return probe_call(lambda: as_array(call(f, found_warnings, data.copy()), what,
                                           values.shape))

    def alone(i):
        return probe_call(lambda: as_array(call(f, found_warnings, data[i:i + 1].copy()), what,
                                           (1,))[0])

    def conventions():
        if not compare(values, target, loose, 0.0)[0]:
            return None, None, None
        found = matches(values, [(name, np.asarray(x, dtype=float))
                                 for name, x in alternatives], loose, 0.0)
        if found:
            return f" Your values are {found[0]}.", found[0], None
        return None, None, ", ".join(name for name, _ in alternatives)
    rounding = rounding_step(values, target, tol, 0.0, rerun, dtype, float32_allowance(scale32),
                              scale=terms)
    rows = _rows_to_probe(compare(values, target, loose, 0.0)[0] or [(0,)]) if per_row else []
    steps = repeat_and_row_steps(again, alone, rows, values, loose, 0.0, what, per_row) \
        + [conventions, rounding]
    return first_cause(steps)


_CONVENTIONS = ("sum", "mean")


@documented
def check_pseudo_likelihood(pseudo_likelihood, model, data, *, convention="sum", tol=1e-9,
                            dtype="float64", n_draws=None, alpha=1e-3, rng=None, float64=None,
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
    dtype : {"float64", "float32"}, default "float64"
        Without `n_draws`: ``"float32"`` adds 4 float32 epsilons times the
        summed magnitudes of the terms (the free energies of each row and of
        its one-bit flips; see :func:`check_free_energy`).
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
    ValueError
        For bad arguments, or a return value of the wrong shape: one number
        or one per row without `n_draws`, one per row with it (a usage
        error, not a failed check).

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
    valid_callable(pseudo_likelihood, "pseudo_likelihood")
    if float64 is not None:
        if n_draws is not None:
            raise ValueError("float64 is for a deterministic pseudo-likelihood (no n_draws): "
                             "the t-tests of draws do not name float32 rounding")
        valid_callable(float64, "float64")
    if convention not in _CONVENTIONS:
        raise ValueError(f"convention must be 'sum' or 'mean', got {convention!r}")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    dtype = valid_dtype(dtype)
    if dtype == "float32" and n_draws is not None:
        raise ValueError("dtype='float32' is for a deterministic pseudo-likelihood (no "
                         "n_draws): the t-tests of draws need no float32 tolerance")
    data = valid_data(model, data)
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
        values = as_array(call(pseudo_likelihood, found_warnings, data.copy(),
                              what="your pseudo_likelihood"),
                        "your pseudo-likelihood")
        per_row = values.ndim == 1
        if values.shape not in ((), (len(data),)):
            raise ValueError(f"{name}: pseudo_likelihood returned shape {values.shape}; "
                             f"expected one number () or one per row ({len(data)},)")
        goal = target if per_row else np.array(target.mean())
        scale32 = pseudo_likelihood_scale(model, data) * scales[convention]
        scale32 = scale32 if per_row else np.array(scale32.mean())
        allowed = tol + (float32_allowance(scale32) if dtype == "float32" else 0.0)
        bad, _ = compare(values, goal, allowed, 0.0)
        if bad:
            alts = [(what, x if per_row else np.array(x.mean())) for what, _, x in alternatives]
            cause, slip = _row_values_diagnosis(
                pseudo_likelihood, data, values, goal, per_row, alts, model, tol, allowed,
                scale32, dtype, float64_rerun(float64, found_warnings, "pseudo-likelihood",
                                              values.shape, data),
                pseudo_likelihood_terms(model, data, per_row), found_warnings,
                "pseudo-likelihood")
            where = f"row {bad[0][0]}" if per_row else "the mean over rows"
            fail(name, f"your value for {where} ({conv}) " + gap_text(values[bad[0]], goal[bad[0]])
                 + ").", cause, found_warnings, entry=where, found=values[bad[0]],
                 expected=goal[bad[0]], n_tests=values.size, slip=slip)
        what = f"{len(data)} rows" if per_row else f"the mean over {len(data)} rows"
        return passing(name, CheckResult(name, 0.0, np.nan, values.size, 0, tol), label,
                       f"{what} ({conv}) within {_tolerance_text(tol, None, dtype)} of the exact "
                       f"value")
    if rng is None:
        raise TypeError("rng is needed with n_draws: a numpy.random.Generator or an int seed")
    n_draws = mean_draws(n_draws)
    alpha = valid_alpha(alpha)
    rng = check_rng(rng)

    def one_draw(r):
        values = as_array(guarded(pseudo_likelihood, "your pseudo_likelihood", data.copy(), r),
                          "your pseudo-likelihood")
        if values.shape != (len(data),):  # a usage error: the t-tests need one draw per row
            raise ValueError(
                f"{name}: with n_draws, pseudo_likelihood must return one value per row, shape "
                f"({len(data)},); it returned shape {values.shape}"
                + (" (one number: a mean over the rows? call it on each row, or check its "
                   "mean without n_draws)" if values.shape == () else ""))
        return values

    return mean_check(one_draw, n_draws, rng, target, model=model, alpha=alpha, power=0.99,
                       name=name, label=label, entries=[f"row {i}" for i in range(len(data))],
                       alternatives=lambda: alternatives, caller="your pseudo_likelihood",
                       what=f"the mean of {n_draws} draws per row ({conv})")


# The joint energy is called on pairs of states in blocks of at most this many rows.
ENERGY_BLOCK = 1 << 16


def all_pairs(model):
    """Every pair of states ``(v, h)``, as two arrays of ``2**(n_visible + n_hidden)`` rows."""
    V, H = all_states(model.visible), all_states(model.hidden)
    return np.repeat(V, len(H), axis=0), np.tile(H, (len(V), 1))


def blocked_energy(energy, found_warnings, V, H, what):
    """``energy(v, h)`` over the rows of `V` and `H`, called in blocks of ``ENERGY_BLOCK``."""
    out = [as_array(call(energy, found_warnings, V[i:i + ENERGY_BLOCK].copy(),
                         H[i:i + ENERGY_BLOCK].copy(), what=what),
                    what, (len(V[i:i + ENERGY_BLOCK]),))
           for i in range(0, len(V), ENERGY_BLOCK)]
    return np.concatenate(out)


@documented
def check_joint_energy(energy, model, *, up_to_constant=False, tol=1e-9, rtol=1e-12,
                       dtype="float64", name="joint energy", label=None):
    r"""A joint energy :math:`E(v, h) = -b^\top v - c^\top h - v^\top W h` at every pair of states.

    For libraries that expose only :math:`E(v, h)`:
    :func:`free_energy_from_energy` builds the free energy from it for
    :func:`check_free_energy`.

    Parameters
    ----------
    energy : callable
        ``energy(v, h) -> (n,)`` for rows of visible and hidden states (the
        same number of rows), called in blocks of at most ``2**16`` rows.
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    up_to_constant : bool, default False
        Accept :math:`E + \text{const}`; the constant is reported.
    tol, rtol : float
        An entry passes within ``tol + rtol * |exact|``.
    dtype : {"float64", "float32"}, default "float64"
        ``"float32"`` adds 4 float32 epsilons times
        :math:`\sum_i |b_i v_i| + \sum_j |c_j h_j| + \sum_{ij} |v_i W_{ij} h_j|`.
    <name, label, returns, raises>
        Naming the worst pair, and the slip the values match, if one does
        (after two calls on the same input: a random function; then the sign
        of the whole energy or of the coupling, a bias left out or doubled,
        ``W`` transposed, the biases swapped, an additive constant), or that
        none of them fits.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_joint_energy
    >>> W = np.array([[1.0, -2.0], [0.5, 1.0]])
    >>> b, c = np.array([0.1, -0.3]), np.array([0.2, 0.0])
    >>> def energy(v, h):
    ...     return -v @ b - h @ c - np.einsum("ni,ij,nj->n", v, W, h)
    >>> _ = check_joint_energy(energy, (W, b, c))
    verdict: joint energy: every pair of states (16) within 1e-09 + 1e-12 |exact|
    >>> no_c = lambda v, h: -v @ b - np.einsum("ni,ij,nj->n", v, W, h)
    >>> check_joint_energy(no_c, (W, b, c))
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: joint energy: E(...) is ... the hidden bias c is left out.
    """
    model = as_model(model)
    valid_callable(energy, "energy")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    rtol = check_positive_float(rtol, "rtol", allow_zero=True)
    dtype = valid_dtype(dtype)
    V, H = all_pairs(model)
    E = model.energy(V, H)
    found_warnings = []
    values = blocked_energy(energy, found_warnings, V, H, "your energy")
    offset = 0.0
    if up_to_constant and np.isfinite(values).all():
        offset = float(np.median(values - E))
    scale32 = joint_energy_scale(model, V, H)
    allowed = tol + (float32_allowance(scale32) if dtype == "float32" else 0.0)
    bad, _ = compare(values - offset, E, allowed, rtol)
    if bad:
        loose = allowed if dtype == "float32" or not is_float32(values) \
            else tol + float32_allowance(scale32)

        def again():
            return probe_call(lambda: blocked_energy(energy, found_warnings, V, H, "E"))

        def catalogue():
            candidates = [("-E: the sign of the whole energy is reversed", -E)]
            candidates += [(f"the energy of the model with {hyp}: {cause}", alt.energy(V, H))
                           for hyp, cause, alt in bits_hypotheses(model)]
            found = matches(values - offset, candidates, loose, rtol)
            shift = float(np.median(values - E)) if np.isfinite(values).all() else 0.0
            if found:
                return f" Your values are {found[0]}.", found[0].split(":")[0], None
            if not up_to_constant and shift and not compare(values - shift, E, loose, rtol)[0]:
                return (f" Your values are E + {shift:.6g} at every pair, within the "
                        "tolerance: an additive constant (pass up_to_constant=True if it is "
                        "meant).", "E plus a constant", None)
            return None, None, ("the sign of the energy, W negated, a bias left out or "
                                "doubled, W transposed and the biases swapped when W is "
                                "square, an additive constant")
        diagnosis = first_cause(repeat_and_row_steps(again, None, [], values, loose, rtol,
                                                     "energy") + [catalogue])
    return _values_verdict(
        name, label, bad, values - offset, E,
        lambda i: f"E({state_text(V[i])[1:-1]}; {state_text(H[i])[1:-1]})", f"{len(E)} pairs",
        f"every pair of states ({len(E)})", tol, rtol, offset if up_to_constant else None, dtype,
        found_warnings, lambda: diagnosis)
