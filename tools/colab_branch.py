"""Write the Colab copies of the book's notebooks, and optionally push them to a branch.

Usage:
    python tools/colab_branch.py --repository URL --commit SHA --out DIR [--push REMOTE]

Colab opens a notebook straight from GitHub, with nothing else of the
repository: no ``rbm`` package, no ``chapters/data``, no benchmark results.
The committed notebooks cannot say where to get them, because the
repository's address is known only to the workflow that publishes the book
(``BOOK_REPOSITORY_URL``). So the publishing workflow runs this script: it
copies every notebook of ``_toc.yml`` to ``DIR`` at the same path, with one
cell put first that, on Colab only, fetches the repository at ``SHA`` (the
commit the book was built from), installs its package and changes to its
``chapters`` folder; everywhere else the cell does nothing. With ``--push``
the copies become the single commit of the branch ``colab`` (replaced each
time), which the book's Colab buttons open (``_ext/book_fixes.py``).

Only the standard library is used, so the workflow needs no installation to
run it.
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The branch that holds the Colab copies.
BRANCH = "colab"

#: Where the cell puts the repository on Colab's machine.
CHECKOUT = "/content/rbm-book"

_SHA = re.compile(r"[0-9a-f]{40}")

CELL = '''\
# On Colab only: fetch this book at the commit these pages were built from,
# install its package and work in its chapters folder. Elsewhere: nothing.
import os, subprocess, sys

if "google.colab" in sys.modules:
    BOOK = "{checkout}"
    if not os.path.isdir(BOOK):
        for command in (
            ["git", "init", "--quiet", BOOK],
            ["git", "-C", BOOK, "fetch", "--quiet", "--depth=1",
             "{repository}", "{commit}"],
            ["git", "-C", BOOK, "checkout", "--quiet", "FETCH_HEAD"],
            [sys.executable, "-m", "pip", "install", "--quiet",
             BOOK + "[plotting,datasets]"],
        ):
            subprocess.run(command, check=True)
    os.chdir(BOOK + "/chapters")'''


def install_cell(repository, commit, checkout=CHECKOUT):
    """The source of the first cell of every Colab copy."""
    if not re.fullmatch(r"(https://|file://)[^\s\"'\\]+", repository):
        raise ValueError(f"repository must be an https:// (or file://) URL without quotes "
                         f"or spaces, got {repository!r}")
    if not _SHA.fullmatch(commit):
        raise ValueError(f"commit must be a full 40-character hexadecimal SHA, got {commit!r}")
    return CELL.format(repository=repository.rstrip("/"), commit=commit, checkout=checkout)


def toc_notebooks(root=ROOT):
    """The notebooks the book's table of contents lists, as paths relative to `root`."""
    files = re.findall(r"^\s*-\s*file:\s*(\S+)\s*$", (root / "_toc.yml").read_text(), re.M)
    return [Path(f).with_suffix(".ipynb") for f in files
            if (root / f).with_suffix(".ipynb").is_file()]


def colab_copy(notebook, cell_source):
    """The notebook (a dict) with a first code cell of `cell_source`."""
    lines = cell_source.splitlines(keepends=True)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": lines,
    }
    copy = dict(notebook)
    copy["cells"] = [cell, *notebook["cells"]]
    return copy


README = """\
# Colab copies of the book's notebooks

Written by `tools/colab_branch.py` from {repository} at commit {commit}.
Each notebook's first cell installs the book's package (distribution
`rbm-book`, imported as `rbm`) from that commit when it runs on Colab. Do not
edit this branch: the publishing workflow replaces it, as one commit, every
time the book is published from `main`.
"""


def write_copies(out, repository, commit, root=ROOT):
    """Write the Colab copy of every notebook of the book under `out`; return their paths."""
    cell = install_cell(repository, commit)
    out = Path(out)
    written = []
    for relative in toc_notebooks(root):
        notebook = json.loads((root / relative).read_text(encoding="utf-8"))
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        # As nbformat writes a notebook: one-space indent, sorted keys, UTF-8.
        target.write_text(json.dumps(colab_copy(notebook, cell), indent=1, sort_keys=True,
                                     ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    (out / "README.md").write_text(README.format(repository=repository, commit=commit),
                                   encoding="utf-8")
    return written


def push(out, remote, commit):
    """Make `out` the single commit of branch ``colab`` on `remote` (replacing it)."""
    def git(*args):
        subprocess.run(["git", "-C", str(out), *args], check=True)
    git("init", "--quiet")
    git("add", "--all")
    git("-c", "user.name=rbm-book publishing workflow",
        "-c", "user.email=rbm-book@users.noreply.github.com",
        "commit", "--quiet", "-m", f"Colab copies of the notebooks of {commit}")
    git("push", "--quiet", "--force", remote, f"HEAD:refs/heads/{BRANCH}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repository", required=True,
                        help="the repository's https URL, as in BOOK_REPOSITORY_URL")
    parser.add_argument("--commit", required=True, help="the full SHA the book is built from")
    parser.add_argument("--out", required=True, help="an empty or new directory")
    parser.add_argument("--push", metavar="REMOTE",
                        help="push the copies as branch 'colab' to this remote URL")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        parser.error(f"--out {out} is not empty")
    written = write_copies(out, args.repository, args.commit)
    print(f"wrote {len(written)} Colab copies under {out}")
    if args.push:
        push(out, args.push, args.commit)
        print(f"pushed them as branch '{BRANCH}'")


if __name__ == "__main__":
    sys.exit(main())
