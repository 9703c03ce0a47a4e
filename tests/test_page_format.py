"""Chapters follow the page format of CONTRIBUTING.md: a page that teaches, its evidence at the end.

Counted here, from the committed notebooks:

- the reading flow of a formatted chapter (everything before its ``## Evidence`` section)
  shows no verdict line; the whole book shows at most ``BOOK_VERDICT_BUDGET``;
- no run of more than two fold toggles between two pieces of prose in the reading flow;
- a core chapter has at most ``CORE_PROSE_WORDS`` words of prose in its reading flow;
- a formatted chapter ends with an Evidence section, labelled ``sec-...-evidence``, and its
  text cites checks with ``{check}`` rather than the older ``{ref}`check <...>```;
- a chapter of ``GLUED_CHAPTERS`` types no number with a decimal point or a per cent sign
  in its prose (outside math, code, roles and the rows of check tables) but the settings
  and tolerances it lists: its results are glued (``tools/unglued_numbers.py``);
- no code cell that the page shows (in any chapter, in the Evidence section too) is longer than
  ``MAX_CODE_LINES`` lines, blank lines counted, except the cells of ``LONG_CODE_ALLOWED``;
- a numbered (labelled) display equation is in the visible flow, not in a fold: not in a
  ``dropdown`` of the reading flow, nor in the Evidence section, which the built page folds
  whole (``_ext/evidence_layer.py``); a derivation in a fold uses unnumbered ``$$`` math.

A chapter is *formatted* when it is in the core part of ``_toc.yml`` or listed in
``FORMATTED_ADVANCED``.
"""

import json
import re

import pytest
import yaml

from tool_scripts import ROOT, load_tool

index = load_tool("index_of_checks")
unglued = load_tool("unglued_numbers")
reading = load_tool("reading_time")

BOOK_VERDICT_BUDGET = 50
CORE_PROSE_WORDS = 4000
MAX_TOGGLE_RUN = 2
#: Advanced chapters converted to the page format (their stems, one per line); the core part
#: always is.
FORMATTED_ADVANCED = {
    "practical_recipe_measured",
    "around_the_partition_function",
    "estimating_log_z",
    "what_cd_optimises",
    "mixing_and_tempering",
    "shape_of_the_likelihood",
    "other_unit_types",
    "short_run_chains",
    "beyond_enumeration",
    "digits_full_size",
    "source_audit",
    "checking_an_implementation",
    "stacks_of_rbms",
}

#: Chapters checked for numbers typed by hand, each with the phrases that type a setting or a
#: check's tolerance on purpose (a phrase allows the numbers it covers, nowhere else).
GLUED_CHAPTERS = {
    "stacks_of_rbms": [
        "rate 0.2", "rate 0.1", "rates 0.03, 0.1 and 0.3", "rates 0.03 and 0.1",
        "rate 0.3",                # the settings of the greedy runs
        "rates 0.03 to 0.3",       # the third layer's runs
        "rates 0.01, 0.03 and 0.1", "rate 0.01",   # the DBM runs
        "seed 0, rate 0.03",       # the DBM run the page prints
        "section 3.1",             # a citation
        "s.d. 1.5", "s.d. 0.5",    # the brute-force models
        "level 0.01",              # the samplers' tests
        "between 1 % and 20 %",    # chk-stacks-mean-field-gradient
        "6000 steps at rate 0.5", "a further 1000 steps", "in 1000 steps",
        "rates 0.1 and 0.3", "rate 1.0", "rate 3.0", "6400 steps at rate 0.3",
        "for 6400 steps", "rates up to 0.3", "rates 0.01 and 0.03",
        "rates 0.1, 0.3 and 1.0",  # the settings of the longer-trained and third-layer runs
        "best rate of 0.03 to 1.0", "largest, 1.0", "smallest, 0.03",  # the rate grid
        "at rate 0.5", "more than 0.1 nats",   # a setting; chk-stacks-dbm-lag's threshold
        "at 95 %",                 # what a normal error gives
    ],
    "other_unit_types": [
        "significance 0.01", "5 % too large", "scale 0.01", "scale 0.1",
        "within 20 %",            # chk-units-clusters-bound-near-step
        "weight above 1 %",       # the threshold the count uses
        "more than 0.3 nats",     # chk-units-plain-oscillates
        "hold 90 %",              # chk-units-digits-filters-pca
        "within 0.1", "at least 0.8", "more than 0.1", "at least 0.7", "at most 0.1",
        "at least 90 %",          # the Potts checks' tolerances
    ],
}

