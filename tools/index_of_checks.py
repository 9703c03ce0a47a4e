"""Write reference/checks.md: every verdict the book prints, linked to the section that checks it.

Usage: python tools/index_of_checks.py [--check]

A chapter states a claim, then a code cell asserts it and prints a line
starting with "verdict:". This script walks the notebooks in the order of
_toc.yml, collects those lines with the section they appear in, and writes
the index page. With --check it only compares: tests/test_index_of_checks.py
fails when the committed page is stale.
"""

import json
import re
import sys
from pathlib import Path

from docutils.nodes import make_id

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "reference" / "checks.md"
HEADER = """# Index of checks

Every claim that a chapter checks by machine, in reading order: each entry is
the one-line verdict a code cell prints after its assertion passed, linked to
the section that states the claim. For each chapter, the checks its text
cites (by their label, such as `chk-estimating-bias-not-monotone`) come
first; the routine checks, whose verdicts the chapter keeps folded, follow in
a table. A "check" link in a chapter lands on its entry here, marked.

```{contents} Chapters
:local:
:depth: 1
:backlinks: none
```
"""


# "verdict: text", or "verdict [chk-label]: text" for a check the text cites (rbm.checks.verdict)
VERDICT = re.compile(r"verdict(?: \[(?P<label>chk-[a-z0-9-]+)\])?: ")


def toc_entries():
    """(path, number) of every chapter notebook in _toc.yml's order; number is the book's
    chapter number ("8", or "12.1" for a section) or None in an unnumbered part."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries, count = [], 0

    def walk(items, numbered, prefix):
        nonlocal count
        for position, item in enumerate(items, start=1):
            if prefix is None:
                count += numbered
                number = str(count) if numbered else None
            else:
                number = f"{prefix}.{position}"
            path = ROOT / f"{item['file']}.ipynb"
            if path.exists():
                entries.append((path, number))
            walk(item.get("sections", []), numbered, number if numbered else None)

    for part in toc["parts"]:
        walk(part["chapters"], bool(part.get("numbered")), None)
    return entries


def toc_notebooks():
    return [path for path, _ in toc_entries()]


def heading_text(line):
    """A heading's markdown text (its math still in dollars)."""
    return line.lstrip("#").strip()


def collect(path):
    nb = json.loads(path.read_text())
    title, section, slug, rows = path.stem, None, None, []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            in_fence = False
            for line in "".join(cell["source"]).splitlines():
                if line.startswith(("```", ":::")):
                    in_fence = not in_fence
                if in_fence or not re.match(r"^#{1,3} ", line):
                    continue
                text = heading_text(line)
                if line.startswith("# "):
                    title = text
                    continue
                # docutils makes the id from the rendered text: math and code lose their markers
                section, slug = text, make_id(re.sub(r"[`$]", "", text))
        elif cell["cell_type"] == "code":
            for out in cell.get("outputs", []):
                if out.get("output_type") != "stream" or out.get("name") != "stdout":
                    continue
                in_verdict = False
                for line in "".join(out["text"]).splitlines():
                    head = VERDICT.match(line)
                    if head:
                        rows.append((section, slug, head["label"], line[head.end():].strip()))
                        in_verdict = True
                    elif in_verdict and line.startswith("    "):  # a wrapped verdict goes on
                        *place, text = rows[-1]
                        rows[-1] = (*place, f"{text} {line.strip()}")
                    else:
                        in_verdict = False
    return title, rows


# Characters that Markdown (MyST, with its dollar math and roles) would read as markup;
# a verdict is plain text, so each is escaped ("2**31 and 2**40" must not turn bold).
MARKDOWN_ACTIVE = re.compile(r"([\\`*_{}\[\]<>|$~])")


def literal(text):
    """``text`` escaped so that Markdown shows it as written."""
    return MARKDOWN_ACTIVE.sub(r"\\\1", text)


def render():
    parts, total = [HEADER], 0
    for path, number in toc_entries():
        title, rows = collect(path)
        if not rows:
            continue
        total += len(rows)
        if number:
            title = f"{number}. {title}"
        # Section ids are docutils' (the browser test checks every anchor); MyST does not
        # resolve "#anchor" links into notebooks, so these are plain HTML links.
        page = f"../chapters/{path.stem}.html"
        parts.append(f"\n## {title}")
        routine, cited = [], []
        for section, slug, label, verdict in rows:
            where = f"{section} <a href=\"{page}#{slug}\">&#8599;</a>" if section else (
                f"<a href=\"{page}\">{title}</a>")
            (cited if label else routine).append((where, label, verdict))
        # The checks the text cites come first, each under a target of its label, so that
        # {ref}`check <chk-...>` in a chapter lands on it; the routine checks follow in a table.
        if cited:
            parts.append("\n**Checks the text cites**")
            for where, label, verdict in cited:
                parts.append(f"\n({label})=\n`{label}`: {literal(verdict)} (section: {where})")
        if routine:
            parts.append("\n**Routine checks**\n\n| section (&#8599; opens it) | verdict |\n|---|---|")
            for where, _, verdict in routine:
                parts.append(f"| {where} | {literal(verdict)} |")
    parts.insert(1, f"\n{total} checks in all.\n")
    return "\n".join(parts) + "\n"


def labels():
    """Every check label the notebooks print, mapped to the notebook that prints it."""
    found = {}
    for path in toc_notebooks():
        for _, _, label, _ in collect(path)[1]:
            if label:
                found.setdefault(label, []).append(path.name)
    return found


def main(check=False):
    text = render()
    if check:
        return PAGE.exists() and PAGE.read_text() == text
    PAGE.write_text(text)
    return True


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    ok = main(check)
    if check and not ok:
        raise SystemExit("reference/checks.md is stale: run `make checks-index`")
