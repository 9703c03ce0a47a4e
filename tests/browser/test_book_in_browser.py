"""The built book, opened page by page in headless Chromium (make test-browser).

Serves ``_build/html`` on 127.0.0.1 and, for every page, asserts that MathJax
finished without errors and typeset the page's math, that no raw TeX is left
in the text, that every image loaded, that the console shows no errors, that
no request leaves 127.0.0.1, and that every internal link (with its anchor)
resolves.  Screenshots of two pages are saved in ``_build/browser/``.

It also measures the layout of every page at two window sizes:

- at 1280 x 800 (a laptop) no display equation, code cell, output or table
  is wider than its column, whether it would scroll or be cut off;
- at 400 x 800 (a phone) such an element may scroll inside itself, but none
  is cut off, and the page as a whole does not scroll sideways;
- at 400 x 800 every element that scrolls sideways carries the scroll cue of
  ``_static/book.css`` (a shadow at the edge beyond which more content
  hides); on one page, in the light and the dark theme, the cue is also seen
  in the pixels of an equation, code and a table that scroll: at the right
  edge at the start of the scroll, at the left edge at its end;
- code in a table breaks only between names (at a space, or after a dot
  where the build put a ``<wbr>``), never inside one;
- at 1280 x 800 no figure is squeezed: every image of a figure or of a cell
  output is shown at least ``MIN_FIGURE_SCALE`` of its natural width.  The
  chapters' figures are drawn at matplotlib's 100 dpi (PNG) or 72 points
  to the inch (SVG), with 10-point text, so at scale 1 their text is about
  13-14 px high, the body text's size; below 0.75 it falls under 10 px.
- at 400 x 800 every figure is scaled to its column, whole (the panel its
  caption discusses is on screen without scrolling sideways), and still
  shown at least ``MIN_PHONE_FIGURE_SCALE`` of its natural width: in the
  352 px column that fails for a figure wider than 749 px, 7.5 in at
  100 dpi (CONTRIBUTING.md asks for at most 7 in, two panels side by side);
- at 1280 x 800 each chapter of the core part (the "Core" parts of
  ``_toc.yml``), with its folded cells and its evidence closed, is at most
  ``MAX_CORE_SCREENS`` window heights tall; the measured heights are
  written to ``_build/browser/core_screens.json``.

Known failures are listed, page by page, in ``KNOWN_TOO_WIDE`` and
``KNOWN_SQUEEZED_FIGURES``: those tests are expected to fail (strict
xfail), so that a page that gets fixed makes its entry fail loudly until
it is removed from the list.
"""

import base64
import functools
import html
import json
import os
import re
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "_ext"))
import book_fixes  # noqa: E402
SHOTS = ROOT / "_build" / "browser"
RAW_TEX = ["\\frac", "\\sum", "\\mathbf", "\\begin{", "\\langle", "$$", "\\bv", "\\Ebm"]
SCREENSHOT_PAGES = {"intro.html", "chapters/first_look.html"}

WIDTHS = {"laptop": 1280, "phone": 400}
HEIGHT = 800
MIN_FIGURE_SCALE = 0.75
# At 400 px a figure is scaled to the 352 px column (_static/book.css), to at least this
# share of its natural width: 352 / 0.47 = 749 px, a figure 7.5 in wide at 100 dpi.
MIN_PHONE_FIGURE_SCALE = 0.47
# A core chapter at 1280 x 800, folded cells closed, is at most this many windows tall
# (the page format asks for about 15 screens, CONTRIBUTING.md).
MAX_CORE_SCREENS = 16
# Elements that must fit their column: display math, code, outputs, tables, API signatures.
WIDE_CANDIDATES = ", ".join([
    "div.math", "mjx-container[display=\"true\"]", "div.highlight pre", "div.cell_output",
    "div.output", "table", "div.pst-scrollable-table-container", "dl.py > dt",
])

# Pages measured to fail today, with the reason; remove an entry once its page is fixed
# (its test then passes, and a strict xfail turns that into a failure to notice).
KNOWN_TOO_WIDE = {}
KNOWN_SQUEEZED_FIGURES = {}