MAX_CODE_LINES = 25
#: Code cells the page shows that may be longer than ``MAX_CODE_LINES``: (chapter stem, the
#: cell's first line) -> the reason. An entry whose cell is gone or short again fails the test.
LONG_CODE_ALLOWED = {}

HIDDEN_OUTPUT = {"hide-output", "hide-cell", "remove-output", "remove-cell"}
#: A code cell with none of these tags shows its code on the page (``hide-output`` shows it).
HIDDEN_CODE = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
EVIDENCE_HEADING = re.compile(r"^## Evidence\s*$", re.M)


def core_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [ROOT / f"{item['file']}.ipynb" for part in toc["parts"]
            if part["caption"].startswith("Core")
            for item in part["chapters"] if (ROOT / f"{item['file']}.ipynb").exists()]


CORE = core_chapters()
FORMATTED = CORE + [p for p in index.toc_notebooks() if p.stem in FORMATTED_ADVANCED]


def cells(path):
    return json.loads(path.read_text())["cells"]


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def reading_flow(nb_cells):
    """The cells before the ``## Evidence`` heading (all of them if there is none)."""
    for n, cell in enumerate(nb_cells):
        if cell["cell_type"] == "markdown" and EVIDENCE_HEADING.search("".join(cell["source"])):
            return nb_cells[:n]
    return nb_cells


_MATH_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)

#: Numbered equations in a fold today, with the reason; remove an entry once it is fixed.
NUMBERED_IN_A_FOLD_KNOWN = {}


def numbered_in_folds(nb_cells):
    """The labels of the display equations that a fold hides: in a ``dropdown`` of the
    reading flow, or in the Evidence section."""
    flow = len(reading_flow(nb_cells))
    found = []
    for n, cell in enumerate(nb_cells):
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            shown = "" if n >= flow else reading.visible_markdown(text)
            found += sorted(set(_MATH_LABEL.findall(text)) - set(_MATH_LABEL.findall(shown)))
    return found


def visible_verdict_lines(nb_cells):
    """Verdict lines in outputs that the page shows without a click."""
    found = []
    for n, cell in enumerate(nb_cells):
        if cell["cell_type"] != "code" or HIDDEN_OUTPUT & tags(cell):
            continue
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            found += [f"cell {n}: {line}" for line in "".join(text).splitlines()
                      if index.VERDICT.match(line)]
    return found


def long_code_cells(nb_cells, limit=MAX_CODE_LINES):
    """(first line, number of lines) of each shown code cell longer than `limit` lines."""
    found = []
    for cell in nb_cells:
        if cell["cell_type"] != "code" or HIDDEN_CODE & tags(cell):
            continue
        lines = "".join(cell["source"]).strip("\n").splitlines()
        if len(lines) > limit:
            found.append((lines[0], len(lines)))
    return found


def toggles(cell):
    """How many "show" buttons a code cell puts on the page."""
    t = tags(cell)
    if t & {"remove-cell"}:
        return 0
    if "hide-cell" in t:
        return 1
    return int("hide-input" in t and "remove-input" not in t) + int(
        "hide-output" in t and "remove-output" not in t)


def toggle_runs(nb_cells):
    """The number of toggles between each two pieces of prose, with the cell that starts each run."""
    runs, count, start = [], 0, None
    for n, cell in enumerate(nb_cells):
        if cell["cell_type"] == "markdown" and "".join(cell["source"]).strip():
            runs.append((start, count))
            count, start = 0, None
        elif cell["cell_type"] == "code":
            count += toggles(cell)
            start = n if start is None and toggles(cell) else start
    runs.append((start, count))
    return [(s, c) for s, c in runs if c]


