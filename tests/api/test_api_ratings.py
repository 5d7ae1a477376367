"""POST /api/collections/{slug}/ratings/: one rating or a list, all or nothing, the UI's validation."""

from __future__ import annotations

import psycopg.errors
import pytest
from django.db import OperationalError, connection

from ratings.models import Label, Rating, RatingSource
from ratings.services import rating_record, record
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db
URL = "/api/collections/tiny/ratings/"


def test_api_ratings_one_rating_updates_label(api_data, caller, trainer):
    response = caller("trainer_token").post(
        URL, {"question_id": "q1", "answer_id": "a1", "stars": 1}, format="json"
    )

    assert response.status_code == 201
    # rita gave 3, tom now 1: the median of two is their mean rounded down, 2.
    assert response.json() == {
        "recorded": 1,
        "ratings": [
            {"question_id": "q1", "answer_id": "a1", "stars": 1, "note": "", "label": 2, "rater_count": 2}
        ],
    }
    rating = Rating.objects.get(rater=trainer)
    assert (rating.stars, rating.source) == (1, RatingSource.API)


def test_api_ratings_list_records_all(api_data, caller):
    body = [
        {"question_id": "q2", "answer_id": "a1", "stars": 0},
        {"question_id": "q2", "answer_id": "a3", "stars": "3"},
    ]

    response = caller("trainer").post(URL, body, format="json")

    assert response.status_code == 201
    assert [(r["answer_id"], r["stars"], r["label"]) for r in response.json()["ratings"]] == [
        ("a1", 0, 0),
        ("a3", 3, 3),
    ]


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            [
                {"question_id": "q1", "answer_id": "a3", "stars": 2},
                {"question_id": "q1", "answer_id": "a2", "stars": 4},
            ],
            {"1": {"stars": ["Stars must be from 0 to 3, not 4."]}},
        ),
        (
            [{"question_id": "q1", "answer_id": "a3", "stars": "lots"}],
            {"0": {"stars": ["Stars must be a whole number from 0 to 3, not 'lots'."]}},
        ),
        (
            [{"question_id": "q1", "answer_id": "a3", "stars": True}],
            {"0": {"stars": ["Stars must be a whole number from 0 to 3."]}},
        ),
        (
            [
                {"question_id": "q1", "answer_id": "a3", "stars": 2},
                {"question_id": "q9", "answer_id": "zz", "stars": 2},
            ],
            {
                "1": {
                    "question_id": ["No question 'q9' in collection 'tiny'."],
                    "answer_id": ["No answer 'zz' in collection 'tiny'."],
                }
            },
        ),
        (
            [
                {"question_id": "q1", "answer_id": "a3", "stars": 2},
                {"question_id": "q1", "answer_id": "a3", "stars": 1},
            ],
            {"1": {"id": ["rating ('q1', 'a3') appears twice (also item 0)."]}},
        ),
        ({"question_id": "q1", "stars": 2}, {"0": {"answer_id": ["This field is required."]}}),
    ],
)
def test_api_ratings_invalid_list_records_nothing(api_data, caller, body, errors):
    before = (Rating.objects.count(), list(Label.objects.values_list("gain", flat=True).order_by("pk")))

    response = caller("rater").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (400, errors)
    assert (
        Rating.objects.count(),
        list(Label.objects.values_list("gain", flat=True).order_by("pk")),
    ) == before


def test_api_ratings_answer_of_another_collection_is_unknown(api_data, caller, other_collection):
    from corpus.formats.records import AnswerRecord
    from corpus.services import answers_upsert

    answers_upsert(collection=other_collection, records=[AnswerRecord("o1", "Other", "x")])

    response = caller("rater").post(URL, {"question_id": "q1", "answer_id": "o1", "stars": 2}, format="json")

    assert response.json() == {"0": {"answer_id": ["No answer 'o1' in collection 'tiny'."]}}


def test_api_ratings_deadlock_in_callers_transaction_503_retry_after(api_data, caller, monkeypatch):
    """Inside an outer transaction (this test's) nothing can be retried: the abort is a 503, not a 500."""

    def deadlocked(pairs):
        try:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        except psycopg.errors.Error as exc:
            raise OperationalError(str(exc)) from exc

    monkeypatch.setattr(record, "_lock_pairs", deadlocked)

    # A list (its pairs are locked first; a single rating is one statement without that step).
    body = [{"question_id": "q1", "answer_id": a, "stars": 1} for a in ("a1", "a2")]
    response = caller("trainer_token").post(URL, body, format="json")

    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json() == {
        "detail": "The request conflicted with others saving the same data; nothing was changed. Try again."
    }


