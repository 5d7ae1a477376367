"""The admin's page of imports of judgments: the option changes through its service, nothing else does."""

from __future__ import annotations

import pytest

from corpus.models import Question
from ratings.models import GroundTruthImport
from ratings.services import ground_truth_import_record
from trainer.services import import_rater

pytestmark = pytest.mark.django_db


def _import(collection) -> GroundTruthImport:
    return ground_truth_import_record(
        collection=collection,
        rater=import_rater(),
        question_ids=Question.objects.filter(collection=collection).values_list("id", flat=True),
        judgments=12,
        files=["qrels.txt"],
    )


def test_admin_ground_truth_import_option_turns_off_and_keeps_the_record(client, make_user, collection):
    record = _import(collection)
    client.force_login(make_user("root", is_staff=True, is_superuser=True))

    response = client.post(
        f"/admin/ratings/groundtruthimport/{record.pk}/change/",
        {"unlisted_incorrect": "", "files": "changed.txt", "judgments": 1},
        follow=True,
    )

    assert response.status_code == 200
    record.refresh_from_db()
    assert (record.unlisted_incorrect, record.files, record.judgments) == (False, "qrels.txt", 12)


def test_admin_ground_truth_import_cannot_be_added(client, make_user):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))

    assert client.get("/admin/ratings/groundtruthimport/add/").status_code == 403
