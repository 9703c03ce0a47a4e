"""The code a core chapter shows is the code a reader can copy: run alone, it gives the page's numbers.

For each core chapter, the visible code cells (no ``hide-input``, ``hide-cell``,
``remove-input`` or ``remove-cell`` tag) are executed in order in a fresh kernel, without any
folded or removed cell, and what each prints (streams and plain-text results; figures and glued
values aside) must equal the committed output of that cell, after the same sanitising as nbval's.
"""

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from test_page_format import CORE

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_INPUT = {"hide-input", "hide-cell", "remove-input", "remove-cell"}


def sanitizers():
    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text()
    pairs = re.findall(r"^regex: (.*)\nreplace: (.*)$", text, re.M)
    return [(re.compile(rx), rep) for rx, rep in pairs]


SANITIZE = sanitizers()


def printed(outputs):
    """What a cell printed, as text: streams and text/plain results, sanitised."""
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append("".join(out["text"]))
        elif out.get("output_type") == "execute_result":
            parts.append("".join(out["data"].get("text/plain", "")))
    text = "".join(parts)
    for rx, rep in SANITIZE:
        text = rx.sub(rep, text)
    return text


def visible_cells(path):
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()
            and not HIDDEN_INPUT & set(c.metadata.get("tags", []))]


@pytest.mark.slow
@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_visible_code_runs_alone_and_prints_the_page(path):
    shown = visible_cells(path)
    assert shown, f"{path.name} shows no code"
    expected = [printed(c.outputs) for c in shown]
    alone = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.source) for c in shown])
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # one BLAS thread, as chapters/conftest.py gives nbval's kernels: on a loaded machine
    # OpenBLAS's spinning threads made the 784 x 200 model of is_my_training_working ten
    # times slower in wall time
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    NotebookClient(alone, timeout=600, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for n, (cell, want) in enumerate(zip(alone.cells, expected)):
        got = printed(cell.outputs)
        assert got == want, (f"{path.name}, visible cell {n} prints differently when the "
                             f"visible code runs alone:\n--- page\n{want}\n--- alone\n{got}")
