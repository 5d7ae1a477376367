"""GET /api/collections/{slug}/queue/: who may call it, what it returns, its limits."""

from __future__ import annotations

import pytest

from rankers.models import Ranker, RankerKind, RankerVersion
from raters.next_task.picking import next_task
from ratings.services import rating_record
from tests.evaluation.decide_scenario import two_versions
from tests.raters.conftest import table_refreshed
from tests.ratings.conftest import build_corpus, make_run
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
        "answered_by": "decide",
        "reason": None,
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


@pytest.fixture
def alike(collection):
    """The fresh demo's case: the champion v3 and the challenger v4 rank the test question q2 alike, so
    no rating decides between them; nobody has rated anything."""
    corpus = build_corpus(collection)
    ranker = Ranker.objects.create(
        collection=collection,
        name="service",
        kind=RankerKind.HTTP,
        config={"url": "http://127.0.0.1:9/"},
        is_default=True,
    )
    v3 = RankerVersion.objects.create(ranker=ranker, label="v3")
    v4 = RankerVersion.objects.create(ranker=ranker, label="v4")
    ranker.champion = v3
    ranker.save(update_fields=["champion"])
    for version in (v3, v4):
        run = make_run(ranker, {corpus.q["q2"]: (["d3", "d4", "d5"], None)})
        run.ranker_version = version
        run.save(update_fields=["ranker_version"])
    table_refreshed(collection)  # the evaluation's top k, as the table's job reads it
    return corpus


UNRATED_IN_TOP = (
    "Chosen because 3 answers in this test question's top 10 are not rated yet, so we cannot tell how well "
    "the ranker did on it (NDCG@10, the score of how well the ranker puts the best answers in its top 10)."
)


def test_api_queue_decide_finding_nothing_says_why_and_offers_the_rating_pages_queue(alike, caller, rater):
    response = caller("rater").get(URL, {"n": 2})

    assert response.status_code == 200
    assert response.json() == {
        "mode": "decide",
        "answered_by": "queue",
        "reason": "Version v4 and version v3 put the same answers in the same order for every test question, "
        "so no rating can change which is better.",
        "pairs": [
            {
                "question": {
                    "id": "q2",
                    "text": "What is the boundary layer heat transfer?",
                    "split": "test",
                },
                "answer": {
                    "id": "d3",
                    "title": "Heat transfer",
                    "body": "Heat transfer in a boundary layer.",
                },
                "reason": UNRATED_IN_TOP,
            },
            {
                "question": {
                    "id": "q2",
                    "text": "What is the boundary layer heat transfer?",
                    "split": "test",
                },
                "answer": {
                    "id": "d4",
                    "title": "Boundary layer",
                    "body": "Boundary layer transition on a flat plate.",
                },
                "reason": UNRATED_IN_TOP,
            },
        ],
    }
    # The question the rating page would open next, with the same reason.
    task = next_task(collection=alike.collection, rater=rater)
    assert (task.question_id, task.reason) == (alike.q["q2"].pk, UNRATED_IN_TOP)


def test_api_queue_without_a_ranker_says_so_and_offers_the_rating_pages_queue(collection, caller, rater):
    corpus = build_corpus(
        collection
    )  # term overlap gives the candidates: q1 [d1, d2], q2 [d3, d4], q3 [d5, d2]

    body = caller("rater").get(URL, {"n": 2}).json()

    assert (body["mode"], body["answered_by"], body["reason"]) == (
        "decide",
        "queue",
        "The collection has no default ranker, so there is no version whose score a rating decides.",
    )
    # The question the rating page opens next (its tie between equally rated questions is per rater), its
    # two candidates, with the page's reason.
    task = next_task(collection=collection, rater=rater)
    external = {q.pk: key for key, q in corpus.q.items()}
    candidates = {"q1": ["d1", "d2"], "q2": ["d3", "d4"], "q3": ["d5", "d2"]}[external[task.question_id]]
    assert [(p["question"]["id"], p["answer"]["id"], p["reason"]) for p in body["pairs"]] == [
        (external[task.question_id], answer, task.reason) for answer in candidates
    ]


def test_api_queue_nothing_anywhere_answers_null_with_both_reasons(collection, caller):
    # No questions at all: neither the mode nor the rating page's queue has anything.
    assert caller("rater").get(URL).json() == {
        "mode": "decide",
        "answered_by": None,
        "reason": "The collection has no default ranker, so there is no version whose score a rating "
        "decides. Nothing else is waiting for you in the rating page's queue either.",
        "pairs": [],
    }


def test_api_queue_mode_that_answers_has_no_reason(scenario, caller):
    body = caller("rater").get(URL, {"mode": "unsure", "n": 1}).json()

    assert (body["answered_by"], body["reason"], len(body["pairs"])) == ("unsure", None, 1)
