"""The manage page's import form takes Quepid and RRE ratings files, with the grade map, all or nothing."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from corpus.formats.records import AnswerRecord
from corpus.services import answers_upsert
from ratings.models import Rating

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def movies(collection):
    answers_upsert(
        collection=collection,
        records=[AnswerRecord(a, f"Film {a}", "") for a in ["11", "1891", "1892", "329"]],
    )
    return collection


def test_manage_page_offers_quepid_and_rre_files(client, movies, trainer):
    client.force_login(trainer)

    html = client.get(reverse("collection-manage", args=["tiny"])).content.decode()

    assert 'name="quepid_csv"' in html and 'name="rre_json"' in html


def test_manage_page_imports_quepid_ten_point_scale_with_grade_map(client, movies, trainer):
    client.force_login(trainer)
    upload = SimpleUploadedFile("scale.csv", (DATA / "quepid" / "detailed-scale.csv").read_bytes())

    response = client.post(
        reverse("collection-import", args=["tiny"]), {"quepid_csv": upload, "grade_map": "10:3,7:2,4:1,1:0"}
    )

    assert response.status_code == 302
    assert sorted(Rating.objects.values_list("answer__external_id", "stars")) == [
        ("11", 3),
        ("1891", 2),
        ("1892", 1),
        ("329", 0),
    ]


def test_manage_page_bad_rre_file_says_where_and_imports_nothing(client, movies, trainer):
    client.force_login(trainer)
    quepid = SimpleUploadedFile("case.csv", b"query,docid,rating\nstar wars,11,3\n")
    rre = SimpleUploadedFile(
        "rre.json",
        b'{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents": {"3": ["11"], "9": ["329"]}}]}',
    )

    response = client.post(
        reverse("collection-import", args=["tiny"]), {"quepid_csv": quepid, "rre_json": rre}
    )

    assert response.status_code == 400
    assert (
        "rre.json line 2: field &quot;query_groups[0].relevant_documents.9&quot;: gain 9 is out of range for the "
        "grade map. Nothing was imported."
    ) in response.content.decode()
    assert Rating.objects.count() == 0