def book_pages():
    if not HTML.is_dir():
        pytest.fail("_build/html is missing: build the book first (make book)")
    skip = {"genindex.html", "search.html", "index.html"}
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if not p.relative_to(HTML).parts[0].startswith("_") and p.name not in skip)


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def ids_of(relative_path):
    parser = _Ids()
    parser.feed((HTML / relative_path).read_text(encoding="utf-8"))
    return frozenset(parser.ids)


@pytest.mark.parametrize("page_path", book_pages())
def test_page_renders_offline_with_typeset_math(page_path, server, browser):
    page = browser.new_page()
    foreign, console_errors = [], []
    page.on("request", lambda r: foreign.append(r.url)
            if urlparse(r.url).hostname not in ("127.0.0.1", None) and
            not r.url.startswith(("data:", "blob:", "about:")) else None)
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    page.goto(server + page_path, wait_until="load")
    # Sphinx loads MathJax only on pages that hold math.
    has_math = page.evaluate("() => !!document.querySelector('script[src*=\"mathjax\"]')")
    if has_math:
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")
    typeset = page.evaluate("() => document.querySelectorAll('mjx-container').length")
    errors = page.evaluate("() => document.querySelectorAll('mjx-merror').length")
    text = page.evaluate("""() => {
        const clone = document.querySelector('main') ? document.querySelector('main').cloneNode(true)
                                                     : document.body.cloneNode(true);
        clone.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
        return clone.innerText;
    }""")
    broken_images = page.evaluate(
        "() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    if page_path in SCREENSHOT_PAGES:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / (page_path.replace("/", "_") + ".png")), full_page=False)
    page.close()

    assert not foreign, f"requests left 127.0.0.1: {foreign[:5]}"
    assert not console_errors, f"console errors: {console_errors[:5]}"
    assert errors == 0, f"{errors} MathJax errors"
    if has_math:
        assert typeset > 0, "the page has math but MathJax typeset none of it"
    leftover = [tex for tex in RAW_TEX if tex in text]
    assert not leftover, f"raw TeX left in the page text: {leftover}"
    assert not broken_images, f"images that did not load: {broken_images}"

    base = server + page_path
    for href in links:
        url, fragment = urldefrag(urljoin(base, href))
        if not url.startswith(server):
            continue
        target = unquote(url[len(server):]) or "index.html"
        if target.endswith("/"):
            target += "index.html"
        assert (HTML / target).is_file(), f"link to a missing page: {href}"
        if fragment and target.endswith(".html"):
            assert unquote(fragment) in ids_of(target), f"link to a missing anchor: {href}"


MEASURE_LAYOUT = """(minScale) => {
  const article = document.querySelector('article.bd-article') || document.body;
  // The page's height as it opens, its evidence folded; then the evidence opened, so that
  // its tables, code, equations and figures are measured as a reader who opens it sees them.
  const height = document.documentElement.scrollHeight;
  document.querySelectorAll('details.evidence').forEach(fold => { fold.open = true; });
  const describe = (el) => {
    const id = el.id || (el.closest('[id]') ? el.closest('[id]').id : '');
    const section = el.closest('section[id]');
    // An image is named by its figure's caption ("Fig. 3.1 The weight ..."), else its file.
    const caption = el.tagName === 'IMG' && el.closest('figure') &&
                    el.closest('figure').querySelector('figcaption');
    const text = ((caption && caption.innerText) || el.innerText || el.getAttribute('src') || '')
                 .replace(/\\s+/g, ' ').slice(0, 60);
    return `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}` +
           ` in #${section ? section.id : id}: "${text}"`;
  };
  const scrollsItself = (el) => {
    // The element, or the nearest ancestor that clips it, scrolls: the reader can reach it.
    for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
      const overflow = getComputedStyle(node).overflowX;
      if (overflow === 'auto' || overflow === 'scroll') return true;
      if (overflow === 'hidden' || overflow === 'clip') return false;
    }
    return false;
  };
  const wide = [];
  for (const el of article.querySelectorAll(WIDE)) {
    if (el.scrollWidth > el.clientWidth + 1) {
      wide.push({what: describe(el), scroll: el.scrollWidth, client: el.clientWidth,
                 scrolls: scrollsItself(el)});
    }
  }
  const squeezed = [], outside = [];
  // The column: the article's content box.
  const box = article.getBoundingClientRect(), pad = getComputedStyle(article);
  const left = box.left + parseFloat(pad.paddingLeft), right = box.right - parseFloat(pad.paddingRight);
  for (const img of article.querySelectorAll('figure img, div.cell_output img, div.output img')) {
    if (!img.naturalWidth) continue;
    const rect = img.getBoundingClientRect();
    if (rect.width < minScale * img.naturalWidth) {
      squeezed.push({what: describe(img), natural: img.naturalWidth, shown: Math.round(rect.width)});
    }
    // Wider than the column, or reached only by scrolling a frame sideways.
    let scrolled = false;
    for (let node = img.parentElement; node && node !== article; node = node.parentElement) {
      if (node.scrollWidth > node.clientWidth + 1 &&
          ['auto', 'scroll'].includes(getComputedStyle(node).overflowX)) scrolled = true;
    }
    if (rect.left < left - 1 || rect.right > right + 1 || scrolled) {
      outside.push({what: describe(img), natural: img.naturalWidth, shown: Math.round(rect.width),
                    column: Math.round(right - left), scrolled});
    }
  }
  // Elements that scroll sideways without the scroll cue: its background layers
  // (covers attached 'local' over shadows attached 'scroll').
  const uncued = [];
  for (const el of article.querySelectorAll('*:not(svg *)')) {
    const style = getComputedStyle(el);
    if (!['auto', 'scroll'].includes(style.overflowX) || el.scrollWidth <= el.clientWidth + 1) continue;
    const layers = (style.backgroundImage.match(/gradient\\(/g) || []).length;
    if (layers < 4 || !style.backgroundAttachment.includes('local')) {
      uncued.push({what: describe(el), scroll: el.scrollWidth, client: el.clientWidth});
    }
  }
  // Code in tables: a run of text (between spaces and <wbr>s) laid out on two lines
  // is a name broken in the middle.
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].filter(r => r.width > 0)
                    .map(r => Math.round(r.top))).size;
  };
  const splitNames = [];
  for (const code of article.querySelectorAll('table code')) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.textContent.trim() && lines(node) > 1) {
        splitNames.push(`${node.textContent} in "${code.textContent}"`);
      }
    }
  }
  return {wide, squeezed, outside, uncued, splitNames,
          page: {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
                 height}};
}"""


@functools.lru_cache(maxsize=None)
def _layout(page_path, window, server, browser):
    page = browser.new_page(viewport={"width": WIDTHS[window], "height": HEIGHT})
    page.goto(server + page_path, wait_until="load")
    if page.evaluate("() => !!document.querySelector('script[src*=mathjax]')"):
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")
    # Images must have their natural size before they are measured.
    page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=30000)
    script = MEASURE_LAYOUT.replace("WIDE", json.dumps(WIDE_CANDIDATES))
    scale = MIN_PHONE_FIGURE_SCALE if window == "phone" else MIN_FIGURE_SCALE
    result = page.evaluate(script, scale)
    page.close()
    return result