def prose_words(nb_cells):
    """Words of prose: math, code, directive options, labels and roles' targets left out."""
    text = "\n".join("".join(c["source"]) for c in nb_cells if c["cell_type"] == "markdown")
    text = re.sub(r"```.*?```", " ", text, flags=re.S)       # fenced blocks: math, code
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    text = re.sub(r"\{[a-z:]+\}`[^`]*`", " ", text)          # roles: {ref}`...`, {check}`...`
    text = re.sub(r"^\s*(:{3,}.*|:[a-z-]+:.*|\(.*\)=)\s*$", " ", text, flags=re.M)
    return len(re.findall(r"[A-Za-z][A-Za-z'’-]*", text))


def test_the_book_has_core_chapters():
    assert len(CORE) >= 8


def test_book_wide_visible_verdicts_within_budget():
    counts = {p.stem: len(visible_verdict_lines(cells(p))) for p in index.toc_notebooks()}
    total = sum(counts.values())
    assert total <= BOOK_VERDICT_BUDGET, (
        f"{total} verdict lines are visible in the book (budget {BOOK_VERDICT_BUDGET}): "
        f"{ {k: v for k, v in counts.items() if v} }")


@pytest.mark.parametrize("path", FORMATTED, ids=lambda p: p.stem)
def test_reading_flow_shows_no_verdict(path):
    shown = visible_verdict_lines(reading_flow(cells(path)))
    assert not shown, f"{path.name}: verdicts on the page (move them to ## Evidence):\n" + "\n".join(shown)


@pytest.mark.parametrize("path", FORMATTED, ids=lambda p: p.stem)
def test_no_run_of_more_than_two_toggles(path):
    long_runs = [(s, c) for s, c in toggle_runs(reading_flow(cells(path))) if c > MAX_TOGGLE_RUN]
    assert not long_runs, f"{path.name}: runs of fold toggles (first cell, toggles): {long_runs}"


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_core_chapter_prose_within_budget(path):
    words = prose_words(reading_flow(cells(path)))
    assert words <= CORE_PROSE_WORDS, f"{path.name}: {words} words of prose (at most {CORE_PROSE_WORDS})"


