"""import_collection --quepid-csv / --rre-json: ratings land as import ratings, a bad file imports nothing."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.formats.common import question_id_from_text
from corpus.formats.records import AnswerRecord
from corpus.models import Question
from corpus.services import answers_upsert
from ratings.models import Label, Rating

DATA = Path(__file__).resolve().parents[1] / "data"
MOVIES = ["11", "1891", "1892", "329", "679", "348"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def movies(collection):
    answers_upsert(collection=collection, records=[AnswerRecord(a, f"Film {a}", "") for a in MOVIES])
    return collection


def import_(*args: str) -> str:
    out = StringIO()
    call_command("import_collection", "tiny", *args, stdout=out)
    return out.getvalue()


def stars(collection) -> dict[tuple[str, str], int]:
    return {
        (r.question.text, r.answer.external_id): r.stars
        for r in Rating.objects.filter(question__collection=collection).select_related("question", "answer")
    }


def test_import_quepid_case_ratings(movies):
    out = import_("--quepid-csv", str(DATA / "quepid" / "case-ratings.csv"))

    assert "questions: 4 new" in out and "ratings: 7 new" in out
    assert stars(movies) == {
        ("star wars", "11"): 3,
        ("star wars", "1891"): 3,
        ("star wars", "1892"): 2,
        ("star wars", "329"): 0,
        ("aliens, the sequel", "679"): 3,
        ("aliens, the sequel", "348"): 1,
        ("jurassic park", "329"): 3,
    }
    assert Question.objects.get(external_id=question_id_from_text("space odyssey")).text == "space odyssey"
    assert set(Rating.objects.values_list("source", "rater__username")) == {("import", "ground-truth")}
    assert Label.objects.count() == 7


def test_import_quepid_again_changes_nothing(movies):
    import_("--quepid-csv", str(DATA / "quepid" / "case-ratings.csv"))

    out = import_("--quepid-csv", str(DATA / "quepid" / "case-ratings.csv"))

    assert "ratings: 0 new, 0 updated, 7 unchanged" in out


def test_import_quepid_snapshot_ratings_then_rre_with_grade_map(movies):
    import_("--quepid-csv", str(DATA / "quepid" / "snapshot-ratings.csv"))
    out = import_("--rre-json", str(DATA / "rre" / "ratings-topics.json"), "--grade-map", "3:2,2:1")

    assert "ratings: 1 new, 1 updated, 0 unchanged" in out
    assert stars(movies) == {
        ("star wars", "11"): 2,  # 3 in Quepid, gain 3 → 2 stars from RRE
        ("star wars", "1891"): 1,
        ("star wars", "1892"): 2,
        ("aliens, the sequel", "679"): 3,
    }


def test_import_rre_unknown_document_names_line_and_imports_nothing(movies, tmp_path):
    bad = tmp_path / "rre.json"
    bad.write_text(
        '{"query_groups": [{"queries": [{"placeholders": {"$query": "star wars"}}],\n'
        ' "relevant_documents": {\n "3": ["11", "9999"]}}]}'
    )

    with pytest.raises(CommandError) as error:
        import_("--quepid-csv", str(DATA / "quepid" / "case-ratings.csv"), "--rre-json", str(bad))

    assert str(error.value) == "rre.json line 3: answer id 9999 not in collection tiny (nothing was imported)"
    assert (Question.objects.count(), Rating.objects.count()) == (0, 0)