def _layout_cases():
    for page_path in book_pages():
        for window in WIDTHS:
            marks = []
            if (page_path, window) in KNOWN_TOO_WIDE:
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN_TOO_WIDE[page_path, window])]
            yield pytest.param(page_path, window, marks=marks, id=f"{page_path}-{window}")


@pytest.mark.parametrize(("page_path", "window"), list(_layout_cases()))
def test_nothing_wider_than_its_column(page_path, window, server, browser):
    layout = _layout(page_path, window, server, browser)
    if window == "laptop":
        too_wide = layout["wide"]
    else:
        too_wide = [w for w in layout["wide"] if not w["scrolls"]]
    report = "\n".join(f"  {w['what']}: {w['scroll']} px in {w['client']} px"
                       + ("" if w["scrolls"] else " (cut off)") for w in too_wide)
    assert not too_wide, (f"{page_path} at {WIDTHS[window]} px: {len(too_wide)} elements "
                          f"wider than their column:\n{report}")
    page_width = layout["page"]
    assert page_width["scroll"] <= page_width["inner"], (
        f"{page_path} at {WIDTHS[window]} px scrolls sideways: "
        f"{page_width['scroll']} px of content in a {page_width['inner']} px window")


def _figure_cases():
    for page_path in book_pages():
        marks = []
        if page_path in KNOWN_SQUEEZED_FIGURES:
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_SQUEEZED_FIGURES[page_path])]
        yield pytest.param(page_path, marks=marks, id=page_path)


