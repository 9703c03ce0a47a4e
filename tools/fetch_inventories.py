"""Fetch the intersphinx inventories in _inventories/ from Debian's documentation packages.

Usage: python3 tools/fetch_inventories.py [--mirror URL] [NAME ...]

The book links to the documentation of Python, NumPy, SciPy, SymPy and
scikit-learn, and its build reads their inventories (objects.inv) from
_inventories/ instead of fetching them. Each one is the objects.inv of the
Debian package that ships that project's HTML documentation: the package is
downloaded with apt-get into a private apt state in a temporary folder (the
machine's own apt configuration and lists are left alone), and the file is
copied out of it. The script prints each file's package, version and SHA-256
for _inventories/README.md.

Needs a Debian machine (apt-get, dpkg-deb, the Debian archive keyring) whose
apt sources name a Debian mirror (run `apt-get update` first), or --mirror.
Packages in unstable are replaced often: a later run may well bring a newer
Debian revision, or a newer upstream version (then update the versioned URL
in _config.yml's intersphinx_mapping to match).
"""

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "_inventories"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# name: (Debian suite, binary package, objects.inv inside the package)
INVENTORIES = {
    # The book is built and run with Python 3.11, whose documentation is in bookworm.
    "python": ("bookworm", "python3.11-doc", "usr/share/doc/python3.11/html/objects.inv"),
    # Unstable holds the versions requirements.txt pins.
    "numpy": ("sid", "python-numpy-doc", "usr/share/doc/python-numpy/html/objects.inv"),
    "scipy": ("sid", "python-scipy-doc", "usr/share/doc/python-scipy-doc/html/objects.inv"),
    "sklearn": ("sid", "python-sklearn-doc", "usr/share/doc/python-sklearn-doc/html/objects.inv"),
    # Later python-sympy-doc packages (trixie's 1.13, unstable's 1.14) ship no objects.inv.
    "sympy": ("bookworm", "python-sympy-doc", "usr/share/doc/python-sympy-doc/html/objects.inv"),
}


def run(*args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout


def system_mirror():
    """The Debian archive that the machine's apt sources use."""
    uris = run("apt-get", "indextargets", "--format", "$(REPO_URI)",
               "Identifier: Packages", "Origin: Debian", "Label: Debian").split()
    if not uris:
        sys.exit("no Debian archive in the apt lists: run `apt-get update`, or pass --mirror")
    return uris[0]


def apt_options(state):
    """apt-get options for an apt state of its own in the folder `state`."""
    for sub in ("lists/partial", "cache/archives/partial", "sources"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", f"Dir::Etc::SourceParts={state / 'sources'}",
            "-o", f"Dir::State::Lists={state / 'lists'}",
            "-o", f"Dir::Cache={state / 'cache'}",
            "-o", "Dir::State::status=/dev/null",
            "-o", "Debug::NoLocking=1"]


def download(mirror, suite, package, workdir):
    """The .deb of `package` in `suite`, downloaded into `workdir`."""
    state = workdir / f"apt-{suite}"
    options = apt_options(state)
    sources = state / "sources" / f"{suite}.sources"
    if not sources.exists():
        sources.write_text(f"Types: deb\nURIs: {mirror}\nSuites: {suite}\n"
                           f"Components: main\nSigned-By: {KEYRING}\n")
        run("apt-get", *options, "update")
    run("apt-get", *options, "download", package, cwd=workdir)
    (deb,) = workdir.glob(f"{package}_*.deb")
    return deb


def extract(deb, member):
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True,
                         capture_output=True).stdout
    return subprocess.run(["tar", "-xO", f"./{member}"], input=tar, check=True,
                          capture_output=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", help="a Debian archive URL (default: the apt sources')")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"inventories to fetch (default: all of {', '.join(INVENTORIES)})")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(INVENTORIES))
    if unknown:
        parser.error(f"no inventory called {', '.join(unknown)}")
    mirror = args.mirror or system_mirror()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name in args.names or INVENTORIES:
            suite, package, member = INVENTORIES[name]
            deb = download(mirror, suite, package, workdir)
            version = run("dpkg-deb", "--field", str(deb), "Version").strip()
            data = extract(deb, member)
            (TARGET / f"{name}.inv").write_bytes(data)
            deb.unlink()
            print(f"{name}.inv  {package} {version} ({suite})  "
                  f"sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
