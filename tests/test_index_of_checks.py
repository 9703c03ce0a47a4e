"""The index of checks (reference/checks.md) is generated from the notebooks and kept current."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("index_of_checks", ROOT / "tools/index_of_checks.py")
index = importlib.util.module_from_spec(spec)
spec.loader.exec_module(index)


def test_index_of_checks_is_current():
    assert (ROOT / "reference" / "checks.md").read_text() == index.render(), (
        "reference/checks.md is stale: run `make checks-index`")


def test_every_chapter_in_the_toc_contributes_verdicts():
    """Except pages marked as reporting, not checking (metadata book.reports_only)."""
    import json

    for path in index.toc_notebooks():
        if json.loads(path.read_text())["metadata"].get("book", {}).get("reports_only"):
            continue
        _, rows = index.collect(path)
        assert rows, f"{path.name} prints no 'verdict:' line"
