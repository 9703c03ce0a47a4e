"""Checks of gradient estimators, training steps and persistent estimators, by t-tests
of the mean of their draws against the exact expectation."""

import numpy as np

from rbm import deep, exact, transition
from rbm._validation import check_positive_float, check_positive_int
from rbm.model import Gradient

from rbm.testing._shared import (as_array, as_model, documented, is_network, valid_callable,
                                 valid_data)
from rbm.testing.results import CheckFailed, CheckResult, guarded, passing, recorded, valid_common
from rbm.testing.gradients import expected_pcd_gradient, gradient_target, network_gradient
from rbm.testing._causes import (centring_alternatives, gradient_alternatives, gradient_fits,
                                 network_alternatives)
from rbm.testing._means import mean_check, mean_draws, t_tests


def _entry_names(grad):
    return [f"{field}[{', '.join(map(str, idx))}]" if idx else field
            for field, value in grad.fields.items() for idx in np.ndindex(value.shape)]


def _flat(x, like, what):
    """The fields of `x` (a tuple in the order of `like`'s fields, a dict or a Gradient), flat."""
    if isinstance(x, dict) and set(x) == {"weights", "biases"}:
        fields = network_gradient(x).fields
    elif isinstance(x, Gradient):
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
        out.append(as_array(fields[key], f"{what}'s {key}", value.shape).ravel())
    return np.concatenate(out)


