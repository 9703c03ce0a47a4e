"""The notebook time budget of chapters/conftest.py fails a notebook over it, and only then."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def run_budget(tmp_path, budget):
    """nbval on a one-cell notebook that burns about a CPU second, under `budget` seconds."""
    shutil.copy(ROOT / "chapters" / "conftest.py", tmp_path / "conftest.py")
    cell = nbformat.v4.new_code_cell("total = sum(i * i for i in range(3_000_000))",
                                     execution_count=1)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "burn.ipynb")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-o", "addopts=", f"--rootdir={tmp_path}",
         f"--notebook-budget={budget}", "burn.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_notebook_over_its_cpu_budget_fails_and_one_within_passes(tmp_path):
    over = run_budget(tmp_path, 0.05)
    assert over.returncode == 1, over.stdout
    assert "over its budget of 0.05" in over.stdout
    within = run_budget(tmp_path, 600)
    assert within.returncode == 0, within.stdout
    assert "s CPU in all, 1 notebooks" in within.stdout


def test_the_kernels_run_blas_on_one_thread(tmp_path):
    # BLAS threads spin while they wait, which counts as CPU time on a loaded machine
    shutil.copy(ROOT / "chapters" / "conftest.py", tmp_path / "conftest.py")
    cell = nbformat.v4.new_code_cell(
        "import numpy\nfrom threadpoolctl import threadpool_info\n"
        "assert {i['num_threads'] for i in threadpool_info()"
        " if i['user_api'] == 'blas'} == {1}", execution_count=1)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "threads.ipynb")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-o", "addopts=", f"--rootdir={tmp_path}", "threads.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout
