"""export_ground_truth writes labels that an import reads back to the same labels."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Collection
from ratings.models import Label, Rating

DEMO = Path(__file__).resolve().parents[2] / "trainer" / "demo_data"


@pytest.fixture
def cranfield(db):
    call_command(
        "import_collection",
        "cran",
        "--rnr-documents",
        str(DEMO / "cranfield-data.json"),
        "--rnr-ground-truth",
        str(DEMO / "cranfield-gt.csv"),
        stdout=StringIO(),
    )
    return Collection.objects.get(slug="cran")


def labels() -> set[tuple[str, str, int]]:
    return set(Label.objects.values_list("question__external_id", "answer__external_id", "gain"))


def export(*args: str) -> str:
    out = StringIO()
    call_command("export_ground_truth", "cran", *args, stdout=out)
    return out.getvalue()


def test_export_trec_qrels_lines(cranfield):
    text = export("--format", "trec-qrels", "--split", "all")
    lines = text.splitlines()
    assert len(lines) == 1197
    q, zero, a, stars = lines[0].split()
    assert zero == "0" and stars in {"0", "1", "2", "3"}


def test_export_split_train_only_has_train_questions(cranfield):
    text = export("--format", "jsonl", "--split", "train")
    assert '"split": "test"' not in text
    assert text.count("\n") == Label.objects.filter(question__split="train").count()


@pytest.mark.parametrize(
    ("fmt", "import_args"),
    [
        ("jsonl", ("--ground-truth-jsonl",)),
        ("rnr-csv", ("--grade-map", "identity", "--rnr-ground-truth")),
    ],
)
def test_export_then_import_reproduces_labels(cranfield, tmp_path, fmt, import_args):
    expected = labels()
    path = tmp_path / f"labels.{fmt}"
    call_command("export_ground_truth", "cran", "--format", fmt, "--split", "all", "--output", str(path))
    Rating.objects.all().delete()
    Label.objects.all().delete()
    call_command("import_collection", "cran", *import_args, str(path), stdout=StringIO())
    assert labels() == expected


def test_export_qrels_round_trip_through_import(cranfield, tmp_path):
    expected = labels()
    path = tmp_path / "qrels.txt"
    call_command(
        "export_ground_truth", "cran", "--format", "trec-qrels", "--split", "all", "--output", str(path)
    )
    Rating.objects.all().delete()
    Label.objects.all().delete()
    call_command("import_collection", "cran", "--qrels", str(path), stdout=StringIO())
    assert labels() == expected


def test_export_unknown_collection_is_an_error(db):
    with pytest.raises(CommandError, match="no collection with slug 'nope'"):
        call_command("export_ground_truth", "nope", stdout=StringIO())
