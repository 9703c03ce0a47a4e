"""Every committed notebook is executed, clean and deterministic in its form.

nbval skips cells that were never executed, so a notebook committed without
outputs would pass it silently; these tests close that gap.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
TOC = (ROOT / "_toc.yml").read_text()


def test_there_are_notebooks():
    assert NOTEBOOKS, "chapters/ holds no notebooks"


@pytest.fixture(params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def notebook(request):
    return request.param, json.loads(request.param.read_text())


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def test_every_code_cell_is_executed_in_order(notebook):
    path, nb = notebook
    counts = [c["execution_count"] for c in code_cells(nb)]
    assert None not in counts, f"{path.name}: a code cell was never executed"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not run top to bottom once"


def test_no_committed_error_output(notebook):
    path, nb = notebook
    for cell in code_cells(nb):
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"{path.name}: error output {out.get('ename')}"
            assert out.get("name") != "stderr", f"{path.name}: stderr output {out.get('text')}"


def test_no_timing_metadata_or_machine_paths(notebook):
    path, nb = notebook
    machine_path = re.compile(r"(/tmp/|/root/|/work/|/home/|site-packages|0x[0-9a-f]{8,})")
    for cell in nb["cells"]:
        assert "execution" not in cell.get("metadata", {}), f"{path.name}: timing metadata"
        assert "ExecuteTime" not in cell.get("metadata", {}), f"{path.name}: timing metadata"
        for out in cell.get("outputs", []):
            found = machine_path.search(json.dumps(out))
            assert not found, f"{path.name}: output holds {found.group(0)!r}"


def test_first_cell_is_a_title(notebook):
    path, nb = notebook
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and "".join(first["source"]).startswith("# ")


def test_listed_in_table_of_contents(notebook):
    path, _ = notebook
    assert f"chapters/{path.stem}" in TOC, f"{path.name} is not in _toc.yml"


def test_no_inline_formula_is_broken_before_a_list_marker(notebook):
    """A line starting with '+ ' or '- ' inside an open $...$ becomes a list item, raw TeX."""
    path, nb = notebook
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = "".join(cell["source"]).split("\n")
        for before, line in zip(lines, lines[1:]):
            opened = before.count("$") % 2 == 1 and "$$" not in before
            assert not (opened and re.match(r"^\s*[+*-] ", line)), (
                f"{path.name}: inline formula broken before {line[:40]!r}")


def test_figures_use_the_book_style_and_each_is_in_one_format(notebook):
    """A notebook that shows figures applies rbm.plotting.use_book_style, which
    shows line art as SVG and pictures as PNG; no figure is stored in two formats."""
    path, nb = notebook
    figures = [set(k for k in o.get("data", {}) if k.startswith("image/"))
               for c in code_cells(nb) for o in c.get("outputs", [])]
    figures = [f for f in figures if f]
    if not figures:
        return
    sources = "\n".join("".join(c["source"]) for c in code_cells(nb))
    assert re.search(r"^use_book_style\(\)", sources, re.M), (
        f"{path.name}: shows figures without calling use_book_style()")
    assert all(f in ({"image/svg+xml"}, {"image/png"}) for f in figures), (
        f"{path.name}: a figure stored in {figures}")
    # SVGs carry no date and fixed ids: re-executing rewrites them identically.
    for c in code_cells(nb):
        for o in c.get("outputs", []):
            svg = "".join(o.get("data", {}).get("image/svg+xml", ""))
            assert "<dc:date>" not in svg, f"{path.name}: an SVG with a date"


#: a float written with more significant digits than rbm.checks.glue keeps
_LONG_FLOAT = re.compile(r"[-+]?(?:\d+\.\d+|\.\d+)(?:e[-+]?\d+)?")


def significant_digits(text):
    """Significant digits of a float's repr: ``'0.53224165'`` has 8, ``'4.4327607e-05'`` 8."""
    mantissa = text.lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def test_significant_digits_counts_the_mantissa():
    assert significant_digits("0.5322416516549026") == 16
    assert significant_digits("-48.0") == 3
    assert significant_digits("4.4327607e-05") == 8


def test_glued_floats_hold_no_more_digits_than_another_processor_reproduces(notebook):
    """A glued float's last digits depend on the processor: rbm.checks.glue keeps 8."""
    from rbm.checks import GLUE_DIGITS

    path, nb = notebook
    for cell in code_cells(nb):
        for out in cell["outputs"]:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain", "")
            if name and _LONG_FLOAT.fullmatch(text):
                assert significant_digits(text) <= GLUE_DIGITS + 1, (
                    f"{path.name}: {name} is glued as {text}; glue it through rbm.checks.glue")
