"""Local fixes to the HTML that Jupyter Book 1.x writes, found by the browser test.

- sphinx-thebe registers its inline configuration script twice (once with
  filename ``None``, once with ``''``), and the second ``const
  THEBE_JS_URL`` is a SyntaxError in every page's console: drop repeated
  scripts from each page's context.
- The theme template reads ``default_mode``, which nothing sets, and logs
  an error about the empty colour mode: set it.
- Code in a table cell is kept whole (``_static/book.css``), so a long
  dotted name such as ``exact.empirical_distribution(data)`` would widen the
  notation table past the column: a ``<wbr>`` after each dot between two
  names lets it break there, and only there.  (A ``<wbr>`` is not copied with
  the text, unlike a zero-width space in the source.)
- MyST-NB gives a notebook figure its file path as ``alt`` text: a figure
  with a caption gets its caption instead (unless its cell sets an alt text in
  words, ``mystnb: image: alt:``), and its image becomes a link to the
  full-size file, which a phone reader can open and zoom (an SVG stays sharp
  at any zoom).

It also writes the landing page's install line, ``{{ install_package }}``
(used by intro.md): ``make book`` builds the package's wheel into the HTML,
at ``_static/wheels/`` (the Makefile's ``book`` target), and the line installs
that wheel, ``pip install "rbm-book[plotting,datasets] @ URL"``, so that it
works from the published site alone, with no clone and no git.  pip needs an
absolute URL: with ``BOOK_SITE_URL`` (the address the book is published at)
the line holds one; without it the line holds the wheel's path in the site,
and ``_static/book.js`` completes it from the page's own address, which is
right wherever the pages are served from.  The distribution is named
``rbm-book`` (``rbm`` is taken on the package index by an unrelated project);
the code imports it as ``rbm``.

It also fills in the repository the book is published from, which only the
publishing workflow knows. ``BOOK_REPOSITORY_URL`` (the GitHub Actions
workflow sets it to its own repository) is the one value everything else
follows from: with it, the pages get a repository button, Binder and Colab
launch buttons and a live-code button (Thebe, on Binder) for every notebook,
and the substitution ``{{ launch_note }}`` (used by intro.md) says so; without
it (a local build), no buttons, rather than links to a guessed address or
placeholder text.

The Colab button opens a chapter from the branch ``colab`` rather than from
the branch the book is built from: the publishing workflow writes there a
copy of every notebook whose first cell installs the package on Colab
(``tools/colab_branch.py``), which a committed notebook cannot do because it
cannot know the repository's address.
"""

import html
import os
import re
import tomllib
from pathlib import Path

#: The branch holding the Colab copies of the notebooks (tools/colab_branch.py).
COLAB_BRANCH = "colab"


def _script_key(js):
    attributes = tuple(sorted((k, str(v)) for k, v in js.attributes.items()))
    return (js.filename or "", attributes)


_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_CODE_WORD = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
_DOT_BETWEEN_NAMES = re.compile(r"(?<=[\w)])\.(?=[A-Za-z_])")


def break_table_code_after_dots(body):
    """Put ``<wbr>`` after each dot between names in the code of every table.

    >>> break_table_code_after_dots('<table><td><span class="pre">exact.log_prob</span></td></table>')
    '<table><td><span class="pre">exact.<wbr>log_prob</span></td></table>'
    >>> break_table_code_after_dots('<p><span class="pre">exact.log_prob</span> 1.5</p>')
    '<p><span class="pre">exact.log_prob</span> 1.5</p>'
    """
    def in_word(word):
        return word[1] + _DOT_BETWEEN_NAMES.sub(".<wbr>", word[2]) + word[3]
    return _TABLE.sub(lambda table: _CODE_WORD.sub(in_word, table[0]), body)


_CAPTIONED_IMAGE = re.compile(
    r'(<figure\b[^>]*>\s*)<img alt="([^"]*)" src="([^"]+)" />'
    r'(\s*<figcaption>.*?<span class="caption-text">(.*?)</span>)', re.S)
_TAG = re.compile(r"<[^>]+>")


def caption_figures(body):
    """Give each captioned figure an alt text and a link to its full-size image.

    The alt text is the one the cell gives in words (``mystnb: image: alt:``), or else
    the caption.

    >>> caption_figures('<figure class="a">\\n<img alt="../_images/x.svg" src="../_images/x.svg" />'
    ...                 '\\n<figcaption>\\n<p><span class="caption-text">Top: <em>p</em> &amp; q.</span>')
    '<figure class="a">\\n<a class="figure-full-size" href="../_images/x.svg" title="Open the figure at full size"><img alt="Top: p &amp; q." src="../_images/x.svg" /></a>\\n<figcaption>\\n<p><span class="caption-text">Top: <em>p</em> &amp; q.</span>'
    >>> '<img alt="Two bars." src=' in caption_figures(
    ...     '<figure class="a">\\n<img alt="Two bars." src="../_images/x.svg" />'
    ...     '\\n<figcaption>\\n<p><span class="caption-text">Top: <em>p</em>.</span>')
    True
    """
    def one(match):
        alt = match[2] if match[2] != match[3] else " ".join(
            _TAG.sub("", match[5]).replace('"', "&quot;").split())
        return (f'{match[1]}<a class="figure-full-size" href="{match[3]}" '
                f'title="Open the figure at full size"><img alt="{alt}" src="{match[3]}" /></a>'
                f"{match[4]}")
    return _CAPTIONED_IMAGE.sub(one, body)


