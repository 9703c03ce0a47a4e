"""references.bib parses, and every key is defined once (a broken entry stops `make book`)."""
import re
from pathlib import Path

from pybtex.database import parse_file

BIB = Path(__file__).resolve().parent.parent / "references.bib"


def test_the_bibliography_parses_with_unique_keys():
    keys = re.findall(r"^@[A-Za-z]+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), re.M)
    assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})
    entries = parse_file(str(BIB)).entries
    assert sorted(entries) == sorted(keys)
