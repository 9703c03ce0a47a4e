"""The evidence layer folded (_ext/evidence_layer.py): its doctests, and a small Sphinx build.

The build has a numbered chapter whose Evidence section holds a paragraph, a sub-section
with a printed verdict and a second sub-section, and two unnumbered pages with a figure
each.  The browser test (tests/browser) checks the fold in Chromium on the book itself.
"""

import doctest
import re
import sys
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parent.parent / "_ext"
sys.path.insert(0, str(EXT))
import evidence_layer  # noqa: E402

CHAPTER = """\
Chapter
=======

Claim
-----

A claim.

.. _sec-t-evidence:

Evidence
--------

What the section holds.

Group one
~~~~~~~~~

.. code-block:: text
   :class: output

   verdict [chk-t-a]: holds
   verdict: holds too

Group two
~~~~~~~~~

More.
"""


def figure_page(title, name):
    return (f"{title}\n{'=' * len(title)}\n\n.. figure:: dot.png\n   :name: {name}\n\n"
            "   A caption.\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from sphinx.application import Sphinx

    src = tmp_path_factory.mktemp("src")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXT)!r})\n"
        "extensions = ['evidence_layer']\nnumfig = True\nhtml_theme = 'basic'\n"
        "html_sidebars = {'**': ['localtoc.html']}\n")
    (src / "index.rst").write_text(
        "Book\n====\n\n.. toctree::\n\n   front\n   second\n\n"
        ".. toctree::\n   :numbered:\n\n   chapter\n")
    (src / "front.rst").write_text(figure_page("Front", "fig-front"))
    (src / "second.rst").write_text(figure_page("Second", "fig-second"))
    (src / "chapter.rst").write_text(CHAPTER)
    # A 1 x 1 PNG.
    (src / "dot.png").write_bytes(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"))
    out = tmp_path_factory.mktemp("html")
    app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html",
                 status=None, warning=None, freshenv=True)
    app.build()
    return out


def test_the_doctests_of_the_extension():
    failures, tried = doctest.testmod(evidence_layer)
    assert tried >= 8 and failures == 0


def test_everything_after_the_heading_is_one_closed_fold(built):
    page = (built / "chapter.html").read_text()
    fold = re.search(r'<details class="evidence">\s*<summary>(.*?)</summary>(.*?)</details>',
                     page, re.S)
    assert fold, "no evidence fold"
    assert fold[1] == "The evidence: how each claim on this page is checked (2 checks)"
    inside = fold[2]
    assert "What the section holds." in inside
    assert inside.count("<h3>") == 2 and "1.2.1. </span>Group one" in inside, (
        "the sub-sections are in the fold, with their numbers")
    assert "A claim." not in inside
    heading = page.index("</span>Evidence<")
    assert heading < page.index('<details class="evidence">'), "the heading stays outside"


def test_the_contents_list_evidence_without_its_parts(built):
    """The page's contents (``context["toc"]``, in the sidebar of the basic theme)."""
    page = (built / "chapter.html").read_text()
    assert '<a class="reference internal" href="#evidence">' in page
    assert '<a class="reference internal" href="#claim">' in page
    assert '<a class="reference internal" href="#group-one">' not in page


def test_the_figures_of_unnumbered_pages_are_unnumbered(built):
    for page in ("front", "second"):
        text = (built / f"{page}.html").read_text()
        assert '<span class="caption-number">' not in text, page