@pytest.mark.parametrize("page_path", list(_figure_cases()))
def test_figures_shown_near_their_natural_size(page_path, server, browser):
    squeezed = _layout(page_path, "laptop", server, browser)["squeezed"]
    report = "\n".join(f"  {s['what']}: {s['shown']} px of {s['natural']} px "
                       f"({s['shown'] / s['natural']:.2f})" for s in squeezed)
    assert not squeezed, (f"{page_path} at 1280 px: {len(squeezed)} figures shown below "
                          f"{MIN_FIGURE_SCALE} of their natural width:\n{report}")


@pytest.mark.parametrize("page_path", book_pages())
def test_figures_scaled_to_the_column_on_a_phone(page_path, server, browser):
    """At 400 px every figure is whole in its column, and not shrunk past legibility."""
    layout = _layout(page_path, "phone", server, browser)
    report = "\n".join(f"  {s['what']}: {s['shown']} px in a {s['column']} px column"
                       + (", in a frame that scrolls sideways" if s["scrolled"] else "")
                       for s in layout["outside"])
    assert not layout["outside"], (f"{page_path} at 400 px: {len(layout['outside'])} figures "
                                   f"not within their column:\n{report}")
    report = "\n".join(f"  {s['what']}: {s['shown']} px of {s['natural']} px "
                       f"({s['shown'] / s['natural']:.3f}, {s['natural'] / 100:.2f} in at 100 dpi)"
                       for s in layout["squeezed"])
    assert not layout["squeezed"], (
        f"{page_path} at 400 px: {len(layout['squeezed'])} figures shown below "
        f"{MIN_PHONE_FIGURE_SCALE} of their natural width (draw them at most 7 in wide, "
        f"at most two panels side by side):\n{report}")