@pytest.mark.parametrize("path", FORMATTED, ids=lambda p: p.stem)
def test_evidence_section_closes_the_chapter(path):
    md = ["".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown"]
    text = "\n".join(md)
    assert re.search(r"^\(sec-[a-z0-9-]+-evidence\)=\s*\n## Evidence\s*$", text, re.M), (
        f"{path.name}: no labelled '## Evidence' section")
    after = text[EVIDENCE_HEADING.search(text).end():]
    assert not re.search(r"^## ", after, re.M), f"{path.name}: a section follows Evidence"
    assert "{ref}`check <" not in text, f"{path.name}: cite checks with {{check}}`chk-...`"


@pytest.mark.parametrize("path", FORMATTED, ids=lambda p: p.stem)
def test_numbered_equations_are_not_folded(path):
    folded = [label for label in numbered_in_folds(cells(path))
              if label not in NUMBERED_IN_A_FOLD_KNOWN]
    assert not folded, (f"{path.name}: numbered equations in a fold (move them to the page, "
                        f"or make them unnumbered $$ math): {folded}")


def test_the_known_folded_equations_are_current():
    folded = {label for path in FORMATTED for label in numbered_in_folds(cells(path))}
    stale = set(NUMBERED_IN_A_FOLD_KNOWN) - folded
    assert not stale, f"no longer in a fold, drop from NUMBERED_IN_A_FOLD_KNOWN: {stale}"


def test_the_folded_equation_finder_can_fail():
    math = "```{{math}}\n:label: {}\nx\n```\n"
    nb = _nb(("markdown", [], "Shown:\n" + math.format("eq-shown")),
             ("markdown", [], ":::{dropdown} Proof\n" + math.format("eq-fold") + ":::\n"),
             ("markdown", [], "(sec-t-evidence)=\n## Evidence\n" + math.format("eq-ev")))
    assert numbered_in_folds(nb) == ["eq-fold", "eq-ev"]


@pytest.mark.parametrize("stem", sorted(GLUED_CHAPTERS))
def test_no_result_typed_by_hand(stem):
    found = unglued.unallowed(ROOT / "chapters" / f"{stem}.ipynb", GLUED_CHAPTERS[stem])
    assert not found, (f"{stem}: numbers typed in the prose (glue them, or allow a setting): "
                       + "; ".join(f"cell {n}: ...{text}..." for n, text in found))


def test_typed_numbers_can_fail(tmp_path):
    text = ("It ends at $-48.3$, 58 % along b, at significance 0.01; "
            "{glue:text}`x:.2f`, $\\eta = 0.05$ and `0.1` are not prose.\n\n"
            "| claim 0.17 | {check}`chk-a` |\n")
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {},
                                           "source": [text]}]}))
    found = unglued.unallowed(path, ["significance 0.01"], context=0)
    assert found == [(0, "-48.3"), (0, "58 %")]
    assert len(unglued.unallowed(path, [], context=0)) == 3


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_shown_code_cells_are_short(path):
    too_long = [(first, n) for first, n in long_code_cells(cells(path))
                if (path.stem, first) not in LONG_CODE_ALLOWED]
    assert not too_long, (
        f"{path.name}: code cells the page shows with more than {MAX_CODE_LINES} lines (split "
        f"them at a seam with a sentence of prose between, or move plumbing into rbm): "
        f"{too_long}")


def test_long_code_allow_list_is_current():
    for (stem, first), reason in LONG_CODE_ALLOWED.items():
        assert reason.strip(), f"{stem}: no reason given for {first!r}"
        found = dict(long_code_cells(cells(ROOT / "chapters" / f"{stem}.ipynb")))
        assert first in found, (f"{stem}: no shown code cell longer than {MAX_CODE_LINES} lines "
                                f"starts with {first!r}; drop it from LONG_CODE_ALLOWED")


def _nb(*spec):
    out = []
    for kind, tag_list, text in spec:
        cell = {"cell_type": kind, "metadata": {"tags": tag_list}, "source": [text]}
        if kind == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [text]}]
        out.append(cell)
    return out


def test_the_counters_can_fail():
    nb = _nb(("markdown", [], "# T\n\nSome prose here."),
             ("code", [], "verdict [chk-a]: holds\n"),
             ("code", ["hide-input", "hide-output"], "verdict: x\n"),
             ("code", ["hide-input"], "x\n"),
             ("markdown", [], "More prose, $x = 1$ and {check}`chk-a`."),
             ("code", ["remove-cell"], "verdict: hidden\n"),
             ("markdown", [], "(sec-t-evidence)=\n## Evidence"),
             ("code", [], "verdict: after\n"))
    flow = reading_flow(nb)
    assert len(flow) == 6
    assert [line.split(": ", 1)[1] for line in visible_verdict_lines(flow)] == ["verdict [chk-a]: holds"]
    assert toggle_runs(flow) == [(2, 3)]
    assert prose_words(flow[:1]) == 4 and prose_words(flow[4:5]) == 3


def test_the_code_length_counter_can_fail():
    long = "x = 1\n" * (MAX_CODE_LINES + 1)
    nb = _nb(("code", [], long), ("code", ["hide-output"], "y = 2\n" + long),
             ("code", ["hide-input"], long), ("code", ["remove-cell"], long),
             ("code", [], "z = 3\n" * MAX_CODE_LINES + "\n\n"))
    assert long_code_cells(nb) == [("x = 1", MAX_CODE_LINES + 1), ("y = 2", MAX_CODE_LINES + 2)]
