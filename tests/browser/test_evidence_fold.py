"""The evidence layer in Chromium: one closed fold at the end of each chapter, opened by a link.

``_ext/evidence_layer.py`` puts everything after a chapter's ``## Evidence`` heading in one
``<details class="evidence">``.  On every core page it is closed when the page opens and
its sub-headings are not shown; a check mark's way to its check (the index of checks, then
the entry's link into the evidence) lands on the anchor with the fold open; so do a link
to the Evidence heading itself and an in-page link (``_static/book.js``).
"""

import re

import pytest

from test_book_in_browser import HTML, core_chapters

# Each core chapter's evidence (after its heading) is one fold.
FOLD = "article.bd-article details.evidence"


def entry_links_into_the_evidence(page_path):
    """The index of checks' links into `page_path` that land in its evidence: on an anchor
    inside the fold, or on the Evidence heading."""
    index = (HTML / "reference" / "checks.html").read_text(encoding="utf-8")
    page = (HTML / page_path).read_text(encoding="utf-8")
    heading = re.search(r'<section id="([^"]+)">\s*<span id="sec-[a-z0-9-]+-evidence">', page)
    fold = page[page.index('<details class="evidence">'):]
    name = page_path.split("/")[-1]
    anchors = re.findall(rf'href="\.\./chapters/{re.escape(name)}#([^"]+)"', index)
    inside = [a for a in dict.fromkeys(anchors) if f'id="{a}"' in fold]
    return inside + [a for a in dict.fromkeys(anchors) if a == heading[1]]


@pytest.mark.parametrize("page_path", core_chapters())
def test_the_evidence_is_one_closed_fold_at_load(page_path, server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server + page_path, wait_until="load")
    folds = page.locator(FOLD)
    assert folds.count() == 1, f"{page_path}: {folds.count()} evidence folds"
    fold = folds.first
    assert not fold.evaluate("d => d.open"), f"{page_path}: the evidence is open at load"
    summary = fold.locator(":scope > summary")
    assert summary.is_visible()
    assert re.fullmatch(r"The evidence: how each claim on this page is checked "
                        r"\(\d+ checks?\)", summary.inner_text().strip()), summary.inner_text()
    hidden = fold.locator("h3, table, div.cell").evaluate_all(
        "els => els.filter(e => e.checkVisibility()).length")
    assert hidden == 0, f"{page_path}: {hidden} sub-headings, tables or cells of the fold shown"
    heading = page.locator("article.bd-article h2", has_text="Evidence").last
    assert heading.is_visible()
    page.close()


@pytest.mark.parametrize("page_path", core_chapters())
def test_a_link_into_the_evidence_opens_it(page_path, server, browser):
    """The way from a check mark: its entry in the index of checks, then the entry's link
    to the section that runs the check (inside the fold where there is one)."""
    anchors = entry_links_into_the_evidence(page_path)
    assert anchors, f"no entry of the index of checks links into {page_path}'s evidence"
    anchor = anchors[0]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server + "reference/checks.html", wait_until="load")
    page.locator(f'a[href$="{page_path.split("/")[-1]}#{anchor}"]').first.click()
    page.wait_for_url(f"**/{page_path}#{anchor}")
    page.wait_for_function(f"() => document.querySelector({FOLD!r}).open", timeout=5000)
    assert page.locator(f'[id="{anchor}"]').first.is_visible()
    assert page.locator(f"{FOLD} > summary").is_visible()
    page.close()


def test_the_evidence_heading_and_an_in_page_link_open_it(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server + "chapters/gradient.html#evidence", wait_until="load")
    page.wait_for_function(f"() => document.querySelector({FOLD!r}).open", timeout=5000)
    assert page.locator(f"{FOLD} h3").first.is_visible()
    page.goto(server + "chapters/gradient.html", wait_until="load")
    assert not page.locator(FOLD).evaluate("d => d.open")
    page.evaluate("() => { location.hash = '#sec-gradient-evidence'; }")
    page.wait_for_function(f"() => document.querySelector({FOLD!r}).open", timeout=5000)
    page.close()
