"""The numeric verdicts of rbm.checks: each passes what holds and fails what does not."""

import re
from pathlib import Path

import numpy as np
import pytest

import rbm
from rbm.checks import check_at_most, check_close, check_fails, check_mean, unstable


def test_check_close_passes_within_and_fails_beyond_tolerance(capsys):
    g = rbm.Gradient(W=np.ones((2, 1)), b=np.zeros(2), c=np.ones(1))
    check_close(g, g + g * 1e-14, 1e-12, "gradients")
    assert capsys.readouterr().out == "verdict: gradients agree within 1e-12\n"
    with pytest.raises(AssertionError, match="max"):
        check_close(g, g * 1.01, 1e-3, "gradients")
    with pytest.raises(AssertionError, match="shapes"):
        check_close(np.zeros(2), np.zeros(3), 1.0, "vectors")


def test_check_at_most_allows_the_slack_and_no_more(capsys):
    check_at_most(np.array([1.0 + 1e-12, 0.5]), 1.0, 1e-9, "bounded")
    assert capsys.readouterr().out == "verdict: bounded holds within 1e-09\n"
    with pytest.raises(AssertionError, match="fails by"):
        check_at_most([0.0, 1.1], [0.0, 1.0], 1e-9, "bounded")


def test_check_mean_accepts_true_means_and_rejects_shifted_ones():
    draws = np.random.default_rng(1).normal(0.5, 1.0, size=(4000, 2, 3))
    assert check_mean(draws, np.full((2, 3), 0.5), 0.01, "true means") < 3.0
    with pytest.raises(AssertionError, match="shifted means: largest"):
        check_mean(draws, np.full((2, 3), 0.6), 0.01, "shifted means")
    constant = np.zeros((10, 2))  # no standard error: passes only when equal to its target
    assert check_mean(constant, np.zeros(2), 0.01, "constant entries") == 0.0
    with pytest.raises(AssertionError, match=r"largest \|z\| = inf"):
        check_mean(constant, np.ones(2), 0.01, "constant entries, wrong target")
    with pytest.raises(ValueError, match="samples must have shape"):
        check_mean(draws[:1], np.zeros((2, 3)), 0.01, "one sample")
    with pytest.raises(ValueError, match="alpha must lie in"):
        check_mean(draws, np.zeros((2, 3)), 1.5, "bad alpha")


def test_check_mean_refuses_samples_or_targets_that_are_not_finite():
    """A NaN sample used to pass: its z-score compared as 0 (found in review)."""
    draws = np.random.default_rng(2).normal(0.0, 1.0, size=(100, 3))
    draws[5, 1] = np.nan
    with pytest.raises(ValueError, match="samples must be finite"):
        check_mean(draws, np.zeros(3), 0.01, "with a NaN")
    with pytest.raises(ValueError, match="target must be finite"):
        check_mean(np.zeros((4, 1)), np.array([np.inf]), 0.01, "infinite target")


def test_check_fails_accepts_a_failing_check_and_rejects_a_passing_one(capsys):
    def wrong():
        print("a part that held")
        check_at_most(2.0, 1.0, 0.0, "two at most one")

    check_fails(wrong, "as written")
    assert capsys.readouterr().out == (
        "verdict: as written fails, as it must: two at most one: fails by 1 > 0\n")
    with pytest.raises(AssertionError, match="let a wrong statement pass: right"):
        check_fails(lambda: check_at_most(1.0, 2.0, 0.0, "one at most two"), "right")


def test_check_fails_lets_other_errors_through_and_refuses_non_callables():
    def broken():
        raise ValueError("not a check failure")

    with pytest.raises(ValueError, match="not a check failure"):
        check_fails(broken, "broken")
    with pytest.raises(TypeError, match="check must be callable"):
        check_fails("not a function", "string")


