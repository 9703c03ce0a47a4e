"""The diagnosis of failures (public names, private module): the catalogue of known slips
(model, sampler, transition, gradient) and the tested causes (float32 rounding, overflow,
an additive constant, a generator that does not advance)."""

import numpy as np

from rbm import exact, transition
from rbm.model import RBM, Gradient

from rbm._kernels import row_statistics
from rbm import deep
from rbm.testing._shared import (all_states, binomial_tests, compare, is_network,
                                 joint_probabilities)
from rbm.testing.results import recorded
from rbm.testing.gradients import centred_gradient, network_gradient
from rbm.testing._probes import (FLOAT32_TEXT, binomial_separation, fit_beta, name_candidate,
                                 no_cause, tempered)


def bits_hypotheses(model):
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


def _shared_uniform(mean, layer):
    """The law of a sampler that compares every unit with one shared uniform number."""
    low, high = layer.values
    p_high = (mean - low) / (high - low)
    Y = all_states(layer)
    out = np.zeros((len(mean), len(Y)))
    for row, p in enumerate(p_high):
        edges = np.concatenate([[0.0], np.sort(p), [1.0]])
        for u_low, u_high in zip(edges[:-1], edges[1:]):
            state = np.where(p > u_low, high, low)  # the units on for u in (u_low, u_high)
            out[row, layer.index_of(state[None, :])[0]] += u_high - u_low
    return out


def sampler_candidates(model, X, given):
    """(what, cause, law) of the sampler's known slips, and its law at a temperature."""
    out_layer = model.hidden if given == "visible" else model.visible
    candidates = [(f"the model with {hyp}", cause, joint_probabilities(alt, X, given)[0])
                  for hyp, cause, alt in bits_hypotheses(model)]
    mean = model.mean_h_given_v(X) if given == "visible" else model.mean_v_given_h(X)
    candidates.append(("one uniform number per row", "every unit of a row is compared with "
                       "the same uniform number, so the units are not drawn independently",
                       _shared_uniform(mean, out_layer)))
    return candidates


def counts_diagnosis(counts, n, exact_law, candidates, fits, alpha, power, tested=None):
    """(cause, slip) from the counts: the candidate to name under the separation rule of
    :func:`name_candidate`; the fitted ones (``fits``: (what, cause, law of beta)) are tried
    when no catalogued one fits; or that no tested cause fits, with what was tested."""
    candidates = list(candidates)
    tested = [c[0] for c in candidates] if tested is None else list(tested)

    def fitting():
        return [i for i, c in enumerate([None] + candidates)
                if i and not len(binomial_tests(counts, n, c[2], alpha)[3])]
    if not fitting():  # the fitted causes are tried when no catalogued one fits
        for what, why, law_of in fits:
            beta = fit_beta(lambda b: -float(np.sum(counts * np.log(np.clip(law_of(b), 1e-300,
                                                                              None)))))
            if abs(beta - 1) > 1e-3:
                candidates.append((what.format(beta=beta, T=1 / beta), why.format(
                    beta=beta, T=1 / beta), law_of(beta), "a temperature"))
            tested.append(what.split(" at inverse")[0] + f" at a temperature (beta fitted: "
                          f"{beta:.3g})")
    everything = [("the exact law", "", exact_law)] + candidates
    fitting = fitting()
    level = alpha / counts.size
    cause, slip = name_candidate(fitting, everything,
                                 lambda a, b: binomial_separation(n, a, b, level), power)
    if cause is None:
        cause = no_cause(tested)
    elif slip is None:
        cause += " Tested: " + "; ".join(tested) + "."
    return cause, slip


def sampler_diagnosis(model, X, given, counts, n, alpha, power=0.99):
    """The known slip whose law the counts pass and the others' fail, as a sentence."""
    exact_law = joint_probabilities(model, X, given)[0]
    fits = [("the law at inverse temperature {beta:.4g}", "the sampler draws at temperature "
             "T = {T:.4g} (its inputs divided by T)",
             lambda b: joint_probabilities(tempered(model, b), X, given)[0])]
    return counts_diagnosis(counts, n, exact_law, sampler_candidates(model, X, given), fits,
                            alpha, power)


