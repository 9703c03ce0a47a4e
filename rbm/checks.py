r"""Numeric verdicts: a claim checked, and one line printed when it holds.

Each function raises :class:`AssertionError` when its claim is false and
prints ``verdict: ...`` when it holds, so that a chapter shows the claim,
the code that checks it and the verdict, and nbval fails on any change.
The symbolic counterpart, :func:`rbm.symbolic.check_equal`, proves an
equation with SymPy.

A check that a summary, caption or conclusion of a chapter rests on carries
a *label* (``label="chk-..."``): its verdict reads ``verdict [chk-...]: ...``,
the index of checks (``reference/checks.md``) gives it a target of that name,
and the chapter's text points to it with ``{ref}`check <chk-...>```.
"""

import contextlib
import io
import re
import textwrap

import numpy as np
from scipy.stats import norm

__all__ = ["verdict", "check_close", "check_at_most", "check_mean", "check_fails", "unstable", "below",
           "glue"]

# Verdicts are wrapped to the width of the book's output column (78 characters at 1280 px).
VERDICT_WIDTH = 78
LABEL_PATTERN = re.compile(r"chk-[a-z0-9]+(?:-[a-z0-9]+)*")
_FIRST_NUMBER = re.compile(r"[-+]?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?)")
#: significant digits a glued float keeps (see :func:`glue`)
GLUE_DIGITS = 8


def verdict(text, label=None):
    """Print ``verdict: text``, wrapped to ``VERDICT_WIDTH`` columns (continuations indented).

    Parameters
    ----------
    text : str
        The claim that held, in words.
    label : str, optional
        A name for the check, ``chk-`` followed by lower-case words joined
        by hyphens, that the chapter's text and the index of checks refer to.
        It is printed as ``verdict [label]: text``.

    Raises
    ------
    ValueError
        If `label` is not of the form ``chk-words-joined-by-hyphens``.

    Examples
    --------
    >>> verdict("a claim that holds")
    verdict: a claim that holds
    >>> verdict("a claim a summary rests on", label="chk-example")
    verdict [chk-example]: a claim a summary rests on
    """
    if label is None:
        head = "verdict:"
    elif isinstance(label, str) and LABEL_PATTERN.fullmatch(label):
        head = f"verdict [{label}]:"
    else:
        raise ValueError(f"label must look like 'chk-words-joined-by-hyphens', got {label!r}")
    print(textwrap.fill(f"{head} {text}", width=VERDICT_WIDTH, subsequent_indent="    ",
                        break_long_words=False, break_on_hyphens=False))


def check_close(a, b, tol, name, *, label=None):
    r"""Assert ``max |a - b| <= tol`` elementwise and print a one-line verdict.

    Parameters
    ----------
    a, b : array_like or object with a ``flat()`` method (e.g. :class:`~rbm.model.Gradient`)
        Same shape after flattening.
    tol : float
        Absolute tolerance.
    name : str
        What is being compared, for the verdict.
    label : str, optional
        Names the check for the text that cites it (see :func:`verdict`).

    Raises
    ------
    AssertionError
        If the shapes differ or some entry differs by more than `tol`.

    Examples
    --------
    >>> check_close([1.0, 2.0], [1.0, 2.0 + 1e-13], 1e-12, "two vectors")
    verdict: two vectors agree within 1e-12
    >>> check_close(1.0, 1.1, 1e-3, "two numbers")
    Traceback (most recent call last):
    ...
    AssertionError: two numbers: max |a - b| = 0.1 > 0.001
    """
    a = np.asarray(a.flat() if hasattr(a, "flat") and callable(a.flat) else a, dtype=float)
    b = np.asarray(b.flat() if hasattr(b, "flat") and callable(b.flat) else b, dtype=float)
    if a.shape != b.shape:
        raise AssertionError(f"{name}: shapes {a.shape} and {b.shape} differ")
    gap = float(np.max(np.abs(a - b))) if a.size else 0.0
    if not gap <= tol:
        raise AssertionError(f"{name}: max |a - b| = {gap:.3g} > {tol:g}")
    verdict(f"{name} agree within {tol:g}", label)


def check_at_most(a, b, tol, name, *, label=None):
    r"""Assert ``a <= b + tol`` elementwise and print a one-line verdict.

    For inequalities: a divergence that is never negative, a likelihood
    that never falls during a run, a variance that is never larger.

    Parameters
    ----------
    a, b : array_like
        Broadcastable arrays (or numbers).
    tol : float
        Slack allowed for rounding.
    name : str
        The inequality, for the verdict.
    label : str, optional
        Names the check for the text that cites it (see :func:`verdict`).

    Raises
    ------
    AssertionError
        If some entry of `a` exceeds `b` by more than `tol`.

    Examples
    --------
    >>> check_at_most([0.0, 1.0], 1.0, 0.0, "entries at most one")
    verdict: entries at most one holds
    >>> check_at_most(2.0, 1.0, 1e-9, "two at most one")
    Traceback (most recent call last):
    ...
    AssertionError: two at most one: fails by 1 > 1e-09
    """
    excess = float(np.max(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)))
    if not excess <= tol:
        raise AssertionError(f"{name}: fails by {excess:.3g} > {tol:g}")
    verdict(f"{name} holds" + (f" within {tol:g}" if tol else ""), label)


