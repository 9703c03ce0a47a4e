"""List numbers typed by hand in the Markdown of chapters: a decimal point or a per cent sign.

Usage: python tools/unglued_numbers.py chapters/x.ipynb [...]

A result the book states is glued from the cell that computes it and shown with
``{glue:text}``; a number typed in the prose drifts when the computation changes. This
script prints, for each Markdown cell, the numbers with a decimal point (``0.78``,
``-48.3``) or a per cent sign (``58 %``) that stand outside math (``$...$``, ``$$...$$``,
fenced blocks), inline code and roles (``{glue:text}`...```, ``{check}`...```, ...), with
a few words around each. Inline math that is only a number (``$-48.3$``) counts as prose.
Rows of a Markdown table that cite a check (``{check}`` in the row) are skipped: they
restate the check's statement, whose numbers are its tolerances and levels; keep measured
values out of them. It exits with status 1 if it found any.

Not every number listed is a result: a setting (``significance 0.01``) or a check's
tolerance (``within 0.1``) is typed on purpose; tests/test_page_format.py allows such
phrases chapter by chapter. Integers are not listed (sizes, seeds and counts are mostly
settings), so a clean list is necessary, not sufficient: read the integers too.
"""

import json
import re
import sys
from pathlib import Path

#: inline math that is only a number, such as ``$-48.3$``: prose
_NUMBER_MATH = re.compile(r"\$\s*([-−]?\d*\.?\d+)\s*\$")
#: a row of a Markdown table that cites a check
_CHECK_ROW = re.compile(r"^\|.*\{check\}`.*\|\s*$", re.M)
#: what is not prose: fenced blocks, display and inline math, inline code, roles, labels
_NOT_PROSE = [
    _CHECK_ROW,
    re.compile(r"```.*?```", re.S),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]*\$"),
    re.compile(r"\{[a-z:-]+\}`[^`]*`"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"^\s*\(.*\)=\s*$", re.M),
]
#: a number with a decimal point, or a number followed by a per cent sign
NUMBER = re.compile(r"(?<![\w.])[-−]?\d*\.\d+(?![\w.])|(?<![\w.])\d+(?:\.\d+)?\s?%")


def prose(text):
    """The Markdown ``text`` with math, code, roles, labels and check rows blanked out."""
    text = _NUMBER_MATH.sub(r" \1 ", text)
    for pattern in _NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


def typed_numbers(text, context=0):
    """The numbers with a decimal point or a per cent sign in the prose of ``text``.

    Parameters
    ----------
    text : str
        The source of one Markdown cell.
    context : int, default 0
        How many characters of prose to keep on each side of a number.

    Returns
    -------
    list of str
        The numbers as written, in order; with ``context > 0``, each with the prose around
        it, its white space collapsed to single spaces.

    Raises
    ------
    TypeError
        If `text` is not a str.
    ValueError
        If `context` is negative.

    Examples
    --------
    >>> typed_numbers("ends at -48.3, $x = 0.5$, {glue:text}`a:.2f` and 58 % of it")
    ['-48.3', '58 %']
    >>> typed_numbers("a curvature $-3.55$, seed 3, 4000 chains, `0.1`")
    ['-3.55']
    >>> typed_numbers("| a row 0.17 | {check}`chk-a` |")
    []
    >>> typed_numbers("at significance\\n0.01, seeded", context=14)
    ['significance 0.01, seeded']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if context < 0:
        raise ValueError(f"context must be >= 0, not {context}")
    flat = re.sub(r"\s+", " ", prose(text))
    return [flat[max(m.start() - context, 0):m.end() + context].strip() if context
            else m.group(0) for m in NUMBER.finditer(flat)]


def notebook_numbers(path, context=0):
    """``(cell index, number)`` for every typed number in the Markdown cells of ``path``.

    With ``context > 0`` each number comes with the prose around it (see
    :func:`typed_numbers`).
    """
    cells = json.loads(Path(path).read_text())["cells"]
    return [(n, number) for n, cell in enumerate(cells) if cell["cell_type"] == "markdown"
            for number in typed_numbers("".join(cell["source"]), context)]


def unallowed(path, allowed, context=30):
    """The typed numbers of ``path`` that no phrase of ``allowed`` accounts for.

    A number is allowed when one of the phrases, white space collapsed, occurs in the
    prose of its cell and covers the number itself.

    Parameters
    ----------
    path : str or pathlib.Path
        A notebook.
    allowed : iterable of str
        Phrases that state a setting or a check's tolerance, such as ``"significance 0.01"``.
    context : int, default 30
        Characters of prose shown on each side of a number that is not allowed.

    Returns
    -------
    list of tuple
        ``(cell index, number with its context)`` for each number not allowed.
    """
    allowed = [re.sub(r"\s+", " ", phrase) for phrase in allowed]
    cells = json.loads(Path(path).read_text())["cells"]
    found = []
    for n, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        flat = re.sub(r"\s+", " ", prose("".join(cell["source"])))
        covered = [(m.start(), m.end()) for phrase in allowed
                   for m in re.finditer(re.escape(phrase), flat)]
        for m in NUMBER.finditer(flat):
            if not any(a <= m.start() and m.end() <= b for a, b in covered):
                found.append((n, flat[max(m.start() - context, 0):m.end() + context].strip()))
    return found


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    found = False
    for path in argv:
        for n, number in notebook_numbers(path, context=30):
            print(f"{path}: cell {n}: {number}")
            found = True
    return int(found)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
