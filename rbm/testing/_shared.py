"""Shared helpers of the checks (public names, private module): the limits, the shared
docstring parts, argument checks, the enumeration of a layer's states, exact laws and
deterministic comparisons."""

import numpy as np
from scipy.stats import binom

from rbm._validation import check_positive_float
from rbm.deep import DBM, DBN
from rbm.model import RBM


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
# decorated with documented stands for the text.
DOCS = {
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


def documented(f):
    """`f` with the shared parts of its docstring filled in (see DOCS)."""
    for key, text in DOCS.items():
        f.__doc__ = f.__doc__.replace(f"    <{key}>", text)
    return f


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


def is_network(model):
    """Whether `model` is a stack of RBMs (:class:`rbm.deep.DBN` or :class:`rbm.deep.DBM`)."""
    return isinstance(model, (DBN, DBM))


def visible_layer(model):
    """The visible layer of an RBM or of a stack."""
    if isinstance(model, DBN):
        return model.rbms[0].visible
    return model.layers[0] if isinstance(model, DBM) else model.visible


def as_network(model):
    """A copy of a DBN or DBM of {0,1} or ±1 layers with at most ``MAX_BITS`` visible units
    (the checks that take stacks enumerate its visible states; :mod:`rbm.deep` bounds the
    enumeration of its hidden ones)."""
    model = model.copy().check("model")
    layers = ([m.visible for m in model.rbms] + [model.top.hidden] if isinstance(model, DBN)
              else model.layers)
    for k, layer in enumerate(layers):
        if layer.bits is None:
            raise ValueError(f"the checks need {{0,1}} or ±1 units; layer {k} of the model is "
                             f"{layer!r}")
    if layers[0].n_units > MAX_BITS:
        raise ValueError(f"the checks enumerate visible states: the model has "
                         f"{layers[0].n_units} visible units, more than MAX_BITS = {MAX_BITS}")
    return model


def valid_alpha(alpha):
    alpha = check_positive_float(alpha, "alpha")
    if not alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return alpha


def valid_power(power):
    power = check_positive_float(power, "power")
    if not 0.5 <= power < 1:
        raise ValueError(f"power must lie in [0.5, 1), got {power}")
    return power


def valid_callable(f, name):
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")
    return f


def valid_data(model, data):
    data, _ = visible_layer(model).check_states(data, "data", allow_1d=False)
    return data


def as_array(x, what, shape=None):
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise AssertionError(f"{what} did not return numbers: {exc}") from None
    if shape is not None and arr.shape != tuple(shape):
        raise AssertionError(f"{what} returned shape {arr.shape}, expected {tuple(shape)}")
    return arr


def state_text(x):
    values = ", ".join(f"{v:g}" for v in np.ravel(x))
    return f"({values})"


# -- deterministic checks ------------------------------------------------------------

def compare(found, exact_values, tol, rtol):
    """Entries beyond ``tol + rtol * |exact|``, worst first; non-finite values always fail."""
    gap = np.abs(found - exact_values)
    gap = np.where(np.isfinite(found), gap, np.inf)
    excess = gap - (tol + rtol * np.abs(exact_values))
    order = np.argsort(-excess, axis=None)
    return [np.unravel_index(i, found.shape) for i in order if excess.flat[i] > 0], gap


def matches(found, candidates, tol, rtol):
    """The names of the candidate values that `found` equals within the tolerance."""
    return [name for name, value in candidates
            if value.shape == found.shape and not compare(found, value, tol, rtol)[0]]


def all_states(layer):
    return layer.states(0, layer.n_states ** layer.n_units)


# -- sampling checks ----------------------------------------------------------------

def binomial_tests(counts, n, p, alpha):
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


def joint_probabilities(model, X, given):
    r""":math:`p(y \mid x)` of every state of the other layer, one row per row of `X`."""
    target = model.hidden if given == "visible" else model.visible
    I = model.input_hidden(X) if given == "visible" else model.input_visible(X)
    Y = all_states(target)
    log_p = I @ target.statistic(Y).T - target.energy(Y)[None, :] \
        - target.log_normaliser(I)[:, None]
    return np.exp(log_p), Y


def gap_text(found, expected, digits=10):
    """``is <found>; the exact value is <expected> (difference <d>``, shared by every check."""
    return (f"is {found:.{digits}g}; the exact value is {expected:.{digits}g} (difference "
            f"{found - expected:.3g}")