def sanitize_rules():
    """(regex, replace) pairs of tests/nbval_sanitize.cfg, in order."""
    lines = (Path(__file__).parent / "nbval_sanitize.cfg").read_text().splitlines()
    regexes = [line.split(":", 1)[1].strip() for line in lines if line.startswith("regex:")]
    replaces = [line.split(":", 1)[1].strip() for line in lines if line.startswith("replace:")]
    return list(zip(regexes, replaces))


@pytest.mark.parametrize("x, spec", [(-22.713, ".3f"), (1.3e-15, ".1e"), (1.83e6, ".3g"),
                                     (0.0, ".2f"), (-117.0, ".1f"), (7e-18, ".0e"),
                                     (float("inf"), ".3g"), (float("nan"), ".3g")])
def test_unstable_numbers_are_exactly_what_nbval_sanitizes(x, spec):
    """nbval sees '~UNSTABLE' for every number `unstable` prints, and nothing else changes."""
    text = f"best {unstable(x, spec)}, within 1e-12"
    for regex, replace in sanitize_rules():
        text = re.sub(regex, replace, text)
    assert text == "best ~UNSTABLE, within 1e-12"


def test_unstable_leaves_ordinary_numbers_compared():
    text = "holds within 1e-12; 3 of 4; ~ alone"
    for regex, replace in sanitize_rules():
        text = re.sub(regex, replace, text)
    assert text == "holds within 1e-12; 3 of 4; ~ alone"


def test_a_labelled_verdict_names_its_label(capsys):
    from rbm.checks import verdict

    check_close(1.0, 1.0, 0.0, "one and one", label="chk-one-and-one")
    check_at_most(0.0, 1.0, 0.0, "zero at most one")
    assert capsys.readouterr().out == ("verdict [chk-one-and-one]: one and one agree within 0\n"
                                       "verdict: zero at most one holds\n")
    for bad in ("one", "chk-", "chk-Upper", "chk-a_b", 3):
        with pytest.raises(ValueError, match="label must look like"):
            verdict("text", label=bad)


def test_glue_records_with_myst_nb_and_is_silent_without_it(monkeypatch, capsys):
    import sys

    import numpy as np

    from rbm.checks import glue

    recorded = []
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, value, display: recorded.append((name, value, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("a-value", np.float64(0.5))
    assert recorded == [("a-value", 0.5, False)] and type(recorded[0][1]) is float
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import myst_nb raises ImportError
    glue("a-value", 1.0)
    assert len(recorded) == 1 and capsys.readouterr().out == ""
    with pytest.raises(TypeError, match="name"):
        glue("", 1.0)


def test_glue_records_a_float_to_eight_significant_digits_unless_told(monkeypatch):
    """The last digits of a float depend on the processor; the recorded value holds none of them."""
    import sys

    import numpy as np

    from rbm.checks import glue

    recorded = {}
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, value, display: recorded.__setitem__(name, value)
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("here", 0.5322416516549026)
    glue("there", np.float64(0.5322416516549023))
    glue("small", 4.43276069575061e-05)
    glue("coarse", -48.028445, digits=2)
    glue("count", 7)
    glue("flag", True)
    glue("infinite", float("inf"))
    assert recorded["here"] == recorded["there"] == 0.53224165
    assert recorded["small"] == 4.4327607e-05
    assert recorded["coarse"] == -48.0
    assert recorded["count"] == 7 and recorded["flag"] is True
    assert recorded["infinite"] == float("inf")
    for bad, error in ((0, ValueError), (18, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="digits"):
            glue("x", 1.0, digits=bad)


def test_check_fails_marks_the_amount_of_a_rounding_sensitive_failure(capsys):
    from rbm.checks import check_at_most, check_fails

    check_fails(lambda: check_at_most(2.94, 0.0, 0.0, "never falls"), "a cure",
                rounding_sensitive=True)
    check_fails(lambda: check_at_most(2.94, 0.0, 1e-9, "never falls"), "a cure")
    first, second = capsys.readouterr().out.splitlines()
    assert first == "verdict: a cure fails, as it must: never falls: fails by ~2.94 > 0"
    assert second == "verdict: a cure fails, as it must: never falls: fails by 2.94 > 1e-09"