def transition_hypotheses(model, T, k):
    """(what, cause, law) for the Gibbs step's known slips."""
    V = all_states(model.visible)
    A, H = joint_probabilities(model, V, "visible")
    B = joint_probabilities(model, H, "hidden")[0]
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
    for hyp, cause, alt in bits_hypotheses(model):
        A_alt = joint_probabilities(alt, V, "visible")[0]
        B_alt = joint_probabilities(alt, H, "hidden")[0]
        for what, law in ((f"the model with {hyp}", A_alt @ B_alt),
                          (f"p(h | v) of the model with {hyp}", A_alt @ B),
                          (f"p(v | h) of the model with {hyp}", A @ B_alt)):
            out.append((what, cause, np.linalg.matrix_power(law, k)))
    return out


def transition_fits(model, k):
    """(what, cause, law of beta) of a Gibbs chain at a temperature: both conditionals, or one."""
    V = all_states(model.visible)
    A, H = joint_probabilities(model, V, "visible")
    B = joint_probabilities(model, H, "hidden")[0]

    def law(beta, h_side, v_side):
        hot = tempered(model, beta)
        A_b = joint_probabilities(hot, V, "visible")[0] if h_side else A
        B_b = joint_probabilities(hot, H, "hidden")[0] if v_side else B
        return np.linalg.matrix_power(A_b @ B_b, k)
    return [("the chain at inverse temperature {beta:.4g}", "both conditionals are drawn at "
             "temperature T = {T:.4g} (inputs divided by T)", lambda b: law(b, True, True)),
            ("the chain with p(v | h) at inverse temperature {beta:.4g}", "p(v | h) is drawn at "
             "temperature T = {T:.4g}", lambda b: law(b, False, True)),
            ("the chain with p(h | v) at inverse temperature {beta:.4g}", "p(h | v) is drawn at "
             "temperature T = {T:.4g}", lambda b: law(b, True, False))]


def network_candidates(model, V):
    """(what, cause, law of v) of a stack's known slips: its lowest RBM alone."""
    if isinstance(model, deep.DBN):
        lowest, cause = model.rbms[0], ("your sampler draws from the first RBM alone: the top "
                                        "RBM's prior over h1 is left out")
    else:
        lowest = RBM(model.weights[0], model.layers[0], model.layers[1])
        cause = ("your sampler draws from the RBM of the first two layers: the layers above "
                 "are left out")
    return [("the first RBM's p(v)", cause, np.exp(exact.log_prob(lowest, V))[None, :])]


def stationary_diagnosis(model, counts, n_chains, alpha, reach, power=0.99):
    """The known slip whose stationary law the counts fit and the others' do not, as a
    sentence, or the burn-in, or that no tested cause fits."""
    V = all_states(model.visible)
    exact_law = np.exp(exact.log_prob(model, V))[None, :]
    candidates = [(f"the model with {hyp}", cause,
                   np.exp(exact.log_prob(alt, V))[None, :])
                  for hyp, cause, alt in bits_hypotheses(model)]
    fits = [("p(v) at inverse temperature {beta:.4g}", "the sampler's beta = 1 replica runs "
             "at temperature T = {T:.4g}",
             lambda b: np.exp(exact.log_prob(tempered(model, b), V))[None, :])]
    cause, slip = counts_diagnosis(counts, n_chains, exact_law, candidates, fits, alpha, power)
    if slip is None and reach > 1e-6:
        cause += (f" Block Gibbs from the worst start is still {reach:.2g} from p(v) after "
                  f"the burn-in: if your sampler mixes no faster, lengthen burn_in.")
    return cause, slip


# -- free energy, log Z, likelihoods ---------------------------------------------------

# float32 code rounds at each operation.  An entry's spacings are counted at the magnitude of
# the terms it sums (`scale`: for F(v), |E_v(v)| + |A_h(x)|; for log p(v), |F(v)| + |log Z|;
# for the PL, 2 max |F|), since a small result of large terms keeps their rounding.  Measured:
# correct float32 code (numpy float32 arithmetic) is within 3.3 such spacings of the float64
# values for F, 1.7 for log p, 1.9 for the PL and 3.7 for E[h | v], on seven to nine models from
# 4 x 4 to 16 x 20 (weights 0.5 to 3, hidden biases -5 to +10; the tests re-derive F and
# E[h | v] on seven up to 10 x 10); JAX's float32 free energy 1.44 on the chapter's model.
# Rounding is named within ROUNDING_SPACINGS (the largest, 3.7, times about 2); a gap past it
# is a defect.  Only values within _FLOAT32_SPACINGS of the exact ones are examined at all.
ROUNDING_SPACINGS = 8
#: The words by which a message names float32 rounding as the cause.
ROUNDING_NAMED = "the rounding of float32 arithmetic"
_FLOAT32_SPACINGS = 64
_EXP_OVERFLOW = {"float32": float(np.log(np.finfo(np.float32).max)),
                 "float64": float(np.log(np.finfo(np.float64).max))}
