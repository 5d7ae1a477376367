"""Training over the API: train (202/409/400), a training's state, versions, promote."""

from __future__ import annotations

import pytest

from rankers.models import ChampionChange, RankerVersion
from rankers.services import ranker_create
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.models import Training

pytestmark = pytest.mark.django_db


@pytest.fixture
def learnable(model_dir, make_user):
    data = learnable_collection()
    ranker = ranker_create(collection=data.collection, name="Built-in", kind="builtin")
    trainer = make_user("tina", collection=data.collection, role="trainer")
    client = APIClient()  # noqa: F405 - from api_support
    client.force_login(trainer)
    return ranker, client


def test_api_train_answers_202_with_location_of_the_training(learnable):
    ranker, client = learnable

    response = client.post(f"/api/rankers/{ranker.pk}/train/", {}, format="json")

    training = Training.objects.get(ranker=ranker)
    assert response.status_code == 202
    assert response["Location"] == f"http://testserver/api/trainings/{training.pk}/"
    body = response.json()
    assert (body["status"], body["phase"], body["progress"], body["version"], body["trigger"]) == (
        "queued",
        "queued",
        0.0,
        None,
        "api",
    )
    assert client.get(response["Location"]).json()["id"] == training.pk


def test_api_train_while_training_is_409_naming_the_running_one(learnable):
    ranker, client = learnable
    first = client.post(f"/api/rankers/{ranker.pk}/train/", {}, format="json").json()

    response = client.post(f"/api/rankers/{ranker.pk}/train/", {}, format="json")

    assert response.status_code == 409
    assert response.json()["training"] == first["url"]
    assert response.json()["detail"].startswith(
        f"Built-in is already training (training {first['id']}, queued"
    )
    assert Training.objects.count() == 1


def test_api_train_too_few_labels_is_400_saying_how_many_more(api_data, caller):
    response = caller("trainer").post(f"/api/rankers/{api_data.builtin.pk}/train/", {}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "detail": "Training needs at least 10 training questions with a relevant rated answer (1 star or "
        "more); there are 1. Rate 9 more training questions: /c/tiny/rate/?split=train",
        "training_questions": 1,
        "needed": 10,
        "rate_url": "http://testserver/c/tiny/rate/?split=train",
    }


def test_api_train_http_ranker_is_refused_as_a_builtin_one_too_few_labels(api_data, caller):
    # An http ranker trains a reranker of its service's answers, on the same training labels.
    response = caller("trainer").post(f"/api/rankers/{api_data.ranker.pk}/train/", {}, format="json")

    assert response.status_code == 400
    assert response.json()["training_questions"] == 1
    assert response.json()["needed"] == 10


def test_api_versions_list_marks_the_champion(api_data, caller):
    body = caller("rater").get(f"/api/rankers/{api_data.builtin.pk}/versions/").json()

    assert [(v["label"], v["method"], v["is_champion"]) for v in body["results"]] == [
        ("v2", "bm25", False),
        ("bm25", "bm25", False),  # the baseline, created with the ranker
        ("v1", "fusion", True),
    ]


def test_api_promote_makes_champion_and_records_who_and_why(api_data, caller, trainer):
    url = f"/api/rankers/{api_data.builtin.pk}/versions/{api_data.builtin_v2.pk}/promote/"

    response = caller("trainer").post(url, {"reason": "better on the help desk"}, format="json")

    assert response.status_code == 200
    assert (response.json()["label"], response.json()["is_champion"]) == ("v2", True)
    change = ChampionChange.objects.filter(ranker=api_data.builtin).first()
    assert (change.version_id, change.previous.label, change.changed_by_id, change.reason) == (
        api_data.builtin_v2.pk,
        "v1",
        trainer.pk,
        "better on the help desk",
    )


def test_api_promote_with_confirm_false_refuses_a_version_not_measured_better(api_data, caller):
    url = f"/api/rankers/{api_data.builtin.pk}/versions/{api_data.builtin_v2.pk}/promote/"

    response = caller("trainer").post(url, {"confirm": False}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "confirm": [
            "v2 has not been compared with the champion, v1: it is not measured better. Confirm to promote it "
            "anyway."
        ]
    }
    assert ChampionChange.objects.filter(ranker=api_data.builtin, version=api_data.builtin_v2).count() == 0


def test_api_promote_without_confirm_promotes_as_before_and_the_history_says_it_was_not_measured(
    api_data, caller, trainer
):
    url = f"/api/rankers/{api_data.builtin.pk}/versions/{api_data.builtin_v2.pk}/promote/"

    response = caller("trainer").post(url, {}, format="json")

    assert (response.status_code, response.json()["is_champion"]) == (200, True)
    change = ChampionChange.objects.get(ranker=api_data.builtin, version=api_data.builtin_v2)
    assert change.reason == (
        "Promoted by hand by tom. Confirmed although not measured better: v2 has not been compared with the "
        "champion, v1: it is not measured better."
    )


def test_api_versions_name_the_earlier_version_that_is_the_same_model(api_data, caller):
    body = caller("rater").get(f"/api/rankers/{api_data.builtin.pk}/versions/").json()

    # v2 ranks by plain BM25, as the baseline version bm25 does.
    assert [(v["label"], v["same_model_as"]) for v in body["results"]] == [
        ("v2", "bm25"),
        ("bm25", None),
        ("v1", None),
    ]


def test_api_promote_the_champion_again_is_400(api_data, caller):
    champion = RankerVersion.objects.get(ranker=api_data.builtin, label="v1")

    response = caller("trainer").post(
        f"/api/rankers/{api_data.builtin.pk}/versions/{champion.pk}/promote/", {}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"version": ["v1 is already the champion of Built-in."]}


def test_api_promote_version_of_another_ranker_is_404(api_data, caller):
    url = f"/api/rankers/{api_data.builtin.pk}/versions/{api_data.version.pk}/promote/"

    response = caller("trainer").post(url, {}, format="json")

    assert response.status_code == 404
    assert response.json() == {
        "detail": f"Ranker {api_data.builtin.pk} has no version {api_data.version.pk}."
    }


def test_api_training_detail_shows_the_version_it_made(api_data, caller):
    body = caller("trainer").get(f"/api/trainings/{api_data.training.pk}/").json()

    assert (body["status"], body["decision"], body["version"]["label"]) == ("succeeded", "kept", "v2")
