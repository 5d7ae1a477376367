"""The README is the users' guide: short, the two commands and then rating first; the test suite's
internals are in CONTRIBUTING.md, long details under docs/, and every link between them leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOCUMENTS = [README, CONTRIBUTING, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# What only contributors need: the test suite's workers, costs and databases.
CONTRIBUTOR_TERMS = ("xdist", "TEST_WORKERS", "CPU-seconds", "test_test_gw", "Redis database")


def headings(path: Path) -> list[str]:
    return [line[3:] for line in path.read_text().splitlines() if line.startswith("## ")]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_at_most_300_lines():
    assert len(README.read_text().splitlines()) <= 300


def test_readme_starts_with_the_two_commands_then_rating():
    assert headings(README)[:2] == ["The two commands", "Rating"]


def test_readme_has_the_measures_section_after_the_evaluation():
    found = headings(README)
    assert found[found.index("Evaluation and the dashboard") + 1] == "How the figures are measured"


def test_readme_leaves_the_test_suite_internals_to_contributing():
    readme, contributing = README.read_text(), CONTRIBUTING.read_text()
    assert [term for term in CONTRIBUTOR_TERMS if term in readme] == []
    assert [term for term in CONTRIBUTOR_TERMS if term not in contributing] == []
    assert "](CONTRIBUTING.md)" in readme
    assert "Where things are" in headings(CONTRIBUTING)


def test_readme_says_the_commands_ci_and_the_makefile_run():
    readme = README.read_text()
    assert "make test" in readme and "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make run PORT=8001" in readme
    assert "PORT ?= 8000" in (ROOT / "Makefile").read_text()


def test_readme_rating_fragment_is_not_repeated():
    sentence = "Re-rating keeps the old value in the history."
    for path in DOCUMENTS:
        assert path.read_text().replace("\n", " ").count(sentence) <= 1, path.name


def test_documents_links_lead_to_files_and_headings_that_exist():
    broken = []
    for path in DOCUMENTS:
        for target in LINK.findall(path.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.name}: {target} (no such file)")
                continue
            if anchor and anchor not in map(slug, _all_headings(linked)):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert broken == []


def _all_headings(path: Path) -> list[str]:
    return [line.lstrip("#").strip() for line in path.read_text().splitlines() if line.startswith("#")]
