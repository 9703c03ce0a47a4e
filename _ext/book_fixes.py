"""Local fixes to the HTML that Jupyter Book 1.x writes, found by the browser test.

- sphinx-thebe registers its inline configuration script twice (once with
  filename ``None``, once with ``''``), and the second ``const
  THEBE_JS_URL`` is a SyntaxError in every page's console: drop repeated
  scripts from each page's context.
- The theme template reads ``default_mode``, which nothing sets, and logs
  an error about the empty colour mode: set it.

It also fills in the repository the book is published from, which only the
publishing workflow knows: with ``BOOK_REPOSITORY_URL`` set (the GitHub
Actions workflow sets it to its own repository), the pages get a repository
button and Binder and Colab launch buttons for every notebook; without it
(a local build) they get neither, rather than links to a guessed address.
"""

import os


def _script_key(js):
    attributes = tuple(sorted((k, str(v)) for k, v in js.attributes.items()))
    return (js.filename or "", attributes)


def fix_page_context(app, pagename, templatename, context, doctree):
    context.setdefault("default_mode", "light")
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


def repository_from_environment(app, config):
    url = os.environ.get("BOOK_REPOSITORY_URL", "").strip()
    if not url:
        return
    options = config.html_theme_options
    options["repository_url"] = url
    options["repository_branch"] = os.environ.get("BOOK_REPOSITORY_BRANCH", "main")
    options["path_to_docs"] = ""
    options["use_repository_button"] = True
    options["use_issues_button"] = True
    options["launch_buttons"] = {
        **options.get("launch_buttons", {}),
        "notebook_interface": "jupyterlab",
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
    }


def setup(app):
    app.connect("config-inited", repository_from_environment)
    app.connect("html-page-context", fix_page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
