"""What a check returns or raises (:class:`CheckResult`, :class:`CheckFailed`), and the
calling of the code under test (its exceptions and warnings kept for the message)."""

import contextlib
import dataclasses
import warnings

import numpy as np

from rbm._validation import check_rng
from rbm.checks import verdict

from rbm.testing._shared import (MIN_MEAN_DRAWS, SIZING_Z, as_array, as_model, as_network,
                                 is_network, valid_alpha, valid_callable, valid_power)
from rbm.testing.power import draws_needed


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
    smallest_p : float
        For the exact binomial tests, the smallest p-value over the entries
        (the worst entry, which the verdict names); ``nan`` otherwise.
    """

    name: str
    largest_z: float
    critical: float
    n_tests: int
    n_draws: int
    detectable: float
    smallest_p: float = np.nan


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


def valid_common(model, f, f_name, alpha, power, rng, networks=False):
    """The arguments every stochastic check takes, checked: the model (a stack of RBMs too,
    with `networks`), `f` callable, alpha, power and the generator."""
    valid_callable(f, f_name)
    model = as_network(model) if networks and is_network(model) else as_model(model)
    return model, valid_alpha(alpha), valid_power(power), check_rng(rng)


@contextlib.contextmanager
def recorded(found):
    """Run the implementation under test, keeping its warnings for the message (not raising)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    found.extend(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))


# Words of numpy's (and most libraries') errors about shapes: only then is a shape named.
_SHAPE_WORDS = ("shape", "broadcast", "dimension", "aligned", "mismatch")


def guarded(f, what, *args):
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


def call(f, found, *args, what="your function"):
    with recorded(found):
        out = guarded(f, what, *args)
    return out


def warned_text(found):
    return f" It warned: {'; '.join(dict.fromkeys(found))}." if found else ""


def passing(name, result, label, text):
    verdict(f"{name}: {text}", label)
    return result


def float64_rerun(float64, found_warnings, what, shape, *args):
    """``rerun`` for :func:`rounding_cause`: the `float64` callable on `args`, or None."""
    if float64 is None:
        return None
    valid_callable(float64, "float64")
    return lambda: as_array(call(float64, found_warnings, *(np.copy(a) for a in args),
                                what=f"your float64 {what}"), f"your float64 {what}", shape)


def fail(name, text, cause="", found_warnings=(), **attrs):
    """Raise the one failure of every check: ``name: text`` + the tested cause + warnings."""
    raise CheckFailed(f"{name}: {text}" + cause + warned_text(found_warnings), **attrs)
