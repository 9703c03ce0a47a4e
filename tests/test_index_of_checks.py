"""The index of checks (reference/checks.md) is generated from the notebooks and kept current."""

from tool_scripts import ROOT, load_tool

index = load_tool("index_of_checks")


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
