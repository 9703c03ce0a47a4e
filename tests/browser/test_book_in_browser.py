"""The built book, opened page by page in headless Chromium (make test-browser).

Serves ``_build/html`` on 127.0.0.1 and, for every page, asserts that MathJax
finished without errors and typeset the page's math, that no raw TeX is left
in the text, that every image loaded, that the console shows no errors, that
no request leaves 127.0.0.1, and that every internal link (with its anchor)
resolves.  Screenshots of two pages are saved in ``_build/browser/``.
"""

import functools
import http.server
import os
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "browser"
# Debian's chromium by default; CHROMIUM_PATH points elsewhere (e.g. a CI image's Chrome).
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# Flags that keep Chromium from calling home on a machine without a network.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
RAW_TEX = ["\\frac", "\\sum", "\\mathbf", "\\begin{", "\\langle", "$$", "\\bv", "\\Ebm"]
SCREENSHOT_PAGES = {"intro.html", "chapters/00_first_look.html"}


def book_pages():
    if not HTML.is_dir():
        pytest.fail("_build/html is missing: build the book first (make book)")
    skip = {"genindex.html", "search.html", "index.html"}
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if not p.relative_to(HTML).parts[0].startswith("_") and p.name not in skip)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server():
    handler = functools.partial(_Quiet, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


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
