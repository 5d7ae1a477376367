"""GET /api/collections/{slug}/queue/: who may call it, what it returns, its limits."""

from __future__ import annotations

import pytest

from ratings.services import rating_record
from tests.evaluation.decide_scenario import two_versions
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]
URL = "/api/collections/tiny/queue/"


@pytest.fixture
def scenario(collection, make_user):
    """See tests.evaluation.decide_scenario: d6 decides the comparison, then d5."""
    return two_versions(collection, make_user).corpus


@pytest.mark.parametrize(("who", "expected"), list(zip(CALLERS, (401, 200, 200, 200, 200, 404), strict=True)))
def test_api_queue_authz(scenario, caller, who, expected):
    response = caller(who).get(URL)

    assert response.status_code == expected, response.content[:300]
    if expected != 200:
        assert set(response.json()) == {"detail"}


def test_api_queue_decide_returns_the_deciding_pair_first(scenario, caller):
    response = caller("rater_token").get(URL, {"mode": "decide", "n": 1})

    assert response.status_code == 200
    assert response.json() == {
        "mode": "decide",
        "pairs": [
            {
                "question": {
                    "id": "q2",
                    "text": "What is the boundary layer heat transfer?",
                    "split": "test",
                },
                "answer": {"id": "d6", "title": "Unrelated", "body": "Cooking pasta in salted water."},
                "reason": "Chosen because this answer decides whether version v4 is better than version v3: "
                "its rating settles that comparison faster than any others.",
            }
        ],
    }


def test_api_queue_never_returns_a_pair_the_caller_rated(scenario, caller):
    client = caller("rater")
    saved = client.post(
        "/api/collections/tiny/ratings/", {"question_id": "q2", "answer_id": "d6", "stars": 0}, format="json"
    )
    assert saved.status_code == 201

    pairs = client.get(URL).json()["pairs"]

    assert [p["answer"]["id"] for p in pairs] == ["d5"]


def test_api_queue_other_raters_still_get_a_pair_someone_else_rated(scenario, caller, trainer):
    rating_record(rater=trainer, question=scenario.q["q2"], answer=scenario.a["d5"], stars=1)

    # The trainer rated d5 and it is labelled now; the rater is offered d6 only (d5 no longer decides).
    assert [p["answer"]["id"] for p in caller("rater").get(URL).json()["pairs"]] == ["d6"]


def test_api_queue_unsure_mode_keeps_to_training_questions(scenario, caller):
    pairs = caller("rater").get(URL, {"mode": "unsure", "n": 50}).json()["pairs"]

    assert pairs and {p["question"]["split"] for p in pairs} == {"train"}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"n": "0"}, "n"),
        ({"n": "51"}, "n"),
        ({"n": "ten"}, "n"),
        ({"mode": "fastest"}, "mode"),
        ({"champion": "v3"}, "champion"),
        ({"challenger": "-1"}, "challenger"),
    ],
)
def test_api_queue_bad_parameter_names_the_field(scenario, caller, query, field):
    response = caller("rater").get(URL, query)

    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_api_queue_n_50_is_allowed(scenario, caller):
    assert caller("rater").get(URL, {"n": "50"}).status_code == 200


def test_api_queue_other_collection_is_404_for_its_trainer_session(scenario, outsider):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(outsider)

    assert client.get(URL).status_code == 404
