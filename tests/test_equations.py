"""Display equations read on one line on a laptop and fit a phone.

An equation too long for a phone's column marks where it breaks there with the TeX
comment ``%brk`` (``_ext/book_fixes.py`` gives it a phone copy broken at the marks;
every other renderer, Jupyter included, reads a comment and shows one line). A line
break written ``\\\\`` and continued by an indented operator (``&\\quad +``) breaks the
equation on every screen: on a laptop it reads choppily. These tests find such breaks
in every page's display math and check that the marks sit only where the phone copy
can use them. Whether each copy fits its screen is measured in Chromium
(``tests/browser``).
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
DISPLAY_MATH = re.compile(r"\$\$(.*?)\$\$|```\{math\}(.*?)```", re.S)
# A row break whose next row continues the expression: an indent, then + or -.
PHONE_ONLY_BREAK = re.compile(r"\\\\[ \t]*\n[ \t]*&[ \t]*\\q?quad[ \t]*[-+]")


def display_math(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            for match in DISPLAY_MATH.finditer(text):
                yield match[1] if match[1] is not None else match[2]


def test_the_break_pattern_finds_a_continued_row_and_nothing_else():
    assert PHONE_ONLY_BREAK.search("a &= b\\\\\n  &\\quad - c")
    assert PHONE_ONLY_BREAK.search("a &= b\\\\\n&\\qquad + c")
    assert not PHONE_ONLY_BREAK.search("a &= b\\\\\n  &= c")
    assert not PHONE_ONLY_BREAK.search("a &= b %brk\n  - c")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_equation_is_broken_for_phones_on_every_screen(notebook):
    broken = [body.strip().splitlines()[0] for body in display_math(notebook)
              if PHONE_ONLY_BREAK.search(body)]
    assert not broken, (f"{notebook.name}: equations continued on an indented row; "
                        f"write the break as '%brk' (see this file's docstring): {broken}")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_phone_marks_sit_in_display_math_only(notebook):
    cells = [cell for cell in json.loads(notebook.read_text())["cells"]
             if cell["cell_type"] == "markdown"]
    outside = [line for cell in cells
               for line in DISPLAY_MATH.sub("", "".join(cell["source"])).splitlines()
               if "%brk" in line]
    assert not outside, f"{notebook.name}: '%brk' outside display math: {outside}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_equation_references_are_not_put_in_a_second_pair_of_parentheses(notebook):
    """``{eq}`` prints "(1.3)" itself (math_eqref_format in _config.yml)."""
    text = "".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]
                   if cell["cell_type"] == "markdown")
    doubled = re.findall(r"\(\{eq\}`[^`]*`", text)
    assert not doubled, f"{notebook.name}: '(' before an equation reference: {doubled}"