_WIDEST_FIRST = sorted(_EXP_OVERFLOW.items(), key=lambda item: -item[1])


def is_float32(values):
    """Whether the finite `values` are float32 numbers (test on the raw values, not a difference)."""
    values = np.asarray(values, dtype=float)
    return bool(np.isfinite(values).all()
                and np.array_equal(values.astype(np.float32).astype(float), values))


def float32_spacings(a, b, scale):
    """The largest |a - b| in float32 spacings at max(|scale|, 1), entry by entry."""
    spacing = np.spacing(np.maximum(np.abs(scale), 1.0).astype(np.float32)).astype(float)
    return float(np.max(np.abs(np.asarray(a, dtype=float) - b) / spacing))


def rounding_cause(values, exact_values, tol, rtol, rerun=None, *, raw=None, scale=None,
                   float32_ok=None):
    """A sentence about float32 rounding if the `raw` values (default `values`) are float32
    numbers and `values` are within ``_FLOAT32_SPACINGS`` float32 spacings of the exact values
    (counted at `scale`, the magnitude of the summed terms, default the exact values); else ''.

    Rounding is named only when it is tested: ``rerun()`` gives the same computation in float64
    (the check's `float64` argument); rounding is the cause only if those values pass and the
    float32 values are within ``ROUNDING_SPACINGS`` of them.  If the float32 values are near
    the exact ones and the counterpart is off, the counterpart is named; a shared defect only
    when float32 and float64 agree and both fail.  `float32_ok` (whether the values hold the
    float32 tolerance of ``dtype="float32"``) is stated with the untested sentence, so that
    float32-only code has a fix that needs no float64 counterpart.
    """
    values, exact_values = np.asarray(values, dtype=float), np.asarray(exact_values, dtype=float)
    scale = np.abs(exact_values) if scale is None else np.abs(np.asarray(scale, dtype=float))
    if not (is_float32(values if raw is None else raw) and np.isfinite(values).all()):
        return ""
    spacings = float32_spacings(values, exact_values, scale)
    if spacings > _FLOAT32_SPACINGS:
        return ""
    within = (f" Your values are float32 numbers, within {spacings:.3g} float32 spacings of "
              f"the exact values (spacings at the magnitude of the summed terms), for float64 "
              f"inputs (float64 in, float32 out: your code computes or returns in float32)")
    if rerun is None:
        dtype = ("" if float32_ok is None else
                 f"; or, if your code computes only in float32, pass dtype='float32' (a "
                 f"tolerance of {FLOAT32_TEXT}, which correct float32 code holds), which these "
                 + ("values hold" if float32_ok else
                    "values do not hold: they are further off than correct float32 code"))
        return (f"{within}; float32 rounding would fit, but it is not tested, and a defect "
                f"of this size fits too: pass float64= (the same computation in float64), and "
                f"the check names rounding only if that passes and your float32 values are "
                f"within {ROUNDING_SPACINGS} spacings of it{dtype}.")
    values64 = np.asarray(rerun(), dtype=float)
    if is_float32(values64):
        return (f"{within}; your float64 counterpart returns float32 numbers too (it does not "
                f"compute in float64), so float32 rounding is untested.")
    bad64, gap64 = compare(values64, exact_values, tol, rtol)
    apart = float32_spacings(values, values64, scale)
    gap = (f"your float32 and float64 values differ by up to {apart:.3g} float32 spacings "
           f"(correct float32 code stays within {ROUNDING_SPACINGS})")
    off64 = (f"your float64 counterpart is off ({len(bad64)} of {values64.size} entries "
             f"beyond the tolerance, largest difference {float(np.max(gap64)):.3g})")
    if not bad64 and apart <= ROUNDING_SPACINGS:
        rel = float(np.max(np.abs(values - exact_values) / np.maximum(np.abs(exact_values), 1.0)))
        return (f"{within}; your float64 counterpart passes and {gap}: the rounding of "
                f"float32 arithmetic (if float32 is meant, tol = rtol = {2 * rel:.1g} passes "
                f"them).")
    if not bad64:
        return (f"{within}, but your float64 counterpart passes and {gap}: a defect of your "
                f"float32 code that its float64 counterpart does not have, not rounding.")
    if spacings <= ROUNDING_SPACINGS < apart:
        return (f"{within}, as close as float32 rounding allows, but {off64}: the counterpart "
                f"is wrong or computes something else, so float32 rounding is untested.")
    if apart <= ROUNDING_SPACINGS:
        return (f"{within}, and {off64}; {gap}: a defect that float32 rounding does not "
                f"explain, shared by both (a looser tolerance would hide it).")
    return (f"{within}, and {off64}; {gap}: neither is the other rounded, so both have "
            f"defects (not float32 rounding).")


