"""How long the core part takes to read, page by page, from the committed notebooks.

The estimate is the one the book's reading budget is stated in: the visible words of
prose at 150 a minute, one minute per display equation and per figure, and half a minute
per code cell whose source is shown.  What a reader has to open is not counted: a
``dropdown`` (folded) block, a cell tagged ``hide-input``, ``hide-cell``, ``remove-cell``
or ``remove-input`` (its figure still counts when its output is shown unfolded, and so does
its caption, ``mystnb.figure.caption``, as prose; an output folded by ``hide-cell`` or
``hide-output`` is not read).  A chapter's Evidence section is one fold in the built page
(``_ext/evidence_layer.py``): its heading is read, nothing after it.  Check marks are the
``{check}`` roles in the visible prose and captions.

    python tools/reading_time.py          # a table of the core's pages, and the total
"""
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 150
MINUTES_PER_EQUATION = 1.0
MINUTES_PER_FIGURE = 1.0
MINUTES_PER_CODE_CELL = 0.5
HIDDEN_SOURCE = {"hide-input", "hide-cell", "remove-cell", "remove-input"}
NO_OUTPUT = {"remove-cell", "remove-output", "hide-cell", "hide-output"}
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")


def core_pages(toc_path=ROOT / "_toc.yml"):
    """The notebooks of the parts whose caption starts with "Core", in reading order."""
    toc = yaml.safe_load(Path(toc_path).read_text())
    pages = []
    for part in toc["parts"]:
        if part.get("caption", "").startswith("Core"):
            pages += [ROOT / (chapter["file"] + ".ipynb") for chapter in part["chapters"]]
    return pages


_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\s*(?P<head>.*)$")


def visible_markdown(text):
    """The markdown a reader sees without opening anything: folded blocks removed.

    A fenced block (backticks or colons) whose directive is ``dropdown``, or whose
    options say ``:class: dropdown``, is removed with everything inside it.
    """
    lines = text.splitlines()
    kept, stack = [], []          # stack of (fence, folded) for the open fenced blocks
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _FENCE.match(line.strip())
        if match and stack and match["fence"] == stack[-1][0] and not match["head"]:
            _, folded = stack.pop()
            if not any(f for _, f in stack) and not folded:
                kept.append(line)
            i += 1
            continue
        if match and match["head"].startswith("{"):
            folded = match["head"].startswith("{dropdown}")
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith(":") and \
                    not _FENCE.match(lines[j].strip()):
                if re.match(r":class:.*\bdropdown\b", lines[j].strip()):
                    folded = True
                j += 1
            stack.append((match["fence"], folded))
        if not any(f for _, f in stack):
            kept.append(line)
        i += 1
    return "\n".join(kept)


#: The start of a chapter's Evidence section (its label and heading, CONTRIBUTING.md).
EVIDENCE = re.compile(r"^\(sec-[a-z0-9-]+-evidence\)=[ \t]*\n## Evidence[ \t]*$", re.M)

_DISPLAY_MATH = re.compile(r"(`{3,})\{math\}.*?\1|\$\$.*?\$\$|\\begin\{(equation|align)\*?\}.*?"
                           r"\\end\{\2\*?\}", re.S)
_FIGURE_DIRECTIVE = re.compile(r"^[`:]{3,}\{(glue:figure|figure|image)\}", re.M)


def prose_words(markdown):
    """Words of prose: display math, directive lines and options, roles' markup removed;
    inline math and a glued number count as one word each."""
    text = _DISPLAY_MATH.sub(" ", markdown)
    text = re.sub(r"^\s*[`:]{3,}.*$", " ", text, flags=re.M)          # fences
    text = re.sub(r"^\s*:[a-z-]+:.*$", " ", text, flags=re.M)          # directive options
    text = re.sub(r"^\s*\(([^)]*)\)=\s*$", " ", text, flags=re.M)     # labels
    text = re.sub(r"\{check\}`[^`]*`", " ", text)
    text = re.sub(r"\{[a-z:]+\}`[^`]*`", " x ", text)                  # other roles
    text = re.sub(r"\$[^$]+\$", " x ", text)                           # inline math
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)               # links
    text = re.sub(r"<[^>]+>", " ", text)                               # html tags
    text = re.sub(r"^\s*\|?[-:| ]+\|?\s*$", " ", text, flags=re.M)     # table rules
    return len(re.findall(r"[A-Za-z0-9\u00c0-\u024f\u0370-\u03ff]+", text))


def page_time(path):
    """A dict with the counts and the minutes of one notebook."""
    cells = json.loads(Path(path).read_text())["cells"]
    words = equations = figures = code = checks = 0
    for cell in cells:
        source = "".join(cell["source"])
        tags = set(cell.get("metadata", {}).get("tags", []))
        evidence = EVIDENCE.search(source) if cell["cell_type"] == "markdown" else None
        if evidence:                        # the rest of the page is folded
            source = source[:evidence.end()]
        if cell["cell_type"] == "markdown":
            shown = visible_markdown(source)
            words += prose_words(shown)
            equations += len(_DISPLAY_MATH.findall(shown))
            figures += len(_FIGURE_DIRECTIVE.findall(shown))
            checks += len(re.findall(r"\{check\}`", shown))
        elif cell["cell_type"] == "code":
            if not tags & HIDDEN_SOURCE and source.strip():
                code += 1
            if not tags & NO_OUTPUT:
                figures += sum(any(t in out.get("data", {}) for t in IMAGE_TYPES)
                               for out in cell.get("outputs", []))
                caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get(
                    "caption", "")                  # shown under the figure, read with it
                if caption:
                    words += prose_words(caption)
                    checks += len(re.findall(r"\{check\}`", caption))
        if evidence:
            break
    minutes = (words / WORDS_PER_MINUTE + MINUTES_PER_EQUATION * equations
               + MINUTES_PER_FIGURE * figures + MINUTES_PER_CODE_CELL * code)
    return dict(page=Path(path).stem, words=words, equations=equations, figures=figures,
                code_cells=code, check_marks=checks, minutes=minutes)


def main():
    rows = [page_time(p) for p in core_pages()]
    print(f"{'page':<34}{'words':>7}{'eqs':>5}{'figs':>5}{'code':>5}{'checks':>7}{'min':>7}")
    for r in rows:
        print(f"{r['page']:<34}{r['words']:>7}{r['equations']:>5}{r['figures']:>5}"
              f"{r['code_cells']:>5}{r['check_marks']:>7}{r['minutes']:>7.1f}")
    print(f"{'core':<34}{sum(r['words'] for r in rows):>7}"
          f"{sum(r['equations'] for r in rows):>5}{sum(r['figures'] for r in rows):>5}"
          f"{sum(r['code_cells'] for r in rows):>5}{sum(r['check_marks'] for r in rows):>7}"
          f"{sum(r['minutes'] for r in rows):>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
