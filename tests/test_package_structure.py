"""The package reads as layers: every module imports only from modules below it.

The table is the drawing in the README; a new module must be added to it here.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rbm"

# layer -> modules; a module may import from any lower layer, never from its own or a higher one
LAYERS = {
    0: {"_validation", "_compiled"},
    1: {"special", "checks", "datasets", "reference_impl"},
    2: {"layers", "symbolic"},
    3: {"model", "_enumeration"},
    4: {"_kernels"},
    5: {"exact", "sampling", "pseudolikelihood"},
    6: {"estimators", "transition", "curvature", "principles"},
    7: {"ais", "_fused", "cd_theory", "tempering"},
    8: {"training", "partition", "short_run"},
    9: {"deep"},
    10: {"plotting", "testing"},
}
LAYER_OF = {module: layer for layer, modules in LAYERS.items() for module in modules}


def imports_of(path):
    """The rbm modules a file imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rbm"):
            if node.module == "rbm":
                found.update(alias.name for alias in node.names)
            else:
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("rbm."))
    return found


MODULES = sorted([p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"]
                 + [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()])


def files_of(module):
    """The files of a module: itself, or every file of a subpackage."""
    path = PACKAGE / module
    return sorted(path.glob("*.py")) if path.is_dir() else [PACKAGE / f"{module}.py"]


def test_subpackages_are_found():
    assert "testing" in MODULES and len(files_of("testing")) > 1


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if m not in LAYER_OF]
    assert not missing, f"add {missing} to LAYERS in {Path(__file__).name} and the README"


@pytest.mark.parametrize("module", MODULES)
def test_a_module_imports_only_from_lower_layers(module):
    if module not in LAYER_OF:
        pytest.skip("reported by test_every_module_has_a_layer")
    # a subpackage's files import one another: only imports from outside it are layered
    imported = set().union(*(imports_of(path) for path in files_of(module))) - {module}
    upward = {other: LAYER_OF.get(other) for other in imported
              if LAYER_OF.get(other, 99) >= LAYER_OF[module]}
    assert not upward, f"{module} (layer {LAYER_OF[module]}) imports {upward}"


def test_the_check_finds_an_upward_import(tmp_path):
    """The parser sees imports inside functions, as the lazy import that made a cycle was."""
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from rbm.model import RBM\n    import rbm.exact\n")
    assert imports_of(source) == {"model", "exact"}


def private_names_imported(path):
    """Private names (``_x``, not dunder) a file takes from another rbm module: by
    ``from rbm.m import _x`` or as an attribute of an imported rbm module (``m._x``)."""
    tree = ast.parse(path.read_text())
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rbm"):
            for alias in node.names:
                if node.module == "rbm":
                    modules.add(alias.asname or alias.name)  # a module: private modules are fine
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rbm."):
                    modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("module", MODULES)
def test_a_module_imports_no_private_name_of_another(module):
    """Shared helpers live in a private module under public names (as scikit-learn's do)."""
    found = [name for path in files_of(module) for name in private_names_imported(path)]
    assert not found, f"{module} imports the private names {found}"


def test_the_check_finds_a_private_import(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("from rbm.exact import _enumerate, log_partition\n"
                      "from rbm import units\n"
                      "def f(m):\n    return units._cd_gradient(m), units.__name__\n")
    assert private_names_imported(source) == ["rbm.exact._enumerate", "units._cd_gradient"]