def _float32_text(values):
    return ("float32 rounding (your values are float64 numbers)"
            if not is_float32(values) else "float32 rounding")


def rounding_step(values, exact_values, tol, rtol, rerun, dtype, allowance, **kw):
    """The float32 step: with dtype="float32" the tolerance already allows rounding."""
    def step():
        if not is_float32(kw.get("raw", values)):
            return None, None, _float32_text(values)
        if dtype == "float32":
            return (f" Your values are float32 numbers, beyond the float32 tolerance ("
                    f"{FLOAT32_TEXT}, which correct float32 code holds): not float32 rounding.",
                    None, None)
        ok = not compare(values, exact_values, tol + allowance, rtol)[0]
        text = rounding_cause(values, exact_values, tol, rtol, rerun, float32_ok=ok, **kw)
        slip = "float32 rounding" if ROUNDING_NAMED in text else None
        return (text or None), slip, (None if text else "float32 rounding (beyond its reach)")
    return step


def log_likelihood_terms(model, data, log_z, per_row):
    """|F(v)| + |log Z| per row of `data` (their mean if not `per_row`): log p's terms."""
    terms = np.abs(model.free_energy(data)) + abs(log_z)
    return terms if per_row else np.array(terms.mean())


def pseudo_likelihood_terms(model, data, per_row):
    """2 max_v |F(v)| per row (their mean if not `per_row`): the PL's terms are differences of F
    (correct float32 code measured within 1.9 spacings at this scale, seven models)."""
    largest = float(np.max(np.abs(model.free_energy(all_states(model.visible)))))
    terms = np.full(len(data), 2.0 * largest)
    return terms if per_row else np.array(terms.mean())


def free_energy_terms(model, V):
    """|E_v(v)| + |A_h(input)| per row of `V`: the magnitude of F(v)'s two terms."""
    return (np.abs(model.visible.energy(V))
            + np.abs(model.hidden.log_normaliser(model.input_hidden(V))))


def softplus_cut(values, model, V, F, tol, rtol, allowed):
    """(cause, slip, tested text) of a softplus cut at a threshold: log(1 + e^x) written as x
    for x past a threshold t (torch's Softplus past 20, a cut at 10 in some libraries), which
    leaves out log(1 + e^-x) per hidden unit past t.  Every cut between two of the hidden
    inputs is tried; the cut is named only if F itself is beyond the tolerance (`allowed` +
    `rtol` |F|) at some state and every state is within it of F with a cut; the threshold is
    stated as the interval of every cut that fits.  {0,1} hidden units only."""
    if not (model.hidden.bits == (1.0, 0.0) and len(model.hidden.shape) == 1) \
            or not np.isfinite(values).all():
        return None, None, None
    x = model.input_hidden(V) + model.c
    dropped = np.log1p(np.exp(-np.abs(x)))  # log(1 + e^x) - x for x > 0
    cuts = np.unique(x[x > 0])
    room = allowed + rtol * np.abs(F)
    if np.all(np.abs(values - F) <= room):
        return None, None, None
    fits = []
    for i, t in enumerate(cuts):  # the cut drops the terms of the inputs at or past t
        cut = F + np.where(x >= t, dropped, 0.0).sum(axis=1)
        if np.all(np.abs(values - cut) <= room):
            fits.append((float(cuts[i - 1]) if i else 0.0, float(t),
                         float(np.max(np.abs(values - cut))), cut))
    if not fits:
        return None, None, "a softplus cut at a threshold (no threshold fits)"
    low, high = fits[0][0], fits[-1][1]
    best = min(fits, key=lambda fit: fit[2])[3]
    return (f" Your values are F with softplus(x) = log(1 + e^x) replaced by x for the hidden "
            f"inputs x at or past a threshold above {low:.4g}, at most {high:.4g} (fitted: "
            f"every state within the tolerance of F with such a cut, while F itself is beyond "
            f"it, so the comparison at every state tells the cut from the exact values; the "
            f"cut is worth up to {float(np.max(best - F)):.3g}): log(1 + e^-x) is left out per "
            f"hidden unit past the threshold (a softplus with a threshold, as "
            f"torch.nn.Softplus's 20; np.logaddexp(0, x) is exact)."
            + (" Your values are float32 numbers, and F is beyond the tolerance with float32 "
               "rounding allowed: not float32 rounding." if is_float32(values) else ""),
            f"softplus cut at a threshold in ({low:.4g}, {high:.4g}]", None)


