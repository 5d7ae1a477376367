"""The manage page's imports of judgments: the import form's option, the list with each import's option,
and turning it on or off (trainers of the collection only)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Split
from ratings.models import GroundTruthImport
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

DOCS = b'{"add": {"doc": {"id": 1, "title": "Lift", "body": "wing lift"}}, "add": {"doc": {"id": 2, "title": "Drag"}}}'
GROUND_TRUTH = b'"what lifts","1","4"\n"what drags","2","3"\n'


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _upload(client, collection, **extra):
    return client.post(
        reverse("collection-import", args=[collection.slug]),
        {
            "rnr_documents": SimpleUploadedFile("docs.json", DOCS),
            "rnr_ground_truth": SimpleUploadedFile("gt.csv", GROUND_TRUTH),
            **extra,
        },
    )


def _imported(collection, *, unlisted_incorrect: bool) -> GroundTruthImport:
    record = collection_import(
        collection=collection,
        answers=[AnswerRecord("a1", "Lift", "wing lift")],
        questions=[
            QuestionRecord("q1", "what lifts", Split.TRAIN),
            QuestionRecord("q2", "drags", Split.TEST),
        ],
        judgments=[JudgmentRecord("q1", "a1", 3), JudgmentRecord("q2", "a1", 1)],
        unlisted_incorrect=unlisted_incorrect,
        files=["qrels.txt"],
    ).ground_truth_import
    assert record is not None
    return record


def test_collection_manage_import_form_ticks_unlisted_incorrect_by_default(client, collection, trainer):
    client.force_login(trainer)

    html = client.get(reverse("collection-manage", args=[collection.slug])).content.decode()

    box = re.search(r'<input type="checkbox" name="unlisted_incorrect"[^>]*>', html)
    assert box is not None and " checked" in box.group(0), box
    assert "Answers not listed for a judged question are incorrect (0 stars)" in html
    assert "No judgments imported yet." in html


def test_collection_import_upload_keeps_the_option_ticked_or_not(client, collection, trainer):
    client.force_login(trainer)

    ticked = _upload(client, collection, unlisted_incorrect="on")
    unticked = _upload(client, collection)

    assert (ticked.status_code, unticked.status_code) == (302, 302)
    records = list(GroundTruthImport.objects.order_by("id"))
    assert [(r.files, r.judgments, r.unlisted_incorrect, r.created_by) for r in records] == [
        ("docs.json, gt.csv", 2, True, trainer),
        ("docs.json, gt.csv", 2, False, trainer),
    ]
    page = client.get(reverse("collection-manage", args=[collection.slug])).content.decode()
    assert (
        f"Imported: answers: 0 new, 0 updated, 2 unchanged; questions: 0 new, 0 updated, 2 unchanged; ratings: "
        f"0 new, 0 updated, 2 unchanged. The answers that import {records[1].pk} (docs.json, gt.csv) does not list for "
        "its 2 judged questions stay unknown (not rated)."
    ) in _text(page)


def test_collection_manage_lists_imports_with_their_option(client, collection, trainer):
    on = _imported(collection, unlisted_incorrect=True)
    off = _imported(collection, unlisted_incorrect=False)
    client.force_login(trainer)

    html = client.get(reverse("collection-manage", args=[collection.slug])).content.decode()

    rows = re.findall(r'<tr id="import-(\d+)" data-testid="import-row">(.*?)</tr>', html, re.S)
    assert [int(pk) for pk, _ in rows] == [on.pk, off.pk]
    assert [_text(row) for _, row in rows] == [
        f"import {on.pk} (qrels.txt) {on.created_at:%Y-%m-%d %H:%M} (rater ground-truth) 2 2 (1) incorrect (0 stars) "
        f"Read them as unknown (import {on.pk} (qrels.txt))",
        f"import {off.pk} (qrels.txt) {off.created_at:%Y-%m-%d %H:%M} (rater ground-truth) 2 2 (1) unknown "
        f"Read them as incorrect (import {off.pk} (qrels.txt))",
    ]


def test_collection_import_option_authz(client, collection, rater, trainer, outsider):
    record = _imported(collection, unlisted_incorrect=False)
    url = reverse("collection-import-option", args=[collection.slug, record.pk])

    anonymous = client.post(url, {"unlisted_incorrect": "true"})
    client.force_login(outsider)
    other = client.post(url, {"unlisted_incorrect": "true"})
    client.force_login(rater)
    as_rater = client.post(url, {"unlisted_incorrect": "true"})
    record.refresh_from_db()
    unchanged = record.unlisted_incorrect
    client.force_login(trainer)
    as_trainer = client.post(url, {"unlisted_incorrect": "true"})

    assert (anonymous.status_code, other.status_code, as_rater.status_code) == (302, 404, 403)
    assert anonymous["Location"].startswith("/accounts/login/") or "login" in anonymous["Location"]
    assert unchanged is False
    assert (as_trainer.status_code, as_trainer["Location"]) == (302, f"/c/tiny/manage/#import-{record.pk}")
    record.refresh_from_db()
    assert record.unlisted_incorrect is True


def test_collection_import_option_of_another_collection_is_404(client, collection, other_collection, trainer):
    record = _imported(other_collection, unlisted_incorrect=False)
    client.force_login(trainer)

    response = client.post(
        reverse("collection-import-option", args=[collection.slug, record.pk]), {"unlisted_incorrect": "true"}
    )

    record.refresh_from_db()
    assert (response.status_code, record.unlisted_incorrect) == (404, False)


def test_collection_import_option_turns_off_and_says_so(client, collection, trainer):
    record = _imported(collection, unlisted_incorrect=True)
    client.force_login(trainer)
    url = reverse("collection-import-option", args=[collection.slug, record.pk])

    bad = client.post(url, {"unlisted_incorrect": "maybe"}, follow=True)
    record.refresh_from_db()
    still_on = record.unlisted_incorrect
    off = client.post(url, {"unlisted_incorrect": "false"}, follow=True)

    assert still_on is True
    assert "unlisted_incorrect must be true or false." in bad.content.decode()
    record.refresh_from_db()
    assert record.unlisted_incorrect is False
    assert (
        f"The training now reads the answers import {record.pk} (qrels.txt) does not list for its judged "
        "questions as unknown; the next training uses it."
    ) in _text(off.content.decode())
