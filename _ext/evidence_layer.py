"""The evidence layer, folded: each chapter's Evidence section is one fold in the HTML.

A chapter ends with its evidence (CONTRIBUTING.md): ``(sec-<stem>-evidence)=``, then
``## Evidence``, a paragraph, the claim/check table and ``###`` groups of folded check
cells.  In the built page everything after that heading goes into one
``<details class="evidence">``, closed when the page opens, whose summary says what it
holds and how many verdicts its cells print.  A reader of the page sees the heading and one
line; the notebook itself is unchanged.

- The content is moved on the resolved doctree (``doctree-resolved``), after the table of
  contents, the section numbers and the labels were collected: the sub-sections keep
  their numbers, anchors and links; only the HTML writer sees the fold.  Other builders
  get the section as it was.
- The page's own contents (``context["toc"]``, printed at the top of a printed page, and
  the "on this page" column if the theme shows it) lists "Evidence" without its
  sub-sections, which sit in the fold.
- A link to an anchor inside the fold opens it: Chromium does so for the ``<details>``
  around a link's target (since version 97), and ``_static/book.js`` does for the
  Evidence heading itself and in browsers that do not.  Without JavaScript the fold still
  opens with a click.

It also leaves the figures (and tables, code blocks) of an unnumbered page (the quickstart,
the first look) without numbers: Sphinx counts them across all unnumbered pages, so the first
look's only figure was "Fig. 3", and numbered from 1 page by page they restarted at "Fig. 1"
before chapter 1's "Fig. 1.1". Such pages refer to their figures in words, since
``{numref}`` needs a number.
"""

import re

from docutils import nodes

#: The label of a chapter's Evidence section (``tests/test_page_format.py``).
EVIDENCE_ID = re.compile(r"sec-[a-z0-9-]+-evidence")
#: A verdict line, as ``rbm.checks`` prints it (``tools/index_of_checks.py``).
VERDICT = re.compile(r"^verdict(?: \[chk-[a-z0-9-]+\])?: ", re.M)


class evidence_fold(nodes.General, nodes.Element):  # noqa: N801 (a docutils node's name)
    """The content of an Evidence section after its title; ``checks``: verdicts it prints."""


def is_evidence(section):
    return any(EVIDENCE_ID.fullmatch(i) for i in section["ids"])


def count_verdicts(node):
    """The verdict lines printed by the cell outputs under `node`.

    >>> out = nodes.literal_block("", "verdict: a\\nverdict [chk-x-y]: b\\nx", classes=["output"])
    >>> src = nodes.literal_block("", "verdict: in code", classes=["cell_input"])
    >>> count_verdicts(nodes.container("", out, src))
    2
    """
    return sum(len(VERDICT.findall(block.astext()))
               for block in node.findall(nodes.literal_block) if "output" in block["classes"])


def fold_evidence(doctree):
    """Move the content of each Evidence section (after its title) into an `evidence_fold`.

    Returns the folds made.

    >>> doc = nodes.document(None, None)
    >>> doc += nodes.section("", nodes.title("", "Summary"), nodes.paragraph("", "s"),
    ...                      ids=["summary"])
    >>> sub = nodes.section("", nodes.title("", "Checks"), ids=["checks"])
    >>> sub += nodes.literal_block("", "verdict: holds", classes=["output"])
    >>> doc += nodes.section("", nodes.title("", "Evidence"), nodes.paragraph("", "e"), sub,
    ...                      ids=["evidence", "sec-x-evidence"])
    >>> [fold["checks"] for fold in fold_evidence(doc)]
    [1]
    >>> [child.tagname for child in doc[1]]
    ['title', 'evidence_fold']
    >>> [child.tagname for child in doc[1][1]], doc[0][1].tagname
    (['paragraph', 'section'], 'paragraph')
    >>> fold_evidence(doc)          # once only
    []
    """
    folds = []
    for section in list(doctree.findall(nodes.section)):
        if not is_evidence(section) or any(isinstance(c, evidence_fold) for c in section):
            continue
        start = 1 if section.children and isinstance(section[0], nodes.title) else 0
        content = section.children[start:]
        fold = evidence_fold()
        section.children = section.children[:start]
        section += fold
        fold.extend(content)
        fold["checks"] = count_verdicts(fold)
        folds.append(fold)
    return folds


def summary_text(checks):
    """The fold's one visible line.

    >>> summary_text(12)
    'The evidence: how each claim on this page is checked (12 checks)'
    >>> summary_text(1)[-9:], summary_text(0)[-8:]
    ('(1 check)', 'checked.')
    """
    text = "The evidence: how each claim on this page is checked"
    if not checks:
        return text + "."
    return f"{text} ({checks} check{'s' if checks != 1 else ''})"


def visit_fold_html(self, node):
    self.body.append(self.starttag(node, "details", "", CLASS="evidence"))
    self.body.append(f'<summary>{self.encode(summary_text(node["checks"]))}</summary>\n')


def depart_fold_html(self, node):
    self.body.append("</details>\n")


def fold_for_html(app, doctree, docname):
    if app.builder.format == "html":
        fold_evidence(doctree)


_LIST_TAG = re.compile(r"<(/?)ul\b[^>]*>")


def drop_subsections(toc, anchor):
    """The page's contents `toc` (HTML) without the entries nested under `anchor`.

    >>> toc = ('<ul><li><a href="#a">A</a></li>\\n<li><a href="#evidence">E</a>'
    ...        '<ul>\\n<li><a href="#x">X</a><ul><li>Y</li></ul></li>\\n</ul>\\n</li>\\n</ul>')
    >>> drop_subsections(toc, "#evidence")
    '<ul><li><a href="#a">A</a></li>\\n<li><a href="#evidence">E</a>\\n</li>\\n</ul>'
    >>> drop_subsections(toc, "#a") == toc      # no nested list before its item ends
    True
    """
    link = toc.find(f'href="{anchor}"')
    if link < 0:
        return toc
    start = toc.find("<ul", link)
    if start < 0 or -1 < toc.find("</li>", link) < start:
        return toc
    depth = 0
    for tag in _LIST_TAG.finditer(toc, start):
        depth += -1 if tag[1] else 1
        if depth == 0:
            return toc[:start] + toc[tag.end():]
    return toc


def contents_without_evidence_parts(app, pagename, templatename, context, doctree):
    if doctree is None or not context.get("toc"):
        return
    for section in doctree.findall(nodes.section):
        if is_evidence(section):
            context["toc"] = drop_subsections(context["toc"], f"#{section['ids'][0]}")


def unnumber_figures_of_unnumbered_pages(app, env):
    """Drop the numbers of the figures (and tables, code blocks) of each unnumbered page."""
    changed = []
    for docname, by_type in env.toc_fignumbers.items():
        if env.toc_secnumbers.get(docname):
            continue
        for numbers in by_type.values():
            if numbers:
                numbers.clear()
                changed.append(docname)
    return sorted(set(changed))


def setup(app):
    app.add_node(evidence_fold, html=(visit_fold_html, depart_fold_html))
    app.connect("doctree-resolved", fold_for_html)
    app.connect("html-page-context", contents_without_evidence_parts)
    app.connect("env-get-updated", unnumber_figures_of_unnumbered_pages, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
