"""Checks of samplers by exact binomial tests: conditional samplers, the Gibbs step and
the long-run law of a sampler that carries state."""

import numpy as np
from scipy.stats import norm

from rbm import deep, exact, transition
from rbm._validation import check_positive_int

from rbm.testing._shared import (all_states, as_array, binomial_tests, documented, is_network,
                                 joint_probabilities, state_text, visible_layer)
from rbm.testing.power import sized_draws
from rbm.testing._probes import probe_call
from rbm.testing.results import CheckResult, call, fail, passing, valid_common
from rbm.testing._causes import (counts_diagnosis, network_candidates, sampler_diagnosis,
                                 stationary_diagnosis, transition_fits, transition_hypotheses)


def _frequency_errors(freq, p, alpha):
    """Per-entry errors and spreads (under the bug, under the null) of failed frequencies."""
    return (np.abs(freq - p).ravel(), np.sqrt(freq * (1 - freq)).ravel(),
            np.sqrt(p * (1 - p)).ravel(), alpha, False)


@documented
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
    verdict: sampler: 16 probabilities of h | v, 4007 draws per v: the smallest ...
    """
    model, alpha, power, rng = valid_common(model, sample, "sample", alpha, power, rng)
    if given not in ("visible", "hidden"):
        raise ValueError(f"given must be 'visible' or 'hidden', got {given!r}")
    X = all_states(getattr(model, given))
    P, Y = joint_probabilities(model, X, given)
    n_tests = P.size
    n_draws, detectable = sized_draws(n_draws, "n_draws", effect, alpha, power, n_tests, name)
    out_layer = model.hidden if given == "visible" else model.visible
    x_sym, y_sym = ("v", "h") if given == "visible" else ("h", "v")
    return _frequency_check(
        sample, (np.repeat(X, n_draws, axis=0), rng), "your sampler", out_layer, P,
        n_draws, alpha=alpha, name=name, label=label,
        entry=lambda i, j: f"p({y_sym} = {state_text(Y[j])} | {x_sym} = {state_text(X[i])})",
        diagnose=lambda counts: sampler_diagnosis(model, X, given, counts, n_draws, alpha,
                                                  power),
        passed=f"{n_tests} probabilities of {y_sym} | {x_sym}, {n_draws} draws per {x_sym}",
        power_text=f"an error of {detectable:.3f} in a probability of 1/2 is caught with "
                   f"power {power:g} (exact, at p = 1/2)", detectable=detectable)


def _frequency_check(f, args, what, layer, P, n_draws, *, alpha, name, label, entry, diagnose,
                     passed, power_text, detectable):
    """Counts of the states of `layer` that ``f(*args)`` returns, row block by row block (a
    block of `n_draws` rows per row of `P`), against `P` by exact binomial tests, Bonferroni.
    The one failure of the sampling checks names the worst failing entry and the diagnosis."""
    found_warnings = []
    draws = as_array(call(f, found_warnings, *args, what=what), what,
                   (len(P) * n_draws, layer.n_units))
    if not np.isin(draws, layer.values).all():
        fail(name, f"{what} returned values other than {layer.values.tolist()}.", "",
              found_warnings, entry="values", found=np.nan, expected=np.nan)
    index = layer.index_of(draws).reshape(len(P), n_draws)
    counts = np.stack([np.bincount(row, minlength=P.shape[1]) for row in index])
    z, p_value, level, bad = binomial_tests(counts, n_draws, P, alpha)
    if len(bad):
        i, j = max(map(tuple, bad), key=lambda ij: abs(z[ij]))  # the worst failing entry
        cause, slip = diagnose(counts)
        cause = _generator_probe(f, args, what) + cause
        freq = counts[i, j] / n_draws
        fail(name, f"{entry(i, j)} of {what} is {freq:.4g} ({counts[i, j]} of {n_draws} draws), "
             f"off by {abs(z[i, j]):.3g} standard errors; the exact value is {P[i, j]:.4g} "
             f"(difference {freq - P[i, j]:.3g}; {len(bad)} of {P.size} entries fail at alpha = "
             f"{alpha:g}, Bonferroni).", cause, found_warnings, entry=entry(i, j), found=freq,
             expected=P[i, j], z=abs(z[i, j]), sd=np.sqrt(freq * (1 - freq)), n_draws=n_draws,
             n_tests=P.size, slip=slip, errors=_frequency_errors(counts / n_draws, P, alpha))
    largest = float(np.max(np.abs(z)))
    i, j = np.unravel_index(np.argmin(p_value), p_value.shape)
    smallest = float(p_value[i, j])
    return passing(name, CheckResult(name, largest, norm.isf(level / 2), P.size, n_draws,
                                     detectable, smallest), label,
                   f"{passed}: the smallest exact p-value, {smallest:.2g} at {entry(i, j)} "
                   f"({counts[i, j]} of {n_draws}; exact {P[i, j]:.3g}), is above the level "
                   f"{level:.2g} (exact binomial tests at alpha = {alpha:g}, Bonferroni); "
                   f"{power_text}")


def _generator_probe(f, args, what):
    """A sentence if two calls with generators in the same state draw differently (the code
    draws from a generator it is not given, e.g. dropout masks from a global one); else ''."""
    small = tuple(a[:min(len(a), 64)] if isinstance(a, np.ndarray) else
                  (min(a, 64) if isinstance(a, int) else a) for a in args[:-1])
    seed = 20261129
    first = probe_call(lambda: np.asarray(f(*small, np.random.default_rng(seed)), dtype=float))
    second = probe_call(lambda: np.asarray(f(*small, np.random.default_rng(seed)), dtype=float))
    if first is None or second is None or np.array_equal(first, second):
        return ""
    return (f" Two calls of {what} with generators in the same state drew differently: it "
            f"also draws from a generator it is not given (e.g. dropout masks or noise from a "
            f"global generator); if those draws change the law (masks do), that is the cause.")


@documented
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
    verdict: Gibbs step: 16 entries of T, 2000 draws per state: the smallest ...
    >>> two = NumpyRBM(W, b, c, bug="h from previous v")
    >>> check_gibbs_step(lambda v, rng: two.gibbs_chain(v, 2, rng)[0], (W, b, c), k=2,
    ...                  n_draws=2000, rng=0)
    Traceback (most recent call last):
    ...
    rbm.testing.CheckFailed: Gibbs step: T^2[...] ... Your draws match 1 Gibbs step: ...
    """
    model, alpha, power, rng = valid_common(model, step, "step", alpha, power, rng)
    k = check_positive_int(k, "k")
    V = all_states(model.visible)
    T = transition.gibbs_transition_matrix(model)
    Tk = np.linalg.matrix_power(T, k)
    n_tests = Tk.size
    n_draws, detectable = sized_draws(n_draws, "n_draws", effect, alpha, power, n_tests, name)
    power_name = "T" if k == 1 else f"T^{k}"

    def diagnose(counts):
        return counts_diagnosis(
            counts, n_draws, Tk, transition_hypotheses(model, T, k), transition_fits(model, k),
            alpha, power, tested=[f"{k - 1} to {k + 1} Gibbs steps and h drawn from the "
                                  "previous v" if k > 1 else "2 Gibbs steps",
                                  "the model with W negated, a bias left out or doubled"
                                  + (", W transposed, the biases swapped"
                                     if model.W.shape[0] == model.W.shape[1] else "")
                                  + ", in both conditionals or in one"])
    return _frequency_check(
        step, (np.repeat(V, n_draws, axis=0), rng), "your step", model.visible, Tk,
        n_draws, alpha=alpha, name=name, label=label,
        entry=lambda i, j: f"{power_name}[{state_text(V[i])} -> {state_text(V[j])}]",
        diagnose=diagnose, passed=f"{n_tests} entries of {power_name}, {n_draws} draws per state",
        power_text=f"an error of {detectable:.3f} in an entry of 1/2 is caught with power "
                   f"{power:g} (exact, at p = 1/2)", detectable=detectable)