def overflow_cause(values, model):
    """A sentence naming the overflows the model's inputs can cause, if `values` are not finite."""
    if np.isfinite(values).all() or is_network(model):
        return ""
    V = all_states(model.visible)
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


def minus_offset(values, exact_values, up_to_constant):
    """`values` less their median difference from `exact_values` if `up_to_constant`."""
    if up_to_constant and np.isfinite(values).all():
        return values - float(np.median(values - exact_values))
    return values


def generator_cause(one_draw, what):
    """Why every call gave the same value: tested by calling `one_draw` with fresh generators."""
    with recorded([]):
        a, b = (one_draw(np.random.default_rng(seed)) for seed in (1, 2))
    if not np.array_equal(a, b):
        return (f" Every call gave the same value, yet {what} gives other values with other "
                "generators: it does not advance the generator it is given (it copies it, "
                "or seeds a new one from it at every call).", "a generator that does not advance")
    return (f" Every call gave the same value, and {what} gives it with any generator: it "
            "ignores the generator it is given (it draws from one of its own, re-seeded at "
            "every call, or it is not random).", "a generator that does not advance")


def network_alternatives(model, data, expected):
    """(what, cause, flat values) of a DBM gradient estimator's known slips."""
    mean_field = network_gradient(deep.mean_field_statistics(model, data)).flat() \
        - network_gradient(deep.statistics(model)).flat()
    return [("minus the expected value", "the sign is reversed (model term minus data term, "
             "or an update subtracted)", -expected.flat()),
            ("the mean-field gradient", "the data term is the moments of the mean-field means "
             "(Salakhutdinov & Hinton 2009), not of the exact posterior: it is biased by "
             "the mean-field approximation", mean_field)]


def gradient_alternatives(model, data, expected, scale=1.0, offsets=None):
    """(what, cause, flat values) of known slips, for an expected gradient times `scale`."""
    n = len(data)
    centre = (lambda g: g) if offsets is None else (lambda g: centred_gradient(g, *offsets))
    out = [("minus the expected value", "the sign is reversed (model term minus data term, "
            "or an update subtracted)", -scale * expected.flat()),
           (f"{n} times the expected value", "the statistics are summed over the rows, not "
            "averaged", n * scale * expected.flat()),
           (f"-{n} times the expected value", "the sign is reversed and the statistics are "
            "summed over the rows (two slips at once)", -n * scale * expected.flat()),
           ("the exact gradient", "the negative phase samples the model (exact samples, or "
            "chains run to equilibrium), not CD-k",
            scale * centre(exact.gradient(model, data)).flat())]
    cd = transition.cd_expected_gradient(model, data, [1, 2, 3])
    out += [(f"E[CD-{j}]", f"the chains start at the data and move {j} step{'s' * (j > 1)}: "
             "persistent chains re-initialised, a loop off by one, or h_t drawn from "
             "v_{t-1} (a chain of k steps then moves (k + 1) // 2)", scale * centre(g).flat())
            for j, g in zip([1, 2, 3], cd)]
    if model.W.shape[0] == model.W.shape[1]:
        for factor, words in ((1, ""), (-1, "minus "), (n, f"{n} times ")):
            t = Gradient(expected.W.T, expected.b, expected.c)
            out.append((f"{words}the expected value with dW transposed", "dW is returned "
                        "transposed" + {1: "", -1: ", and its sign reversed",
                                        n: ", and summed over the rows"}[factor],
                        factor * scale * t.flat()))
    if model.is_binary:
        paired = transition.cd1_variant_expected_gradient(model, data, negative_hidden="data")
        out.append(("E[CD-1 with v_1 paired with h_0]", "the negative statistic uses h_0, the "
                    "hidden sample of the data step, instead of p(h = 1 | v_1)",
                    scale * centre(paired).flat()))
    return out