def check_mean(samples, target, alpha, name, *, label=None):
    r"""Two-sided z-tests that the mean of `samples` is `target`, entry by entry; print a verdict.

    For statistical claims: each entry's sample mean is compared with its
    exact value in units of its standard error, and the critical value
    :math:`z_{1 - \alpha / (2m)}` makes the family-wise significance of the
    :math:`m` tests `alpha` (Bonferroni).  An entry that is constant over the
    samples has no standard error: it passes only if it equals its target.

    Parameters
    ----------
    samples : array_like of shape (n_samples, ...)
        One sample per row, at least two rows.
    target : array_like
        The exact means, of shape ``samples.shape[1:]``.
    alpha : float
        Family-wise significance, in (0, 1).
    name : str
        What is tested, for the verdict.
    label : str, optional
        Names the check for the text that cites it (see :func:`verdict`).

    Returns
    -------
    float
        The largest :math:`|z|`.

    Raises
    ------
    AssertionError
        If some :math:`|z|` exceeds the critical value.
    ValueError
        If the shapes do not match, `alpha` is outside (0, 1), or `samples` or
        `target` hold NaN or infinity.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> draws = rng.normal(1.0, 2.0, size=(1000, 3))
    >>> _ = check_mean(draws, np.ones(3), 0.01, "three means")
    verdict: three means: largest |z| ... <= 2.94 (alpha = 0.01, ...)
    >>> _ = check_mean(draws, np.full(3, 1.5), 0.01, "shifted means")
    Traceback (most recent call last):
    ...
    AssertionError: shifted means: largest |z| = ... > 2.94 (alpha = 0.01, ...)
    """
    samples, target = np.asarray(samples, dtype=float), np.asarray(target, dtype=float)
    if samples.ndim < 1 or samples.shape[0] < 2 or samples.shape[1:] != target.shape:
        raise ValueError(f"samples must have shape (n_samples >= 2, *{target.shape}), "
                         f"got {samples.shape}")
    for what, values in (("samples", samples), ("target", target)):
        if not np.isfinite(values).all():
            raise ValueError(f"{what} must be finite, but it holds NaN or infinity: no test "
                             "can pass or fail on it")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    gap = np.abs(samples.mean(axis=0) - target)
    z = np.divide(gap, se, out=np.where(gap > 0, np.inf, 0.0), where=se > 0)
    z_max, z_crit = float(z.max()), float(norm.isf(alpha / (2 * target.size)))
    entries = "1 entry" if target.size == 1 else f"{target.size} entries"
    family = f"(alpha = {alpha:g}, Bonferroni over {entries})"
    if not z_max <= z_crit:
        raise AssertionError(f"{name}: largest |z| = {z_max:.3g} > {z_crit:.3g} {family}")
    verdict(f"{name}: largest |z| {z_max:.2f} <= {z_crit:.2f} {family}", label)
    return z_max