@documented
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
    model : RBM, tuple or DBM
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`); or an
        :class:`rbm.deep.DBM` of such layers, with `target` ``"exact"``
        (:func:`rbm.deep.gradient`) or a Gradient (:func:`network_gradient`), whose
        estimator returns the dict of :func:`rbm.deep.gradient` or a Gradient with the
        fields ``W1, ..., b, c1, ...``.
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
    model, alpha, power, rng = valid_common(model, estimate, "estimate", alpha, power, rng,
                                            networks=True)
    data = valid_data(model, data)
    n_draws = mean_draws(n_draws)
    expected, phrase, raw = gradient_target(model, data, target, offsets)

    def one_draw(r):
        return _flat(guarded(estimate, "your estimator", data.copy(), r), expected,
                     "your estimator")

    def alternatives():
        if is_network(model):
            return network_alternatives(model, data, expected)
        return (centring_alternatives(raw, offsets, 1.0)
                + gradient_alternatives(model, data, expected, offsets=offsets))
    fits = None if offsets is not None or is_network(model) else gradient_fits(
        model, data, _cd_k(target), expected, 1.0)
    return mean_check(one_draw, n_draws, rng, expected.flat(), model=model, alpha=alpha,
                      power=power, name=name, label=label, entries=_entry_names(expected),
                      alternatives=alternatives, caller="your estimator",
                      what=f"the mean of {n_draws} draws against {phrase}", fits=fits)


def _cd_k(target):
    """The k of a CD-k target, or None."""
    return int(target) if isinstance(target, (int, np.integer)) else None


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
    model, alpha, power, rng = valid_common(model, step, "step", alpha, power, rng)
    data = valid_data(model, data)
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    n_draws = mean_draws(n_draws)
    expected, phrase, raw = gradient_target(model, data, target, offsets)
    old = Gradient(model.W, model.b, model.c).flat()

    def one_draw(r):
        return _flat(guarded(step, "your step", model.W.copy(), model.b.copy(), model.c.copy(),
                              data.copy(), r), expected, "your step") - old

    lr = learning_rate

    def alternatives():
        return [(f"learning_rate**2 times {phrase}", "the learning rate is applied twice (once "
                 "to the gradient, once to the update)", lr * lr * expected.flat()),
                (f"{phrase} without the learning rate", "the learning rate is not applied",
                 expected.flat())] + centring_alternatives(raw, offsets, lr) \
            + gradient_alternatives(model, data, expected, scale=lr, offsets=offsets)
    fits = None if offsets is not None else gradient_fits(model, data, _cd_k(target), expected,
                                                             lr, params=old)
    return mean_check(one_draw, n_draws, rng, lr * expected.flat(), model=model,
                      alpha=alpha, power=power,
                      name=name, label=label, entries=_entry_names(expected),
                      alternatives=alternatives, caller="your step",
                      what=f"the mean of {n_draws} updates against learning_rate x {phrase}",
                      fits=fits)



# Calls per batch size the persistent check accepts.  Its residuals change law from call to
# call; at 30 calls correct code failed on 3 of 200 seeds at alpha = 1e-3 (above the binomial
# range of alpha), at 100 within it (tests/test_testing_new_checks.py).
_MIN_CALLS = 100


@documented
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
        batch's rows), named only when the t-tests tell it from the exact
        expectation and the other slip with the stated power (a slip merely
        not rejected is not named); a failure on the short batch alone says
        so, and only then is the short batch offered as the reason.

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
    model, alpha, power, rng = valid_common(model, estimate, "estimate", alpha, power, rng)
    valid_callable(chains, "chains")
    data = valid_data(model, data)
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
        valid_callable(parameters, "parameters")
    lr = 1.0 if learning_rate is None else check_positive_float(learning_rate, "learning_rate")
    found_warnings = []
    with recorded(found_warnings):
        for _ in range(n_passes):
            for batch in batches:
                if parameters is not None:
                    model = as_model(guarded(parameters, "your parameters"))
                    cd[len(batch)] = None
                held = guarded(chains, "your chains")
                expected = lr * expected_pcd_gradient(model, batch, held, k=k,
                                                      chain_layer=chain_layer).flat()
                if cd[len(batch)] is None or len(batches) > len(sizes):
                    cd[len(batch)] = lr * transition.cd_expected_gradient(model, batch, k).flat()
                g = _flat(guarded(estimate, "your estimator", batch.copy(), rng), template,
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
            when = (f" (here the batch of {size} rows is shorter than the full batches of "
                    f"{batch_size})" if size < batch_size else "")
            slips = [("the chains restarted at the batch", f"the object restarts its chains at "
                      f"the data in these calls{when}, so the call is CD-k", shift)]
            if n_chains[size] != size:
                slips.append((f"the model term weighted by chains / rows "
                              f"({n_chains[size]}/{size})", f"the model term is summed over "
                              f"the {n_chains[size]} chains and divided by the {size} rows of "
                              f"the batch, not averaged over the chains",
                              np.mean(weighted[size], axis=0)))
            return slips
        try:
            results.append(t_tests(draws, np.zeros(draws.shape[1]), alpha=alpha / len(sizes),
                                    power=power, name=name, entries=entries,
                                    alternatives=alternatives, found_warnings=found_warnings,
                                    model=model, identical=lambda: ("", None)))
        except CheckFailed as failure:
            if size == batch_size or failure.slip is not None:
                raise
            raise CheckFailed(  # the full batches passed: say where it fails
                f"{failure} The full batches of {batch_size} rows pass; this is the short "
                f"batch of {size} rows with {n_chains[size]} chains.", entry=failure.entry,
                found=failure.found, expected=failure.expected, z=failure.z, sd=failure.sd,
                n_draws=failure.n_draws, n_tests=failure.n_tests, slip=None,
                errors=failure._errors) from None
    largest = max(r[0] for r in results)
    detectable = max(r[2] for r in results)
    n_calls = sum(calls.values())
    sizes_text = " and ".join(map(str, sizes))
    return passing(name, CheckResult(name, largest, results[0][1], len(names) * len(sizes),
                                   min(calls.values()), detectable), label,
                 f"{n_calls} calls in batches of {sizes_text} rows: the mean residual against "
                 f"the exact expectation from the chains held, largest |t| {largest:.2f} "
                 f"(alpha = {alpha:g}, Bonferroni over {len(names)} entries x {len(sizes)} "
                 f"batch sizes); an error of {detectable:.2g} in one entry is caught with "
                 f"power {power:g}")