@pytest.mark.parametrize("kind", ["rater", "rater_token"])
def test_api_ratings_test_question_label_hidden_from_raters(api_data, caller, kind, trainer):
    # q2 is a test question. tom gave (q2, a2) 0 stars; rita now gives 2: the label (1) is both's median.
    question, answer = (
        api_data.collection.questions.get(external_id="q2"),
        api_data.collection.answers.get(external_id="a2"),
    )
    rating_record(rater=trainer, question=question, answer=answer, stars=0)

    response = caller(kind).post(URL, {"question_id": "q2", "answer_id": "a2", "stars": 2}, format="json")

    assert response.status_code == 201
    assert response.json()["ratings"] == [
        {"question_id": "q2", "answer_id": "a2", "stars": 2, "note": "", "label": None, "rater_count": 2}
    ]
    assert Label.objects.get(question=question, answer=answer).gain == 1


def test_api_ratings_test_question_label_for_trainers(api_data, caller):
    response = caller("trainer_token").post(
        URL, {"question_id": "q2", "answer_id": "a2", "stars": 0}, format="json"
    )

    # rita gave 2, tom 0: the median of two is their mean rounded down, 1.
    assert response.json()["ratings"] == [
        {"question_id": "q2", "answer_id": "a2", "stars": 0, "note": "", "label": 1, "rater_count": 2}
    ]


def test_api_ratings_train_question_label_for_raters(api_data, caller):
    response = caller("rater_token").post(
        URL, {"question_id": "q1", "answer_id": "a1", "stars": 1}, format="json"
    )

    assert response.json()["ratings"] == [
        {"question_id": "q1", "answer_id": "a1", "stars": 1, "note": "", "label": 1, "rater_count": 1}
    ]


def test_api_ratings_note_set_kept_and_cleared(api_data, caller):
    client = caller("rater")
    url = "/api/collections/tiny/ratings/"

    with_note = client.post(
        url,
        {"question_id": "q1", "answer_id": "a3", "stars": 1, "note": " about a different aircraft "},
        format="json",
    )
    kept = client.post(url, {"question_id": "q1", "answer_id": "a3", "stars": 2}, format="json")
    cleared = client.post(
        url, {"question_id": "q1", "answer_id": "a3", "stars": 2, "note": ""}, format="json"
    )

    assert with_note.json()["ratings"][0]["note"] == "about a different aircraft"
    assert kept.json()["ratings"][0]["note"] == "about a different aircraft"
    assert cleared.json()["ratings"][0]["note"] == ""


def test_api_ratings_note_too_long_names_item_and_field_and_stores_nothing(api_data, caller):
    from ratings.models import Rating

    before = Rating.objects.count()
    response = caller("rater").post(
        "/api/collections/tiny/ratings/",
        [
            {"question_id": "q1", "answer_id": "a3", "stars": 1},
            {"question_id": "q2", "answer_id": "a3", "stars": 1, "note": "x" * 501},
        ],
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"1": {"note": ["Ensure this field has no more than 500 characters."]}}
    assert Rating.objects.count() == before


def test_api_ratings_one_rating_query_count(api_data, caller, django_assert_num_queries):
    client = caller("rater_token")
    client.post(URL, {"question_id": "q1", "answer_id": "a3", "stars": 1}, format="json")  # last_used_at set

    # The token (with its user, collection and the user's membership role there), the question and the
    # answer (one statement), then on PostgreSQL the service's one query string: pair lock, (prepared) rating upsert
    # with history, label recompute returning the label. The ORM path elsewhere (SQLite): savepoint,
    # rating read, update, history, label ratings read, judges read, label upsert, release. A service
    # posts one request per rating: keep it lean.
    with django_assert_num_queries(3 if connection.vendor == "postgresql" else 10):
        response = client.post(URL, {"question_id": "q1", "answer_id": "a3", "stars": 2}, format="json")

    assert response.status_code == 201
    assert response.json()["ratings"][0]["label"] == 2
