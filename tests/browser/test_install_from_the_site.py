"""The book installs from the published site alone (make test-browser).

``make book`` puts the package's wheel into the HTML (``_static/wheels/``) and the
landing page shows the line that installs it.  Here, as a reader without a clone
would: the served landing page is opened in Chromium and its install line read as
the page shows it (``_static/book.js`` has made the wheel's URL absolute); the line
is run, as shown, in a fresh virtual environment outside the repository, with
ipykernel and nbclient beside it (the extras bring matplotlib, scikit-learn and
mlxtend), everything but the wheel coming from the package registry; each
chapter of ``CHAPTERS`` is downloaded through its page's download button and
executed there, top to bottom, and its printed output compared with the page's.

The environment takes a minute or two to install (less with pip's cache).
"""

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.request import urlopen

import pytest

HTML = Path(__file__).resolve().parents[2] / "_build" / "html"

# Chapters that need no file of the repository: the quickstart, and the first look, which
# loads the digits through the `datasets` extra.
CHAPTERS = ["chapters/quickstart.html", "chapters/first_look.html"]

# Executes a notebook with the environment's own kernel, then reports where `rbm` and
# the kernel's Python came from.
EXECUTE = textwrap.dedent("""
    import json, sys
    import nbformat
    from nbclient import NotebookClient
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME
    notebook = nbformat.read(sys.argv[1], as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import rbm, sys; print(rbm.__file__); print(sys.prefix)"))
    NotebookClient(notebook, timeout=600, kernel_name=NATIVE_KERNEL_NAME,
                   record_timing=False).execute()
    nbformat.write(notebook, sys.argv[2])
""")


def printed(notebook):
    """The text each code cell printed (streams and plain-text results), cell by cell."""
    def text(output):
        if output["output_type"] == "stream":
            return "".join(output["text"])
        data = output.get("data", {})
        if "text/plain" in data and not any(k.startswith("image/") for k in data):
            return "".join(data["text/plain"])
        return ""
    return ["".join(text(o) for o in cell.get("outputs", []))
            for cell in notebook["cells"] if cell["cell_type"] == "code"]


@pytest.fixture(scope="module")
def install_line(server, browser):
    page = browser.new_page()
    page.goto(server + "intro.html", wait_until="load")
    lines = page.evaluate("""() => [...document.querySelectorAll('article code')]
        .map(c => c.innerText.replace(/\\s+/g, ' ').trim())
        .filter(t => t.startsWith('pip install') && t.includes('.whl'))""")
    page.close()
    assert len(lines) == 1, f"the landing page shows {len(lines)} wheel install lines: {lines}"
    return lines[0]


def test_the_install_line_names_the_wheel_this_site_serves(install_line, server):
    words = shlex.split(install_line)
    assert words[:2] == ["pip", "install"] and len(words) == 3, install_line
    name, url = words[2].split(" @ ")
    # The address is absolute, on this site (book.js completed it from the page's own).
    assert url.startswith(server + "_static/wheels/") and url.endswith(".whl"), url
    assert (HTML / url[len(server):]).is_file()
    assert name.endswith("[plotting,datasets]")


@pytest.fixture(scope="module")
def environment(install_line, tmp_path_factory):
    """A fresh virtual environment, outside the repository, where the line was run."""
    where = tmp_path_factory.mktemp("reader")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONHASHSEED"] = "0"
    subprocess.run([sys.executable, "-m", "venv", str(where / "env")], check=True, env=env)
    python = str(where / "env" / "bin" / "python")
    requirement = shlex.split(install_line)[2]
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           requirement, "ipykernel", "nbclient"],
                          cwd=where, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"{install_line} failed:\n{done.stderr[-3000:]}"
    return where, python, env


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_downloaded_chapter_runs_in_the_installed_package(chapter, environment, server,
                                                            browser):
    where, python, env = environment
    page = browser.new_page()
    page.goto(server + chapter, wait_until="load")
    link = page.evaluate(
        "() => [...document.querySelectorAll('a[href$=\".ipynb\"]')].map(a => a.href)")
    page.close()
    assert link, f"{chapter} offers no .ipynb download"
    source = where / (chapter.split("/")[-1].removesuffix(".html") + ".ipynb")
    with urlopen(link[0]) as response:
        source.write_bytes(response.read())
    executed = where / ("executed-" + source.name)
    done = subprocess.run([python, "-c", EXECUTE, str(source), str(executed)], cwd=where,
                          env={**env, "MPLBACKEND": "Agg"}, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"{source.name} failed in the fresh environment:\n" \
                                 f"{done.stderr[-3000:]}"
    committed = json.loads(source.read_text(encoding="utf-8"))
    ran = json.loads(executed.read_text(encoding="utf-8"))
    # The package and the kernel are the fresh environment's, not the repository's.
    package, prefix = printed(ran)[-1].split()
    assert prefix == str(where / "env"), prefix
    assert package.startswith(str(where / "env")) and "site-packages" in package, package
    expected, got = printed(committed), printed(ran)[:-1]
    differ = [(i, e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert len(expected) == len(got) and not differ, (
        f"{source.name}: printed output differs in {len(differ)} cells, e.g. cell "
        f"{differ[0][0]}:\n--- page\n{differ[0][1][:800]}\n--- run\n{differ[0][2][:800]}"
        if differ else f"{source.name}: {len(expected)} code cells, {len(got)} ran")