_PHONE_BREAK = re.compile(r"%brk([^\n]*)\n?")
_DISPLAY_MATH = re.compile(r'<div class="math notranslate nohighlight"( id="[^"]*")?>(.*?)</div>', re.S)
_MATH_BODY = re.compile(r"(\\\[)(.*?)(\\\])", re.S)


def phone_lines(tex):
    r"""The phone's form of `tex`: each ``%brk`` comment becomes a line break.

    A display equation marks where it breaks on a phone with the TeX comment ``%brk``
    (a comment: every other reader, Jupyter included, shows one line).  In an aligned
    block the break continues in the column after the ``&``; elsewhere the equation
    becomes a left-aligned block whose continuation lines are indented.  The rest of the
    comment's line, if any, is the continuation's indent (``\quad`` by default).

    >>> phone_lines("a = b %brk\n + c")
    '\\begin{aligned}&a = b \\\\ &\\quad  + c\\end{aligned}'
    >>> phone_lines("a = b %brk \\qquad\n + c")
    '\\begin{aligned}&a = b \\\\ &\\qquad  + c\\end{aligned}'
    >>> phone_lines("\\begin{split}a &= b %brk\n + c\\end{split}")
    '\\begin{split}a &= b \\\\ &\\quad  + c\\end{split}'
    """
    def line_break(mark):
        return "\\\\ &" + (mark[1].strip() or "\\quad") + " "
    if "&" in tex:
        return _PHONE_BREAK.sub(line_break, tex)
    return "\\begin{aligned}&" + _PHONE_BREAK.sub(line_break, tex.strip()) + "\\end{aligned}"


def responsive_equations(body):
    r"""Give each display equation with ``%brk`` marks a second, phone copy.

    The first copy (class ``eq-wide``) is the equation as written, on as few lines as
    its author wrote; the second (``eq-narrow``, without the id) is broken at the marks
    (:func:`phone_lines`, on the TeX the HTML encodes).  The style sheet shows one of them by the window's width.

    >>> html = ('<div class="math notranslate nohighlight" id="equation-x">\n'
    ...         '<span class="eqno">(1)</span>\\[a = b %brk\n + c\\]</div>')
    >>> print(responsive_equations(html))
    <div class="math notranslate nohighlight eq-wide" id="equation-x">
    <span class="eqno">(1)</span>\[a = b %brk
     + c\]</div><div class="math notranslate nohighlight eq-narrow">
    <span class="eqno">(1)</span>\[\begin{aligned}&amp;a = b \\ &amp;\quad  + c\end{aligned}\]</div>
    >>> responsive_equations('<div class="math notranslate nohighlight">\\[a\\]</div>')
    '<div class="math notranslate nohighlight">\\[a\\]</div>'
    """
    def one(match):
        if "%brk" not in match[2]:
            return match[0]
        narrow = _MATH_BODY.sub(
            lambda m: m[1] + html.escape(phone_lines(html.unescape(m[2])), quote=False) + m[3],
            match[2])
        return (f'<div class="math notranslate nohighlight eq-wide"{match[1] or ""}>{match[2]}'
                f'</div><div class="math notranslate nohighlight eq-narrow">{narrow}</div>')
    return _DISPLAY_MATH.sub(one, body)


def colab_from_its_branch(buttons, branch, colab_branch=COLAB_BRANCH):
    """Point the Colab launch button(s) at `colab_branch` instead of `branch`.

    >>> buttons = [{"type": "group", "label": "launch-buttons", "buttons": [
    ...     {"text": "Binder", "url": "https://mybinder.org/v2/gh/o/r/main?urlpath=x"},
    ...     {"text": "Colab", "url": "https://colab.research.google.com/github/o/r/blob/main/c/a.ipynb"}]}]
    >>> colab_from_its_branch(buttons, "main")
    1
    >>> [b["url"] for b in buttons[0]["buttons"]]
    ['https://mybinder.org/v2/gh/o/r/main?urlpath=x', 'https://colab.research.google.com/github/o/r/blob/colab/c/a.ipynb']
    """
    changed = 0
    for group in buttons:
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "Colab" and f"/blob/{branch}/" in button.get("url", ""):
                button["url"] = button["url"].replace(f"/blob/{branch}/",
                                                      f"/blob/{colab_branch}/", 1)
                changed += 1
    return changed


