"""One notation everywhere: the symbol uses that a machine can check.

reference/notation.md fixes the book's symbols. Most of its rules need a
reader (is this a_j with or without c_j?), but some are mechanical, and this
test enforces those in every chapter's text and printed output:

- the learning rate is eta, never epsilon (ch02 once used both; epsilon stays
  free for other quantities);
- visible vectors are v, never x (ch08 once switched);
- vectors are columns, so an outer product is written v h^T, never (v, 1)^T (h, 1);
- KL(q || p) is the divergence "of the model from the data distribution";
- inside a Markdown table, a literal "\\|" is taken as an escaped cell separator
  and renders as a single bar: write \\Vert in tables.

Chapter 7 quotes the source texts' own symbols (their epsilon and x) beside
the book's; it is exempt from the first two rules only.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
QUOTES_SOURCES = {"source_audit"}

RULES = {
    # epsilon is free for other uses (a machine epsilon, a mixing share); as a
    # step it multiplies a gradient or is called the learning rate
    "learning rate written epsilon (use eta)": (
        re.compile(r"\\(var)?epsilon\s*\\(nabla|partial|frac\{\\partial)"
                   r"|(learning rate|step size),?\s*\$\\(var)?epsilon"
                   r"|\beps\s*=\s*[-+.\deE]+\s+change"), QUOTES_SOURCES),
    "visible vector written x (use v)": (
        re.compile(r"\\mathbf\{x\}|\\bx\b"), QUOTES_SOURCES),
    "outer product written as a row times a column": (
        re.compile(r"\(\s*\\bv\s*,\s*1\s*\)\^\\top"), set()),
    "KL phrased from the data to the model": (
        re.compile(r"from the data distribution to the model|"
                   r"KL divergence from the data", re.I), set()),
}


def text_of(path):
    """Markdown sources and printed outputs of a notebook (not code, not images)."""
    nb = json.loads(path.read_text())
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            parts.append("".join(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_mechanical_notation_rules(path):
    text = text_of(path)
    broken = []
    for rule, (pattern, exempt) in RULES.items():
        if path.stem in exempt:
            continue
        broken += [f"{rule}: {m.group(0)!r}" for m in pattern.finditer(text)]
    assert not broken, f"{path.name}: " + "; ".join(broken)


@pytest.mark.parametrize("page", sorted((ROOT / "reference").glob("*.md")) + [ROOT / "intro.md"],
                         ids=lambda p: p.name)
def test_no_escaped_bar_inside_table_math(page):
    rows = [line for line in page.read_text().splitlines()
            if line.startswith("|") and re.search(r"\$[^$]*\\\|[^$]*\$", line)]
    assert not rows, f"{page.name}: \\| in a table row renders as one bar: {rows}"


def test_the_rules_catch_what_they_are_for():
    samples = {
        "learning rate written epsilon (use eta)": r"a step $\epsilon\nabla\ell$",
        "learning rate written epsilon (use eta) ": "learning rate $\\varepsilon = 0.1$",
        "visible vector written x (use v)": r"$p(\mathbf{x})$",
        "outer product written as a row times a column": r"$(\bv, 1)^\top (\bh, 1)$",
        "KL phrased from the data to the model": "the KL divergence from the data distribution to the model",
    }
    for rule, sample in samples.items():
        assert RULES[rule.strip()][0].search(sample), rule
