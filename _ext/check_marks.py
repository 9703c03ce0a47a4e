"""The ``{check}`` role: a small mark after a claim that shows and links to its check.

``{check}`chk-gradient-df``` renders as a superscript check mark. Its tooltip is the
verdict the check printed (what was checked, the measured value, the tolerance or test, the
scope) and its link opens the check's entry in the index of checks
(``reference/checks.md``), which links to the chapter's Evidence section that runs it.

The verdicts are read from the committed notebooks' outputs when the build starts
(``tools/index_of_checks.py`` collects them the same way), so a label that no notebook
prints is a warning, and ``-W`` fails the build.
"""

import posixpath
import sys
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

ROOT = Path(__file__).resolve().parent.parent
INDEX_DOCNAME = "reference/checks"
MARK = "\u2713"

logger = logging.getLogger(__name__)


def labelled_verdicts():
    """Every check label the book's notebooks print, with its verdict text."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from index_of_checks import collect, toc_notebooks
    finally:
        sys.path.pop(0)
    found = {}
    for path in toc_notebooks():
        for _, _, label, text in collect(path)[1]:
            if label:
                found[label] = text
    return found


def relative_uri(from_docname, to_docname):
    """The link from one page of the HTML book to another (``.html`` pages).

    >>> relative_uri("chapters/gradient", "reference/checks")
    '../reference/checks.html'
    >>> relative_uri("intro", "reference/checks")
    'reference/checks.html'
    """
    base = posixpath.dirname(from_docname) or "."
    return posixpath.relpath(to_docname, base) + ".html"


class CheckRole(SphinxRole):
    def run(self):
        label = self.text.strip()
        verdicts = getattr(self.env.app, "book_check_verdicts", {})
        if label not in verdicts:
            logger.warning("check mark %r: no notebook of the book prints a verdict with "
                           "this label", label, location=self.get_location())
            return [nodes.Text(MARK)], []
        uri = f"{relative_uri(self.env.docname, INDEX_DOCNAME)}#{label}"
        link = nodes.reference("", MARK, refuri=uri, internal=True,
                               reftitle=f"{label}: {verdicts[label]}",
                               classes=["check-mark"])
        return [nodes.superscript("", "", link, classes=["check-mark"])], []


def read_verdicts(app, config):
    app.book_check_verdicts = labelled_verdicts()


def setup(app):
    app.connect("config-inited", read_verdicts)
    app.add_role("check", CheckRole())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