def fix_page_context(app, pagename, templatename, context, doctree):
    context.setdefault("default_mode", "light")
    branch = app.config.html_theme_options.get("repository_branch")
    if branch and "header_buttons" in context:
        colab_from_its_branch(context["header_buttons"], branch)
    if "body" in context:
        context["body"] = responsive_equations(
            caption_figures(break_table_code_after_dots(context["body"])))
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        key = _script_key(js)
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"] = unique


ROOT = Path(__file__).resolve().parent.parent

#: Where ``make book`` puts the package's wheel, relative to the HTML's root.
WHEEL_DIR = "_static/wheels"

#: The extras the chapters use (figures, the digits data sets).
EXTRAS = ("plotting", "datasets")


def wheel_filename(project):
    """The file name of the pure-Python wheel built from pyproject.toml's [project] table.

    >>> wheel_filename({"name": "rbm-book", "version": "0.1.0"})
    'rbm_book-0.1.0-py3-none-any.whl'
    """
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return f"{name}-{project['version']}-py3-none-any.whl"


def install_line(name, wheel_url, extras=EXTRAS):
    """The pip command that installs the wheel at `wheel_url` with `extras`.

    >>> install_line("rbm-book", "https://example.org/book/_static/wheels/rbm_book-0.1.0-py3-none-any.whl")
    'pip install "rbm-book[plotting,datasets] @ https://example.org/book/_static/wheels/rbm_book-0.1.0-py3-none-any.whl"'
    """
    return f'pip install "{name}[{",".join(extras)}] @ {wheel_url}"'


def install_substitution(project, site_url=""):
    """The landing page's install sentence, for the wheel this build offers.

    `site_url` is the address the book is published at; without it the line
    holds the wheel's path in the site, which _static/book.js makes absolute.

    >>> install_substitution({"name": "rbm-book", "version": "0.1.0"}, "https://o.github.io/r/")[:92]
    'from this site, in one line: `pip install "rbm-book[plotting,datasets] @ https://o.github.io'
    >>> "Without JavaScript" in install_substitution({"name": "rbm-book", "version": "0.1.0"})
    True
    """
    path = f"{WHEEL_DIR}/{wheel_filename(project)}"
    url = f"{site_url.rstrip('/')}/{path}" if site_url else path
    # Without the site's address the line holds a path that only _static/book.js completes;
    # a reader without JavaScript gets the plain instruction too.
    # (In <noscript>, so that a browser running JavaScript shows, and holds, one line.)
    offline = "" if site_url else (
        f" <noscript>(Without JavaScript, download <a href=\"{path}\">the wheel</a> and "
        f"run `pip install \"{wheel_filename(project)}[{','.join(EXTRAS)}]\"` in its "
        f"folder.)</noscript>")
    return (f"from this site, in one line: `{install_line(project['name'], url)}`.{offline} "
            f"The package is distributed as `{project['name']}` and imported as `rbm`; "
            "in a clone of the repository, `pip install -e \".[plotting,datasets]\"` "
            "installs the same (or `make setup`, which also makes a virtual environment "
            "with the tested versions).")


LOCAL_LAUNCH_NOTE = (
    "This copy of the book was built without a repository address, so it has no launch "
    "buttons; the published book opens every chapter on Binder or Colab.")

PUBLISHED_LAUNCH_NOTE = (
    "The launch menu (the rocket at the top of a chapter) opens the chapter on Binder, "
    "which installs the package by itself, or on Colab. Colab opens a copy of the notebook "
    "whose first cell fetches the book at the commit these pages were built from and "
    "installs the package, which takes a minute or two. The menu's *Live Code* entry runs "
    "the page's cells in place, on a Binder kernel.")


def repository_from_environment(app, config):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    substitutions = config.myst_substitutions
    substitutions["install_package"] = install_substitution(
        project, os.environ.get("BOOK_SITE_URL", "").strip())
    url = os.environ.get("BOOK_REPOSITORY_URL", "").strip().rstrip("/")
    if not url:
        substitutions["launch_note"] = LOCAL_LAUNCH_NOTE
        return
    substitutions["launch_note"] = PUBLISHED_LAUNCH_NOTE
    branch = os.environ.get("BOOK_REPOSITORY_BRANCH", "main")
    options = config.html_theme_options
    options["repository_url"] = url
    options["repository_branch"] = branch
    options["path_to_docs"] = ""
    options["use_repository_button"] = True
    options["use_issues_button"] = True
    options["launch_buttons"] = {
        **options.get("launch_buttons", {}),
        "notebook_interface": "jupyterlab",
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
        "thebe": True,
    }
    # Thebe asks Binder for a kernel built from the same repository and branch.
    config.thebe_config = {**config.thebe_config, "repository_url": url,
                           "repository_branch": branch}


def setup(app):
    app.connect("config-inited", repository_from_environment)
    app.connect("html-page-context", fix_page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