def core_chapters():
    """The pages of the "Core" parts of _toc.yml, as paths of the built HTML."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [chapter["file"] + ".html" for part in toc["parts"]
            if part.get("caption", "").startswith("Core") for chapter in part["chapters"]]


@pytest.fixture(scope="session")
def core_screens():
    """Screens per core chapter, as measured, written to _build/browser/core_screens.json."""
    measured = {}
    yield measured
    if measured:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / "core_screens.json").write_text(json.dumps(measured, indent=1) + "\n")


@pytest.mark.parametrize("page_path", core_chapters())
def test_core_chapter_at_most_so_many_screens(page_path, server, browser, core_screens):
    """At 1280 x 800, with its folded cells closed, a core chapter is at most
    MAX_CORE_SCREENS window heights tall."""
    height = _layout(page_path, "laptop", server, browser)["page"]["height"]
    screens = height / HEIGHT
    core_screens[page_path] = round(screens, 1)
    assert screens <= MAX_CORE_SCREENS, (
        f"{page_path} is {screens:.1f} screens tall at 1280 x {HEIGHT} "
        f"(at most {MAX_CORE_SCREENS})")


@pytest.mark.parametrize("page_path", book_pages())
def test_every_sideways_scroller_shows_the_scroll_cue(page_path, server, browser):
    uncued = _layout(page_path, "phone", server, browser)["uncued"]
    report = "\n".join(f"  {u['what']}: {u['scroll']} px in {u['client']} px" for u in uncued)
    assert not uncued, (f"{page_path} at 400 px: {len(uncued)} elements scroll sideways "
                        f"without the scroll cue:\n{report}")


@pytest.mark.parametrize(("page_path", "window"), [
    pytest.param(page_path, window, id=f"{page_path}-{window}")
    for page_path in book_pages() for window in WIDTHS])
def test_code_in_tables_breaks_only_between_names(page_path, window, server, browser):
    split = _layout(page_path, window, server, browser)["splitNames"]
    assert not split, (f"{page_path} at {WIDTHS[window]} px: names in table code broken "
                       f"across lines: {split[:10]}")


# A page with a display equation, code and a table that scroll at 400 px, and code that fits.
# A page for each kind of element that scrolls at 400 px: source_audit's displayed math and
# tables; the gradient chapter's visible code (source_audit's code is folded, and wraps).
CUE_PAGES = {'mjx-container[display="true"]': "chapters/source_audit.html",
             "div.highlight pre": "chapters/gradient.html",
             "div.pst-scrollable-table-container": "chapters/source_audit.html"}
CUE_KINDS = ['mjx-container[display="true"]', "div.highlight pre",
             "div.pst-scrollable-table-container"]
# Text, math and cell borders made invisible, so that only backgrounds are compared.
HIDE_TEXT = """.cue-probe, .cue-probe * { color: transparent !important;
  fill: transparent !important; stroke: transparent !important;
  border-color: transparent !important; }"""
# Mean colour difference (0-255) between the outer 2-6 px at each side of a screenshot
# and a strip 56-60 px in from that side (past the cue), over the same rows.
EDGE_DIFFERENCE = """async (png) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.width;
  canvas.height = img.height;
  const context = canvas.getContext('2d');
  context.drawImage(img, 0, 0);
  const {data, width, height} = context.getImageData(0, 0, img.width, img.height);
  const difference = (edge, inner) => {
    let sum = 0, count = 0;
    for (let y = 5; y < height - 5; y++) {
      for (let i = 0; i < edge.length; i++) {
        const a = 4 * (y * width + edge[i]), b = 4 * (y * width + inner[i]);
        for (let k = 0; k < 3; k++) sum += Math.abs(data[a + k] - data[b + k]);
        count += 3;
      }
    }
    return sum / count;
  };
  const range = (from, to) => Array.from({length: to - from}, (_, i) => from + i);
  return {left: difference(range(2, 6), range(56, 60)),
          right: difference(range(width - 6, width - 2), range(width - 60, width - 56))};
}"""
CUE_SEEN, CUE_ABSENT = 8, 2


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_scroll_cue_shows_only_where_more_content_hides(theme, server, browser):
    """At 400 px, on an equation, code and a table that scroll: a shadow at the right
    edge at the start of the scroll, at the left edge at its end, never on code that fits."""
    context = browser.new_context(viewport={"width": WIDTHS["phone"], "height": HEIGHT})
    context.add_init_script(f"localStorage.setItem('mode', '{theme}');")
    page = context.new_page()
    probes, edges = {}, {}
    for kind in CUE_KINDS:
        page.goto(server + CUE_PAGES[kind], wait_until="load")
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")
        # The evidence opened, as a reader opens it (source_audit's wide tables are there).
        page.evaluate("() => document.querySelectorAll('details.evidence')"
                      ".forEach(fold => { fold.open = true; })")
        assert page.evaluate("() => document.documentElement.dataset.theme") == theme
        page.add_style_tag(content=HIDE_TEXT)
        elements = page.locator(f"article.bd-article {kind}")
        # Shown (not in a folded cell), and wide enough for the two strips compared.
        scrolls = elements.evaluate_all(
            "els => els.map(e => !e.checkVisibility() || e.clientWidth < 150 ? null"
            "                    : e.scrollWidth > e.clientWidth + 1)")
        assert True in scrolls, f"{CUE_PAGES[kind]} has no {kind} that scrolls at 400 px"
        here = {f"{kind} that scrolls": (elements.nth(scrolls.index(True)), True)}
        if kind == "div.highlight pre":
            assert False in scrolls, f"{CUE_PAGES[kind]} has no {kind} that fits at 400 px"
            here[f"{kind} that fits"] = (elements.nth(scrolls.index(False)), False)
        for name, (element, _) in here.items():
            element.evaluate("e => e.classList.add('cue-probe')")
            for position in ("start", "end"):
                element.evaluate("(e, end) => { e.scrollLeft = end ? e.scrollWidth : 0; }",
                                 position == "end")
                png = base64.b64encode(element.screenshot(animations="disabled")).decode()
                edges[name, position] = page.evaluate(EDGE_DIFFERENCE, png)
        probes.update(here)
    context.close()

    for name, (_, scrolls) in probes.items():
        start, end = edges[name, "start"], edges[name, "end"]
        where = f"{theme} theme, {name}: {start} at the start, {end} at the end"
        if scrolls:
            assert start["right"] > CUE_SEEN, f"{where}: no cue at the right edge at the start"
            assert start["left"] < CUE_ABSENT, f"{where}: a cue at the left edge at the start"
            assert end["left"] > CUE_SEEN, f"{where}: no cue at the left edge at the end"
            assert end["right"] < CUE_ABSENT, f"{where}: the cue stays at the end"
        else:
            assert max(start["left"], start["right"]) < CUE_ABSENT, f"{where}: a cue, no overflow"


PLACEHOLDER = re.compile(r"&lt;[\w ]*(url|address|repository)[\w ]*&gt;|\{\{\s*\w+\s*\}\}", re.I)


def test_no_placeholder_text_and_a_working_install_line():
    """No page prints a placeholder; the introduction's install line suits this build."""
    found = {}
    for page_path in book_pages():
        text = (HTML / page_path).read_text(encoding="utf-8")
        match = PLACEHOLDER.search(text)
        if match:
            found[page_path] = match.group(0)
    assert not found, f"placeholder text in the built pages: {found}"
    intro = (HTML / "intro.html").read_text(encoding="utf-8")
    # Inline code is split into one <span class="pre"> per word.
    words = html.unescape(re.sub(r"</span>\s*<span class=\"pre\">", " ", intro))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = os.environ.get("BOOK_SITE_URL", "").strip().rstrip("/")
    path = f"{book_fixes.WHEEL_DIR}/{book_fixes.wheel_filename(project)}"
    expected = book_fixes.install_line(project["name"], f"{site}/{path}" if site else path)
    assert expected in words, f"intro.html does not show the install line {expected!r}"
    assert (HTML / path).is_file(), f"the book does not offer the wheel {path} (make book)"


