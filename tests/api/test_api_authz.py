"""Who may call what: every endpoint against anonymous, rater, trainer, their tokens, another collection's token."""

from __future__ import annotations

import pytest

from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


def request_for(endpoint: str, data):
    """(method, url, body) of each endpoint, with a valid body."""
    ranker, run, builtin = data.ranker.pk, data.run.pk, data.builtin.pk
    return {
        "collections.list": ("get", "/api/collections/", None),
        "collections.create": ("post", "/api/collections/", {"name": "New one"}),
        "collection.detail": ("get", "/api/collections/tiny/", None),
        "questions.list": ("get", "/api/collections/tiny/questions/", None),
        "questions.upsert": (
            "post",
            "/api/collections/tiny/questions/",
            [{"id": "q9", "text": "new question"}],
        ),
        "answers.list": ("get", "/api/collections/tiny/answers/", None),
        "answers.upsert": ("post", "/api/collections/tiny/answers/", [{"id": "a9", "title": "New"}]),
        "ratings.create": (
            "post",
            "/api/collections/tiny/ratings/",
            {"question_id": "q1", "answer_id": "a3", "stars": 1},
        ),
        "ground_truth.train": ("get", "/api/collections/tiny/ground-truth/", None),
        "ground_truth.test": ("get", "/api/collections/tiny/ground-truth/?split=test", None),
        "rankers.list": ("get", "/api/rankers/", None),
        "rankers.create": (
            "post",
            "/api/rankers/",
            {"collection": "tiny", "name": "Another", "kind": "builtin", "config": {}},
        ),
        "ranker.detail": ("get", f"/api/rankers/{ranker}/", None),
        "ranker.versions.announce": ("post", f"/api/rankers/{ranker}/versions/", {"label": "v2"}),
        "ranker.evaluations.list": ("get", f"/api/rankers/{ranker}/evaluations/", None),
        "ranker.evaluations.start": ("post", f"/api/rankers/{ranker}/evaluations/", {}),
        "evaluation.detail": ("get", f"/api/evaluations/{run}/", None),
        # Two questions are too few to train: trainers get the refusal (400), others never get that far.
        "ranker.train": ("post", f"/api/rankers/{builtin}/train/", {}),
        "ranker.versions.list": ("get", f"/api/rankers/{builtin}/versions/", None),
        "ranker.version.promote": (
            "post",
            f"/api/rankers/{builtin}/versions/{data.builtin_v2.pk}/promote/",
            {"reason": "better on the help desk"},
        ),
        "training.detail": ("get", f"/api/trainings/{data.training.pk}/", None),
        "clicks.implicit_judgments": ("get", "/api/collections/tiny/implicit-judgments/", None),
        "clicks.agreement": ("get", "/api/collections/tiny/clicks-agreement/", None),
        "clicks.production_questions": (
            "post",
            "/api/collections/tiny/production-questions/",
            {"queries": ["never asked here"]},
        ),
    }[endpoint]


# Expected status per caller, in CALLERS order. Another collection's token sees nothing of "tiny":
# lists are empty for it (200) and objects are 404; creating a ranker there names the field (400). A
# trainer token, of this collection or another, may create a collection; a rater token may not.
MATRIX = {
    "collections.list": (401, 200, 200, 200, 200, 200),
    "collections.create": (401, 403, 201, 403, 201, 201),
    "collection.detail": (401, 200, 200, 200, 200, 404),
    "questions.list": (401, 200, 200, 200, 200, 404),
    "questions.upsert": (401, 403, 200, 403, 200, 404),
    "answers.list": (401, 200, 200, 200, 200, 404),
    "answers.upsert": (401, 403, 200, 403, 200, 404),
    "ratings.create": (401, 201, 201, 201, 201, 404),
    "ground_truth.train": (401, 200, 200, 200, 200, 404),
    "ground_truth.test": (401, 403, 200, 403, 200, 404),
    "rankers.list": (401, 200, 200, 200, 200, 200),
    "rankers.create": (401, 403, 201, 403, 201, 400),
    "ranker.detail": (401, 200, 200, 200, 200, 404),
    "ranker.versions.announce": (401, 403, 202, 403, 202, 404),
    "ranker.evaluations.list": (401, 200, 200, 200, 200, 404),
    "ranker.evaluations.start": (401, 403, 202, 403, 202, 404),
    "evaluation.detail": (401, 200, 200, 200, 200, 404),
    "ranker.train": (401, 403, 400, 403, 400, 404),
    "ranker.versions.list": (401, 200, 200, 200, 200, 404),
    "ranker.version.promote": (401, 403, 200, 403, 200, 404),
    "training.detail": (401, 403, 200, 403, 200, 404),
    "clicks.implicit_judgments": (401, 403, 200, 403, 200, 404),
    "clicks.agreement": (401, 403, 200, 403, 200, 404),
    # "tiny" has no production log: trainers get the refusal naming `queries` (400).
    "clicks.production_questions": (401, 403, 400, 403, 400, 404),
}


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize("endpoint", sorted(MATRIX))
def test_api_authz_matrix(api_data, caller, endpoint, who):
    method, url, body = request_for(endpoint, api_data)
    client = caller(who)

    response = (
        getattr(client, method)(url, body, format="json")
        if body is not None
        else getattr(client, method)(url)
    )

    assert response.status_code == MATRIX[endpoint][CALLERS.index(who)], response.content[:300]
    if response.status_code == 401:
        assert response["WWW-Authenticate"] == "Token"
    if response.status_code in {401, 403, 404}:
        assert set(response.json()) == {"detail"}


def test_api_other_token_lists_nothing_of_the_collection(api_data, caller):
    client = caller("other_token")

    assert [c["slug"] for c in client.get("/api/collections/").json()["results"]] == ["other"]
    assert client.get("/api/rankers/").json()["results"] == []


def test_api_rater_is_told_why_forbidden(api_data, caller):
    response = caller("rater_token").post(
        "/api/collections/tiny/questions/", [{"id": "q", "text": "t"}], format="json"
    )

    assert response.json() == {
        "detail": "This needs the trainer role in collection 'tiny'; this token has the rater role."
    }


def test_api_trainer_token_of_user_demoted_to_rater_acts_as_rater(api_data, caller, trainer, collection):
    from corpus.services import membership_set

    client = caller("trainer_token")
    membership_set(collection=collection, user=trainer, role="rater")

    assert (
        client.post("/api/collections/tiny/questions/", [{"id": "q", "text": "t"}], format="json").status_code
        == 403
    )


def test_api_token_of_user_removed_from_collection_sees_nothing_there(api_data, caller, trainer, collection):
    from corpus.models import Membership

    client = caller("trainer_token")
    Membership.objects.filter(user=trainer, collection=collection).delete()

    response = client.post(
        "/api/collections/tiny/ratings/", {"question_id": "q1", "answer_id": "a1", "stars": 1}, format="json"
    )

    assert (response.status_code, response.json()) == (
        404,
        {"detail": "No collection 'tiny' here that you can see."},
    )
    assert client.get("/api/collections/").json()["results"] == []


def test_api_trainer_token_of_superuser_non_member_acts_as_trainer(api_data, collection, make_user):
    from rest_framework.test import APIClient

    from trainer.services import api_token_create

    admin = make_user("admin", is_superuser=True)
    _, key = api_token_create(collection=collection, user=admin, role="trainer")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.post(
        "/api/collections/tiny/ratings/", {"question_id": "q2", "answer_id": "a1", "stars": 1}, format="json"
    )

    # Trainer: the label of a test question is shown.
    assert (response.status_code, response.json()["ratings"][0]["label"]) == (201, 1)
