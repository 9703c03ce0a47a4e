"""Docstring examples fit the API pages' code column at 1280 px.

The reference pages render each ``>>>`` example in a box 798 px wide at 1280 px: in Chromium
(tests/browser) lines of 95 characters fit it and lines of 98 scrolled sideways, so a line
past ``MAX_EXAMPLE_CHARS`` fails here, in a second rather than in the browser test.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_EXAMPLE_CHARS = 95
EXAMPLE_LINE = re.compile(r"^\s*(>>>|\.\.\.)( |$)")


def long_example_lines(text, limit=MAX_EXAMPLE_CHARS):
    """Lines of doctest examples (a ``>>>`` line and what follows it up to a blank line:
    the code and its expected output, shown together) longer than `limit`."""
    found, in_example = [], False
    for n, line in enumerate(text.splitlines(), 1):
        in_example = bool(EXAMPLE_LINE.match(line)) or (
            in_example and bool(line.strip()) and '"""' not in line)
        if in_example and len(line) > limit:
            found.append((n, len(line)))
    return found


def test_docstring_examples_fit_the_column():
    found = {str(p.relative_to(ROOT)): long_example_lines(p.read_text())
             for p in sorted((ROOT / "rbm").rglob("*.py"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"example lines over {MAX_EXAMPLE_CHARS} characters (file: line, length): {found}"


def test_the_counter_can_fail():
    assert long_example_lines("    >>> x = 1\n    ... " + "y" * 92) == [(2, 100)]
    assert long_example_lines("    plain prose " + "z" * 100) == []
    assert long_example_lines("    >>> f()\n    " + "o" * 96 + "\n\n    " + "p" * 96) == [(2, 100)]
