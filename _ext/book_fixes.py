"""Local fixes to the HTML that Jupyter Book 1.x writes, found by the browser test.

- sphinx-thebe registers its inline configuration script twice (once with
  filename ``None``, once with ``''``), and the second ``const
  THEBE_JS_URL`` is a SyntaxError in every page's console: drop repeated
  scripts from each page's context.
- The theme template reads ``default_mode``, which nothing sets, and logs
  an error about the empty colour mode: set it.
"""


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


def setup(app):
    app.connect("html-page-context", fix_page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
