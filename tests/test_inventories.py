"""The intersphinx inventories are committed files that list what the API reference links to.

The book is built without a network (the build must fetch nothing), so every
inventory in _config.yml's intersphinx_mapping is a file in _inventories/, and
it must list each object the docstrings in rbm/ name, directly or through
``reference_aliases``; otherwise the nitpicky build fails far from the cause.
"""

import functools
import importlib
import re
from pathlib import Path

import pytest
import yaml
from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parent.parent
SPHINX_CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
MAPPING = SPHINX_CONFIG["intersphinx_mapping"]
ALIASES = SPHINX_CONFIG["reference_aliases"]

# What the docstrings name directly (roles, annotations, parameter types), by inventory.
REFERENCED = {
    "python": [("py:class", name) for name in ("int", "float", "bool", "str", "list")]
    + [("py:exception", name)
       for name in ("ValueError", "TypeError", "AssertionError", "ImportError")]
    + [("py:data", "None")],
    "numpy": [("py:class", "numpy.ndarray"), ("py:class", "numpy.random.Generator")],
    "sklearn": [("py:function", "sklearn.datasets.load_digits")],
}


@functools.cache
def inventory(name):
    base_url, location = MAPPING[name]
    with open(ROOT / location, "rb") as stream:
        return InventoryFile.load(stream, base_url, lambda base, uri: base + uri)


def version_of(name):
    """The documented version the inventory states in its header."""
    first_type = next(iter(inventory(name).values()))
    _project, version, _uri, _display = next(iter(first_type.values()))
    return version


@pytest.mark.parametrize("name", sorted(MAPPING))
def test_every_inventory_is_a_committed_file_that_loads(name):
    base_url, location = MAPPING[name]
    assert isinstance(location, str) and "://" not in location, (
        f"{name}: the inventory must be a local file, not {location!r}")
    path = ROOT / location
    assert path.parent == ROOT / "_inventories" and path.is_file(), f"{name}: no file {path}"
    assert base_url.startswith("https://") and base_url.endswith("/")
    assert sum(len(objects) for objects in inventory(name).values()) > 1000


@pytest.mark.parametrize("name", sorted(MAPPING))
def test_the_url_is_the_inventory_version_or_the_latest(name):
    """A versioned URL links to the pages the inventory describes; "latest" or "stable"
    only where the names the book links to are where they were (_inventories/README.md)."""
    base_url, _ = MAPPING[name]
    url_version = re.search(r"\d+\.\d+(\.\d+)?", base_url)
    if url_version is None:
        assert re.search(r"/(latest|stable)/", base_url), f"{name}: {base_url} names no version"
        return
    version = version_of(name)
    assert version == url_version[0] or version.startswith(url_version[0] + "."), (
        f"{name}: inventory of version {version}, links to {base_url}")


@pytest.mark.parametrize(("name", "objtype", "target"),
                         [(name, objtype, target) for name, objects in REFERENCED.items()
                          for objtype, target in objects])
def test_every_object_the_docstrings_name_is_in_its_inventory(name, objtype, target):
    assert target in inventory(name).get(objtype, {}), f"{objtype} {target} not in {name}"


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_target_is_in_an_inventory(alias):
    role, target = ALIASES[alias]
    names = sorted(MAPPING)
    if ":" in target:  # an explicit inventory, as in "numpy:array_like"
        explicit, target = target.split(":", 1)
        assert explicit in MAPPING, f"{alias}: no inventory called {explicit}"
        names = [explicit]
    found = [name for name in names if target in inventory(name).get(role, {})]
    assert found, f"{alias}: {role} {target} is in none of {names}"


@pytest.mark.parametrize("alias", sorted(a for a, (role, _) in ALIASES.items()
                                         if role == "py:class" and "." in a))
def test_a_dotted_alias_names_the_same_class_as_its_target(alias):
    """``sympy.Matrix`` is a public name of ``sympy.matrices.dense.MutableDenseMatrix``."""
    def resolve(dotted):
        module, attribute = dotted.rsplit(".", 1)
        return getattr(importlib.import_module(module), attribute)

    assert resolve(alias) is resolve(ALIASES[alias][1])
