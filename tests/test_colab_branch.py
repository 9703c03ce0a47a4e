"""The Colab copies of the notebooks (tools/colab_branch.py) and their first cell.

The cell cannot be run on Colab here, so it is run as Colab would run it,
with ``google.colab`` present among the modules: the git commands run for
real against this repository (``file://``), and the pip command is recorded
and then checked with ``pip install --dry-run``, which builds the package's
metadata from the fetched commit without installing it.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import colab_branch  # noqa: E402

SHA = "0123456789abcdef0123456789abcdef01234567"
URL = "https://github.com/example/rbm-book"


def head_commit():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("the checkout has no commit")
    return done.stdout.strip()


@pytest.mark.parametrize("repository, commit, match", [
    ("github.com/example/rbm-book", SHA, "repository"),
    ('https://github.com/x/y"; rm -rf /', SHA, "repository"),
    ("https://github.com/x/y z", SHA, "repository"),
    (URL, "main", "commit"),
    (URL, SHA[:12], "commit"),
    (URL, SHA.upper(), "commit"),
])
def test_install_cell_refuses_an_address_or_commit_it_cannot_quote_safely(repository, commit,
                                                                         match):
    with pytest.raises(ValueError, match=match):
        colab_branch.install_cell(repository, commit)


def test_every_notebook_of_the_book_gets_the_cell_first_and_is_otherwise_unchanged(tmp_path):
    written = colab_branch.write_copies(tmp_path, URL + "/", SHA)
    notebooks = colab_branch.toc_notebooks()
    assert len(notebooks) == len(list((ROOT / "chapters").glob("*.ipynb"))) >= 16
    assert [p.relative_to(tmp_path) for p in written] == notebooks
    for relative in notebooks:
        original = json.loads((ROOT / relative).read_text(encoding="utf-8"))
        copy = json.loads((tmp_path / relative).read_text(encoding="utf-8"))
        first = copy["cells"][0]
        assert "".join(first["source"]) == colab_branch.install_cell(URL, SHA)
        assert first["outputs"] == [] and first["execution_count"] is None
        assert copy["cells"][1:] == original["cells"]
        assert copy["metadata"] == original["metadata"]
    cell = colab_branch.install_cell(URL, SHA)
    assert f'"{URL}", "{SHA}"' in cell  # the trailing slash is dropped
    assert SHA in (tmp_path / "README.md").read_text()


def test_the_cell_does_nothing_outside_colab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    assert "google.colab" not in sys.modules
    exec(colab_branch.install_cell(URL, SHA), {})
    assert calls == [] and Path.cwd() == tmp_path and list(tmp_path.iterdir()) == []


RUN_AS_ON_COLAB = textwrap.dedent("""
    import json, subprocess, sys, types
    sys.modules["google.colab"] = types.ModuleType("google.colab")
    pip_calls, real_run = [], subprocess.run
    def run(command, **kwargs):
        if command[1:3] == ["-m", "pip"]:
            pip_calls.append(command)
            return None
        return real_run(command, **kwargs)
    subprocess.run = run
    for _ in range(2):  # a second run of the cell finds the checkout and only changes folder
        exec(open(sys.argv[1]).read(), {})
    import os
    print(json.dumps({"cwd": os.getcwd(), "pip": pip_calls}))
""")


def test_on_colab_the_cell_fetches_the_commit_installs_the_package_and_enters_chapters(tmp_path):
    commit = head_commit()
    checkout = tmp_path / "content" / "rbm-book"
    cell = tmp_path / "cell.py"
    cell.write_text(colab_branch.install_cell(ROOT.as_uri(), commit, checkout=str(checkout)))
    done = subprocess.run([sys.executable, "-c", RUN_AS_ON_COLAB, str(cell)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    # The notebooks' relative paths (data/, ../benchmarks/) resolve from here.
    assert Path(result["cwd"]) == checkout / "chapters"
    assert (checkout / "chapters" / "data" / "digits_full_size.npz").is_file()
    assert (checkout / "benchmarks" / "results" / "results.json").is_file()
    fetched = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert fetched == commit
    # pip was asked once, for the fetched package with extras it declares ...
    [pip] = result["pip"]
    target = pip[-1]
    assert target == f"{checkout}[plotting,datasets]"
    extras = tomllib.loads((checkout / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert {"plotting", "datasets"} <= set(extras)
    # ... and pip can build and would install it.
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    dry = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps",
                          "--no-build-isolation", "--no-index", "--quiet", target],
                         capture_output=True, text=True, env=env, timeout=120)
    assert dry.returncode == 0, dry.stderr


def test_push_replaces_the_colab_branch_with_one_commit(tmp_path):
    head_commit()  # needs git
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    for round_ in range(2):
        out = tmp_path / f"out{round_}"
        colab_branch.main(["--repository", URL, "--commit", SHA, "--out", str(out),
                           "--push", str(remote)])
    log = subprocess.run(["git", "-C", str(remote), "log", "--format=%s", "colab"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert log == [f"Colab copies of the notebooks of {SHA}"]
    files = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "colab"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert "README.md" in files
    assert {str(p) for p in colab_branch.toc_notebooks()} <= set(files)


def test_out_must_be_empty(tmp_path, capsys):
    (tmp_path / "stale.txt").write_text("x")
    with pytest.raises(SystemExit):
        colab_branch.main(["--repository", URL, "--commit", SHA, "--out", str(tmp_path)])
    assert "not empty" in capsys.readouterr().err
