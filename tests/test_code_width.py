"""Shown code fits the laptop's column.

The code a reader sees (a code cell without ``hide-input``, ``hide-cell``, ``remove-cell``
or ``remove-input``) is set in the book's monospace font; in the 828 px column at 1280 px
about 95 characters fit (measured in Chromium by ``tests/browser``, where a wider line is
reported as cut). This fast test keeps shown lines within 80 characters, the width the
pages are written to (it also keeps a phone's scrolling short), so that the browser test
is not the first to find a long line.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
HIDDEN = {"hide-input", "hide-cell", "remove-cell", "remove-input"}
WIDTH = 80


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_code_lines_fit_the_column(notebook):
    long = [(n, len(line)) for n, cell in enumerate(json.loads(notebook.read_text())["cells"])
            if cell["cell_type"] == "code"
            and not HIDDEN & set(cell["metadata"].get("tags", []))
            for line in "".join(cell["source"]).splitlines() if len(line) > WIDTH]
    assert not long, (f"{notebook.name}: shown code lines over {WIDTH} characters "
                      f"(cell, length): {long}")