def tempered_cd_gradient(model, data, k, beta, first_h=True):
    """E[CD-k] when the chain's conditionals run at inverse temperature `beta` (with
    ``first_h=False`` the hidden sample of the data at beta = 1, as learnergy's temperature),
    the statistics taken at beta = 1."""
    V = all_states(model.visible)
    idx = model.visible.index_of(data)
    A, H = joint_probabilities(model, V, "visible")
    hot = tempered(model, beta)
    A_b = joint_probabilities(hot, V, "visible")[0]
    B_b = joint_probabilities(hot, H, "hidden")[0]
    r = ((A_b if first_h else A) @ B_b)[idx] @ np.linalg.matrix_power(A_b @ B_b, k - 1)
    neg = row_statistics(model, V, weights=r.mean(axis=0), accurate=True)
    return exact.data_statistics(model, data) - Gradient.from_fields(neg)


def gradient_fits(model, data, k, expected, scale, params=None):
    """``fits(mean, se)`` for :func:`t_tests`: a factor, a temperature of the chain (binary
    models, k of CD known), and with `params` (a training step) a weight decay on W only or on
    every parameter; each fitted to the draws' means, as (candidates, tested texts)."""
    target = scale * expected.flat()

    def fits(mean, se):
        w = np.where(se > 0, 1.0 / np.maximum(se, 1e-300) ** 2, 0.0)
        out, text = [], []
        denom = float(np.sum(w * target ** 2))
        if denom > 0:
            a = float(np.sum(w * mean * target) / denom)
            out.append((f"{a:.4g} times the expected value", "the estimate carries a factor "
                        f"{a:.4g} (a step size, a sum, a sign: fitted by least squares)",
                        a * target))
            text.append(f"a factor (fitted: {a:.3g})")
        if k is not None and model.is_binary:
            for first_h, words in ((True, "every conditional of the chain"),
                                   (False, "the chain after the data's hidden sample")):
                def law(b, first_h=first_h):
                    return scale * tempered_cd_gradient(model, data, k, b, first_h).flat()
                beta = fit_beta(lambda b: float(np.sum(w * (mean - law(b)) ** 2)), 0.1, 10.0)
                out.append((f"E[CD-{k}] with {words} at inverse temperature {beta:.4g}",
                             f"the negative chain samples at temperature T = {1 / beta:.4g} "
                             f"(its inputs divided by T)", law(beta),
                             "a temperature in the chain"))
                text.append(f"a temperature of {words} (fitted: beta {beta:.3g})")
        if params is not None:
            theta = np.asarray(params, dtype=float)
            n_w = model.W.size
            r = mean - target
            ww = w[:n_w] * theta[:n_w] ** 2
            if ww.sum() > 0:
                lam = -float(np.sum(w[:n_w] * r[:n_w] * theta[:n_w]) / (scale * ww.sum()))
                only_w = np.concatenate([theta[:n_w], np.zeros(len(theta) - n_w)])
                out += [(f"a weight decay {lam:.3g} on W and the biases", "the step decays "
                         "every parameter, the biases too (an optimiser's weight_decay "
                         "applied to all parameters)", target - scale * lam * theta),
                        (f"a weight decay {lam:.3g} on W only", "the step decays W (the usual "
                         "weight cost)", target - scale * lam * only_w)]
                text.append(f"a weight decay on W, or on every parameter (fitted: {lam:.3g})")
        return out, text
    return fits


def centring_alternatives(raw, offsets, scale):
    """(what, cause, flat values) of the slips of a centred estimator, from the uncentred target."""
    if offsets is None:
        return []
    dW = centred_gradient(raw, *offsets).W
    return [("the uncentred expected value", "the offsets are not applied (an ordinary "
             "gradient)", scale * raw.flat()),
            ("the centred W with uncorrected biases", "the biases' updates leave out the "
             "corrections -dW lambda and -dW' mu", scale * Gradient(dW, raw.b, raw.c).flat())]
