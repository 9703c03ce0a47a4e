"""The book's local Sphinx extension, _ext/book_fixes.py, outside a build.

The browser test checks the built pages; these tests check the pieces that
only a published build (with BOOK_REPOSITORY_URL) uses, which a local
`make book` does not exercise.
"""

import doctest
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
import book_fixes  # noqa: E402


def test_the_doctests_of_the_extension():
    failures, tried = doctest.testmod(book_fixes)
    assert tried >= 3 and failures == 0


def published_config(monkeypatch, url="https://github.com/o/r", branch="main"):
    monkeypatch.setenv("BOOK_REPOSITORY_URL", url + "/")
    monkeypatch.setenv("BOOK_REPOSITORY_BRANCH", branch)
    config = SimpleNamespace(myst_substitutions={}, html_theme_options={}, thebe_config={})
    book_fixes.repository_from_environment(None, config)
    return config


def test_a_published_build_gets_buttons_for_its_repository(monkeypatch):
    config = published_config(monkeypatch)
    options = config.html_theme_options
    assert options["repository_url"] == "https://github.com/o/r"
    assert options["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert options["launch_buttons"]["thebe"] is True
    assert config.thebe_config["repository_url"] == "https://github.com/o/r"
    assert "Colab" in config.myst_substitutions["launch_note"]


def test_a_local_build_gets_no_buttons(monkeypatch):
    monkeypatch.delenv("BOOK_REPOSITORY_URL", raising=False)
    config = SimpleNamespace(myst_substitutions={}, html_theme_options={}, thebe_config={})
    book_fixes.repository_from_environment(None, config)
    assert "repository_url" not in config.html_theme_options
    assert "no launch buttons" in config.myst_substitutions["launch_note"]


@pytest.mark.parametrize("site, url", [
    ("", "_static/wheels/rbm_book-0.1.0-py3-none-any.whl"),
    ("https://o.github.io/r/", "https://o.github.io/r/_static/wheels/rbm_book-0.1.0-py3-none-any.whl"),
])
def test_the_install_line_installs_the_wheel_the_book_offers(monkeypatch, site, url):
    """The wheel's address: absolute with BOOK_SITE_URL, else its path in the site
    (_static/book.js completes it in the browser); named as the build names it."""
    monkeypatch.delenv("BOOK_REPOSITORY_URL", raising=False)
    monkeypatch.setenv("BOOK_SITE_URL", site)
    monkeypatch.setattr(book_fixes, "ROOT", Path(__file__).resolve().parent.parent)
    config = SimpleNamespace(myst_substitutions={}, html_theme_options={}, thebe_config={})
    book_fixes.repository_from_environment(None, config)
    project = tomllib.loads((book_fixes.ROOT / "pyproject.toml").read_text())["project"]
    url = url.replace("0.1.0", project["version"])
    assert (f'`pip install "rbm-book[plotting,datasets] @ {url}"`'
            in config.myst_substitutions["install_package"])
    assert 'pip install -e ".[plotting,datasets]"' in config.myst_substitutions["install_package"]


def test_the_distribution_name_is_not_the_taken_rbm():
    """``rbm`` on the package index is an unrelated project; the code still imports ``rbm``."""
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml")
                           .read_text())
    assert project["project"]["name"] == "rbm-book"
    assert project["tool"]["setuptools"]["packages"] == ["rbm"]


@pytest.mark.parametrize("branch", ["main", "release"])
def test_only_the_colab_button_opens_the_colab_branch(monkeypatch, branch):
    config = published_config(monkeypatch, branch=branch)
    app = SimpleNamespace(config=SimpleNamespace(html_theme_options=config.html_theme_options))
    colab = f"https://colab.research.google.com/github/o/r/blob/{branch}/chapters/a.ipynb"
    binder = f"https://mybinder.org/v2/gh/o/r/{branch}?urlpath=lab/tree/chapters/a.ipynb"
    context = {"header_buttons": [
        {"type": "group", "label": "download-buttons", "buttons": [{"text": ".ipynb",
                                                                    "url": "a.ipynb"}]},
        {"type": "group", "label": "launch-buttons", "buttons": [
            {"text": "Binder", "url": binder}, {"text": "Colab", "url": colab}]}]}
    book_fixes.fix_page_context(app, "chapters/a", "page.html", context, None)
    launch = context["header_buttons"][1]["buttons"]
    assert launch[0]["url"] == binder
    assert launch[1]["url"] == ("https://colab.research.google.com/github/o/r/blob/"
                                f"{book_fixes.COLAB_BRANCH}/chapters/a.ipynb")
