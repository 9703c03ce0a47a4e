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
    1: {"special", "checks", "datasets"},
    2: {"model", "symbolic"},
    3: {"_enumeration", "sampling"},
    4: {"exact", "pseudolikelihood", "units"},
    5: {"estimators", "transition", "curvature"},
    6: {"ais", "_fused", "cd_theory", "tempering"},
    7: {"training"},
    8: {"plotting"},
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


MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if m not in LAYER_OF]
    assert not missing, f"add {missing} to LAYERS in {Path(__file__).name} and the README"


@pytest.mark.parametrize("module", MODULES)
def test_a_module_imports_only_from_lower_layers(module):
    if module not in LAYER_OF:
        pytest.skip("reported by test_every_module_has_a_layer")
    upward = {other: LAYER_OF.get(other) for other in imports_of(PACKAGE / f"{module}.py")
              if LAYER_OF.get(other, 99) >= LAYER_OF[module]}
    assert not upward, f"{module} (layer {LAYER_OF[module]}) imports {upward}"


def test_the_check_finds_an_upward_import(tmp_path):
    """The parser sees imports inside functions, as the lazy import that made a cycle was."""
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from rbm.model import RBM\n    import rbm.exact\n")
    assert imports_of(source) == {"model", "exact"}