def test_colab_buttons_open_the_copies_that_install_the_package():
    """With a repository, every chapter's Colab button opens its copy on branch ``colab``."""
    url = os.environ.get("BOOK_REPOSITORY_URL", "").strip().rstrip("/")
    colab = re.compile(r'href="(https://colab\.research\.google\.com/[^"]+)"')
    pages = [p for p in book_pages() if p.startswith("chapters/")]
    assert pages
    for page_path in pages:
        links = colab.findall((HTML / page_path).read_text(encoding="utf-8"))
        if not url:
            assert not links, f"{page_path}: a Colab button in a build without a repository"
            continue
        notebook = page_path.removesuffix(".html") + ".ipynb"
        assert links, f"{page_path}: no Colab button"
        for link in links:
            assert link.endswith(f"/blob/colab/{notebook}"), f"{page_path}: {link}"


@pytest.mark.parametrize("page_path", core_chapters())
def test_display_equations_fit_a_phone_without_scrolling(page_path, server, browser):
    """At 400 px every display equation of the core shows whole: the ones too long for the
    column carry %brk marks and are shown broken there (tests/test_equations.py).  The
    advanced part's longer equations still scroll inside their boxes, with the cue."""
    wide = [w for w in _layout(page_path, "phone", server, browser)["wide"]
            if w["what"].startswith(("div.math", "mjx-container"))]
    report = "\n".join(f"  {w['what']}: {w['scroll']} px in {w['client']} px" for w in wide)
    assert not wide, (f"{page_path} at {WIDTHS['phone']} px: {len(wide)} equations wider than "
                      f"the column (mark where they break with %brk):\n{report}")
