"""What a chapter concludes points to the check that establishes it, and routine verdicts stay folded.

A check the text rests on carries a label (``rbm.checks``: ``label="chk-..."``); its verdict
prints ``verdict [chk-...]: ...``, and ``tools/index_of_checks.py`` gives the label a target in
the index of checks, so that ``{ref}`check <chk-...>``` in the text resolves (and the book's
``-W -n`` build fails when it does not).  These tests hold the chapters to that:

- every bullet of a chapter's Summary cites at least one labelled check;
- every label the text cites is printed by some check, and each label by exactly one;
- a verdict without a label is routine: its output is folded (``hide-output``), so that the
  visible verdicts are the ones the text builds on.
"""

import json
import re
from pathlib import Path

import pytest

from tool_scripts import ROOT, load_tool

index = load_tool("index_of_checks")

NOTEBOOKS = index.toc_notebooks()
# {check}`chk-...` (the page format), or the older {ref}`check <chk-...>`
CITED = re.compile(r"(?:\{check\}`|<)(chk-[a-z0-9-]+)>?`")
FOLDED = {"hide-output", "remove-output", "hide-cell", "remove-cell"}


def markdown(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]
            if c["cell_type"] == "markdown"]


def summary_bullets(path):
    """The bullets of the chapter's '## Summary' section (a bullet runs until the next one)."""
    text = "\n".join(markdown(path))
    found = re.search(r"^## Summary\s*$(.*?)(?=^#{1,2} |\Z)", text, re.M | re.S)
    if not found:
        return []
    bullets, current = [], None
    for line in found.group(1).splitlines():
        if re.match(r"^(- |\d+\. )", line):
            current = [line]
            bullets.append(current)
        elif current is not None and line.startswith(" "):
            current.append(line)
        else:
            current = None
    return [" ".join(b) for b in bullets]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_summary_bullet_cites_a_check(path):
    uncited = [b for b in summary_bullets(path) if not CITED.search(b)]
    assert not uncited, (f"{path.name}: summary bullets that state no check "
                         f"(cite one with {{check}}`chk-...`):\n" + "\n".join(uncited))


def test_every_cited_label_is_printed_by_exactly_one_check():
    printed = index.labels()
    twice = {label: where for label, where in printed.items() if len(where) > 1}
    assert not twice, f"labels printed by more than one check: {twice}"
    texts = [(p.name, t) for p in NOTEBOOKS for t in markdown(p)]
    texts.append(("intro.md", (ROOT / "intro.md").read_text()))
    missing = sorted({(name, label) for name, t in texts for label in CITED.findall(t)
                      if label not in printed})
    assert not missing, f"cited labels that no check prints: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_routine_verdicts_are_folded(path):
    visible = []
    for n, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] != "code" or FOLDED & set(cell["metadata"].get("tags", [])):
            continue
        for out in cell.get("outputs", []):
            for line in "".join(out.get("text", "")).splitlines():
                head = index.VERDICT.match(line)
                if head and not head["label"]:
                    visible.append(f"cell {n}: {line}")
    assert not visible, (f"{path.name}: routine verdicts shown to the reader (fold the output "
                         f"with the tag hide-output, or label the check the text cites):\n"
                         + "\n".join(visible))


def test_the_summary_rule_can_fail():
    """The bullet splitter sees an uncited bullet and a cited one."""
    import tempfile

    cells = [{"cell_type": "markdown", "metadata": {}, "source": [
        "## Summary\n\n- a result without a check\n  on two lines.\n"
        "- a result with one {check}`chk-a-b`.\n- an older citation ({ref}`check <chk-c-d>`).\n\n## Exercises\n\n- not a summary\n"]}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.ipynb"
        path.write_text(json.dumps({"cells": cells, "metadata": {}}))
        bullets = summary_bullets(path)
    assert len(bullets) == 3
    assert [bool(CITED.search(b)) for b in bullets] == [False, True, True]
