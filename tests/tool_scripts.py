"""What the cache tests share: the scripts of ``tools/`` loaded as modules, and their caches.

Each heavy chapter reads a cache in ``chapters/data`` written by a ``make`` target that runs a
script of ``tools/``; its test module loads that script with :func:`load_tool` and re-derives a
part of the cache with the script's own code.
"""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the same code on another machine may round differently (BLAS kernels), never by more than
# this over one segment of training
RTOL = 1e-9


def load_tool(name):
    """The script ``tools/<name>.py`` as a module (``tools/`` is not a package; it goes on
    ``sys.path``, as when the script runs, for the helpers the scripts share)."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.append(str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_cache(stem):
    """The JSON cache ``chapters/data/<stem>.json``."""
    return json.loads((ROOT / "chapters" / "data" / f"{stem}.json").read_text())
