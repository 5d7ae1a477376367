"""One name per measure on every page: NDCG@10 and accuracy@5 with the collection's (or run's) k, never "@k"."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"


def test_templates_and_scripts_never_name_a_measure_with_a_bare_k():
    bare = re.compile(r"(?i)(ndcg|accuracy|judged)@k\b")
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted([*TEMPLATES.rglob("*.html"), *(ROOT / "static" / "js").glob("*.js")])
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if bare.search(line)
    ]
    assert found == []


def test_templates_never_show_ndcg_or_accuracy_as_a_percentage():
    percent = re.compile(r"\{\{ *headline\.(percent|accuracy_percent) *\}\}")
    found = [
        str(path.relative_to(TEMPLATES))
        for path in TEMPLATES.rglob("*.html")
        if percent.search(path.read_text())
    ]
    assert found == []
