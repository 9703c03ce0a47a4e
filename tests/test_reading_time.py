"""The core part's reading budget (tools/reading_time.py): the estimate and what it counts.

The estimate: visible prose words / 150 + one minute per display equation and per figure +
half a minute per code cell whose source is shown. Folded blocks (``dropdown``) and cells
whose source is hidden are not read, nor is a chapter's Evidence section after its heading
(the built page folds it whole, ``_ext/evidence_layer.py``); the ``{check}`` marks in the
visible prose are counted.
"""
import json

from tool_scripts import load_tool

reading = load_tool("reading_time")


def notebook(tmp_path, cells, name="page"):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text, tags=(), outputs=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": text,
            "outputs": list(outputs), "execution_count": 1}


PNG = {"output_type": "display_data", "data": {"image/png": "iVBO", "text/plain": "<Figure>"},
       "metadata": {}}


def test_the_counter_counts_what_is_shown(tmp_path):
    page = notebook(tmp_path, [
        md("One two three {check}`chk-a` four $x^2$.\n\n```{math}\na = b\n```\n"),
        md(":::{dropdown} Evidence\nfive six seven {check}`chk-b`\n:::\n"),
        md("```{admonition} Folded\n:class: dropdown\nhidden words here\n```\nafter"),
        code("print(1)"),
        code("import numpy", tags=["hide-input"], outputs=[PNG]),
        code("plot()", tags=["remove-cell"], outputs=[PNG]),
        code("plot()", tags=["hide-cell"], outputs=[PNG]),
    ])
    caption = {"mystnb": {"figure": {"caption": "Two words {check}`chk-c`."}}}
    with_caption = notebook(tmp_path, [dict(code("plot()", outputs=[PNG]), metadata=caption)],
                            name="captioned")
    c = reading.page_time(with_caption)
    assert (c["words"], c["figures"], c["code_cells"], c["check_marks"]) == (2, 1, 1, 1), c
    t = reading.page_time(page)
    assert (t["words"], t["equations"], t["figures"], t["code_cells"], t["check_marks"]) == (
        6, 1, 1, 1, 1), t
    assert abs(t["minutes"] - (6 / 150 + 1 + 1 + 0.5)) < 1e-12


def test_nested_folds_and_fences(tmp_path):
    """A fenced block inside a dropdown is folded with it; text after the dropdown is read."""
    page = notebook(tmp_path, [md("::::{dropdown} Solution\n```{math}\nx\n```\nwords words\n"
                                  "::::\nread me")])
    t = reading.page_time(page)
    assert (t["words"], t["equations"]) == (2, 0), t


def test_the_evidence_section_is_not_read(tmp_path):
    """After ``## Evidence`` nothing counts, in its own cell or the cells after it."""
    page = notebook(tmp_path, [
        md("One two.\n\n(sec-t-evidence)=\n## Evidence\n\nfolded words {check}`chk-a`\n"),
        md("### A group\n\nmore folded words $$x$$"),
        code("print(2)", tags=["hide-output"], outputs=[PNG]),
    ])
    t = reading.page_time(page)
    assert (t["words"], t["equations"], t["figures"], t["code_cells"], t["check_marks"]) == (
        3, 0, 0, 0, 0), t


def test_core_pages_are_the_core_parts():
    stems = [p.stem for p in reading.core_pages()]
    assert stems[:2] == ["quickstart", "first_look"] and len(stems) == 10, stems


CORE_MINUTES = 120
MAX_CHECK_MARKS = 10


def test_the_core_reads_in_two_hours(capsys):
    """The core part's estimate is within ``CORE_MINUTES``; each page's share is printed."""
    rows = [reading.page_time(p) for p in reading.core_pages()]
    total = sum(r["minutes"] for r in rows)
    with capsys.disabled():
        print("\nreading time of the core: " + ", ".join(
            f"{r['page']} {r['minutes']:.1f}" for r in rows) + f"; in all {total:.1f} min")
    assert total <= CORE_MINUTES, f"the core reads in {total:.1f} minutes (at most {CORE_MINUTES})"


def test_at_most_ten_check_marks_a_core_page():
    over = {r["page"]: r["check_marks"] for r in map(reading.page_time, reading.core_pages())
            if r["check_marks"] > MAX_CHECK_MARKS}
    assert not over, f"core pages with more than {MAX_CHECK_MARKS} check marks in view: {over}"
