"""Names that the docstrings use, resolved to the objects the inventories list.

Numpydoc types name things the way a reader writes them (``ndarray``,
``array_like``, ``sympy.Matrix``), while the intersphinx inventories list
them where they are documented (``numpy.ndarray``, the glossary term
``array_like``, ``sympy.matrices.dense.MutableDenseMatrix``), and Debian's
SciPy inventory has a page, not an object, for the ufunc
``scipy.special.expit``.  ``reference_aliases`` in the configuration maps a
name to the role and target to look up instead, e.g.
``array_like: [std:term, "numpy:array_like"]``; a prefix such as ``numpy:``
looks in that inventory alone, which labels, terms and pages need (the
configuration keeps ``std`` references from resolving into any inventory
without one).  A reference that nothing else resolved is retried through
intersphinx under its alias; the reader still sees the name the docstring
wrote.  An alias that does not resolve leaves the reference missing, so
``-n`` still reports it.
"""

from sphinx.ext import intersphinx


def resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    alias = app.config.reference_aliases.get(node.get("reftarget"))
    if alias is None:
        return None
    role, target = alias
    domain, reftype = role.split(":")
    retry = node.deepcopy()
    retry["refdomain"], retry["reftype"], retry["reftarget"] = domain, reftype, target
    retry["refexplicit"] = True  # keep the docstring's wording as the link text
    return intersphinx.missing_reference(app, env, retry, contnode)


def setup(app):
    app.add_config_value("reference_aliases", {}, "env", types=[dict])
    app.setup_extension("sphinx.ext.intersphinx")
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
