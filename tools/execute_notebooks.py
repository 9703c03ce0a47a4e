"""Execute notebooks in place, deterministically, without per-cell timing metadata.

Usage: python tools/execute_notebooks.py chapters/*.ipynb

Each notebook runs top to bottom in a fresh kernel of the current Python,
with PYTHONHASHSEED=0, one BLAS thread (OPENBLAS_NUM_THREADS=1, unless set; as
nbval's kernels get it from chapters/conftest.py) and the notebook's folder as
working directory.
Execution timestamps are not recorded, and consecutive pieces of one
stream (which the kernel flushes at timing-dependent points) are merged
into one output, so re-running an unchanged notebook leaves no diff.
"""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nbformat.write(nb, path)


def merge_streams(outputs):
    """Join each run of consecutive stream outputs with the same name into one output."""
    merged = []
    for out in outputs:
        previous = merged[-1] if merged else None
        if (out.output_type == "stream" and previous is not None
                and previous.output_type == "stream" and previous.name == out.name):
            previous.text += out.text
        else:
            merged.append(out)
    return merged


def main(paths):
    if not paths:
        raise SystemExit("usage: python tools/execute_notebooks.py NOTEBOOK [NOTEBOOK ...]")
    os.environ["PYTHONHASHSEED"] = "0"
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for path in paths:
        print(f"executing {path}", flush=True)
        execute(path)


if __name__ == "__main__":
    main(sys.argv[1:])