def check_fails(check, name, *, label=None, rounding_sensitive=False):
    r"""Run a check on a statement that is wrong: it must fail. Print how it failed.

    A check that cannot fail proves nothing, so a chapter that corrects a
    statement runs the same check twice: on the wrong statement through this
    function, then on the right one directly.  Anything `check` prints before
    it fails (the verdicts of parts that held) is not shown; only the failure
    is.

    Parameters
    ----------
    check : callable
        Called without arguments; it checks the wrong statement and should
        raise :class:`AssertionError`.
    name : str
        The wrong statement, for the verdict.
    label : str, optional
        Names the check for the text that cites it (see :func:`verdict`).
    rounding_sensitive : bool, default False
        Whether the amount by which the wrong statement fails comes from a run that
        amplifies rounding (an oscillating or chaotic training run), so that its
        digits differ between processors.  Its numbers are then printed through
        :func:`unstable` (marked ``~``); the verdict itself is still compared.
    TypeError
        If `check` is not callable.

    Examples
    --------
    >>> check_fails(lambda: check_at_most(2.0, 1.0, 0.0, "two at most one"),
    ...             "as written")
    verdict: as written fails, as it must: two at most one: fails by 1 > 0
    >>> check_fails(lambda: check_at_most(1.0, 2.0, 0.0, "one at most two"),
    ...             "as written")
    Traceback (most recent call last):
    ...
    AssertionError: the check let a wrong statement pass: as written
    >>> check_fails(lambda: check_at_most(2.25, 1.0, 0.0, "a chaotic run's end at most one"),
    ...             "as written", rounding_sensitive=True)
    verdict: as written fails, as it must: a chaotic run's end at most one: fails by ~1.25 > 0
    """
    if not callable(check):
        raise TypeError(f"check must be callable (a function that runs the check), "
                        f"got {type(check).__name__}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check()
    except AssertionError as err:
        message = str(err)
        if rounding_sensitive:
            # the measured amount is the first number after the statement's name
            head, sep, tail = message.rpartition(": ")
            tail = _FIRST_NUMBER.sub(lambda m: unstable(float(m.group(0))), tail, count=1)
            message = head + sep + tail
        verdict(f"{name} fails, as it must: {message}", label)
        return
    raise AssertionError(f"the check let a wrong statement pass: {name}")


def unstable(x, spec=".3g"):
    r"""``x`` formatted with `spec` and marked ``~``: its digits depend on rounding.

    Some printed numbers are not reproducible to their last digit on another
    processor: a rounding error itself (a check that "holds within 1e-12"
    may have missed by 1.3e-15 here and 1.4e-15 there), or any number from a
    run that amplifies rounding (an oscillating or diverging training run,
    where numpy's and BLAS's choice of vector instructions, which differs
    between processors, changes the trajectory).  Chapters print such numbers
    through this function; ``tests/nbval_sanitize.cfg`` replaces every
    ``~number`` before nbval compares outputs, so the rest of the output,
    verdicts included, is still compared.  The checks on these runs are
    still asserted, with tolerances that hold on every processor.

    Parameters
    ----------
    x : float
    spec : str, default ".3g"
        A format specification, as in ``format(x, spec)``.

    Returns
    -------
    str

    Examples
    --------
    >>> print(f"missed by {unstable(1.3e-15, '.1e')}")
    missed by ~1.3e-15
    >>> unstable(-22.713, ".2f")
    '~-22.71'
    """
    return "~" + format(float(x), spec)


def below(value, bound):
    r"""``"below <bound>"`` when ``value < bound``, else `value` itself (``.1e``).

    A gap that is rounding (a few units in the last place) differs between
    processors in every digit, so a chapter prints the bound it lies under,
    not the gap; a gap at or above the bound is printed as a number, which
    changes the output and so fails nbval.

    Parameters
    ----------
    value : float
    bound : float

    Returns
    -------
    str

    Examples
    --------
    >>> below(5.7e-14, 1e-11)
    'below 1e-11'
    >>> below(2e-11, 1e-11)
    '2.0e-11'
    >>> below(4.4e-10, 1e-8)
    'below 1e-8'
    """
    value = float(value)
    # 1e-8, not Python's 1e-08
    limit = f"{bound:g}".replace("e-0", "e-").replace("e+0", "e+")
    return f"below {limit}" if value < bound else f"{value:.1e}"


def glue(name, value, display=False, *, digits=GLUE_DIGITS):
    """Record `value` under `name` for a chapter's text to show (myst-nb's ``glue``).

    The book's prose shows a computed number with ``{glue:text}`name```; this records it
    with ``myst_nb.glue`` when myst-nb is installed (the book's build and its tests),
    and does nothing otherwise, so that a downloaded chapter runs with the package alone.
    NumPy scalars are recorded as plain Python numbers, which myst-nb can format.

    A float is recorded to `digits` significant digits: its last digits depend on the
    processor (the BLAS kernel and the SIMD instructions NumPy chooses), nbval compares
    what is recorded, and a page shows at most five.  A number from a computation that
    amplifies rounding needs fewer: pass the digits that its spread leaves.

    Parameters
    ----------
    name : str
        The name the text uses.
    value : object
        The value, usually a number.
    display : bool, default False
        Whether the cell also shows the value.
    digits : int, default ``GLUE_DIGITS`` (8)
        Significant digits kept of a float, from 1 to 17.

    Raises
    ------
    TypeError
        If `name` is not a non-empty string, or `digits` not an integer.
    ValueError
        If `digits` is outside 1 to 17.

    Examples
    --------
    >>> glue("example-value", np.float64(0.25))
    >>> glue("example-ratio", 0.5322416516549026)  # recorded as 0.53224165
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)):
        raise TypeError(f"digits must be an integer, got {digits!r}")
    if not 1 <= digits <= 17:
        raise ValueError(f"digits must lie between 1 and 17, got {digits}")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isfinite(value):
        value = float(f"{value:.{int(digits)}g}")
    try:
        import myst_nb
    except ImportError:
        return
    myst_nb.glue(name, value, display=display)
