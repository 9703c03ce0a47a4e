"""What the cache scripts of ``tools/`` share: run named parts, write one JSON cache.

Used by ``train_recipe.py`` and ``what_cd_optimises.py`` (run as scripts, so this folder is on
``sys.path``; ``tests/tool_scripts.py`` puts it there for the cache tests).
"""

import json
from pathlib import Path

from threadpoolctl import threadpool_limits


def write_parts(parts, path, description):
    """Run each of `parts` (name -> function of no argument) on one BLAS thread, printing its
    name, and write ``{"description": ..., name: result, ...}`` as JSON to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    result = {"description": description}
    with threadpool_limits(1, user_api="blas"):
        for name, part in parts.items():
            print(f"{name} ...", flush=True)
            result[name] = part()
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")