@documented
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
    model : RBM, tuple, DBM or DBN
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`); or an
        :class:`rbm.deep.DBM` or :class:`rbm.deep.DBN` of such layers, whose exact
        :math:`p(v)` is :func:`rbm.deep.log_prob` (a DBM's block-Gibbs sampler, say).
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
    verdict: stationary law: 4 probabilities of v, ... runs of 30 steps: the smallest ...
    """
    model, alpha, power, rng = valid_common(model, sample, "sample", alpha, power, rng,
                                            networks=True)
    burn_in = check_positive_int(burn_in, "burn_in")
    visible = visible_layer(model)
    V = all_states(visible)
    P = np.exp((deep.log_prob if is_network(model) else exact.log_prob)(model, V))[None, :]
    n_chains, detectable = sized_draws(n_chains, "n_chains", effect, alpha, power, P.size, name,
                                  p=np.clip(P[0], 1e-300, 1 - 1e-16))
    if is_network(model):
        reach_text = ""

        def diagnose(counts):
            return counts_diagnosis(counts, n_chains, P, network_candidates(model, V), [],
                                    alpha, power)
    else:
        T = transition.gibbs_transition_matrix(model)
        reach = float(np.abs(np.linalg.matrix_power(T, burn_in) - P).max())
        reach_text = f"; block Gibbs is within {reach:.1g} of p(v) after {burn_in} steps"

        def diagnose(counts):
            return stationary_diagnosis(model, counts, n_chains, alpha, reach, power)
    return _frequency_check(
        sample, (n_chains, burn_in, rng), "your sampler", visible, P, n_chains,
        alpha=alpha, name=name, label=label, entry=lambda i, j: f"p(v = {state_text(V[j])})",
        diagnose=diagnose, passed=f"{P.size} probabilities of v, {n_chains} runs of {burn_in} "
        "steps", power_text=f"an error of {detectable:.3g} in any one state's probability is "
        f"caught with power {power:g} (exact, the least over the states){reach_text}",
        detectable=detectable)
