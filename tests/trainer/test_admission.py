"""Bounded admission (config/admission.py, config/gunicorn_worker.py, gunicorn.conf.py): a request that
waited longer than WEB_MAX_QUEUE_MS for a thread is answered 503 + Retry-After at once and stores nothing.

The server test runs the real gunicorn with the repository's gunicorn.conf.py, one worker with one thread,
and saturates it without any fake: the test holds the PostgreSQL advisory lock of a rating's pair, so the
server's only thread blocks inside that save while a second save queues behind it.
"""

from __future__ import annotations

import re
import threading
import time

import httpx
import psycopg
import pytest
from django.db import connection
from django.test import Client

from config.admission import queued
from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Role, Split
from corpus.services import answers_upsert, collection_create, questions_upsert
from ratings.models import Label, Rating
from ratings.services.locks import _pair_key
from tests.conftest import _database_url_for_tests
from tests.http_client import HTTP
from tests.trainer.gunicorn_support import clean_env, gunicorn
from trainer.services import api_token_create

# The wait is said to a tenth of a second: the time from the stamp to the middleware adds a little.
BUSY = re.compile(
    r"The server is busy: this request waited (\d+\.\d) s for its turn and was not started, so nothing "
    r"was done\. Try again in 1 s\."
)


def said_wait(message: str) -> float:
    match = BUSY.fullmatch(message)
    assert match, message
    return float(match.group(1))


@pytest.fixture
def bounded(settings):
    settings.WEB_MAX_QUEUE_MS = 500


def test_admission_request_queued_past_bound_api_503_json_retry_after(bounded, rater):
    with queued(time.monotonic() - 0.8):
        response = Client().post("/api/collections/tiny/ratings/", {}, content_type="application/json")

    assert (response.status_code, response["Retry-After"]) == (503, "1")
    assert said_wait(response.json()["detail"]) >= 0.8


def test_admission_request_queued_past_bound_htmx_503_error_for_the_card(bounded, rater):
    client = Client()
    client.force_login(rater)
    with queued(time.monotonic() - 0.8):
        response = client.post("/c/tiny/rate/1/answers/1/", {"stars": 2}, headers={"HX-Request": "true"})

    assert (response.status_code, response["Retry-After"]) == (503, "1")
    body = response.json()
    assert body["field"] is None
    assert said_wait(body["error"]) >= 0.8


def test_admission_request_queued_past_bound_page_503_html(bounded, db):
    with queued(time.monotonic() - 2.0):
        response = Client().get("/login/")

    assert (response.status_code, response["Retry-After"]) == (503, "1")
    assert response["Content-Type"].startswith("text/html")
    assert said_wait(re.search(r"<p>(.*)</p>", response.content.decode()).group(1)) >= 2.0


@pytest.mark.parametrize("waited", [0.0, 0.4])
def test_admission_request_queued_within_bound_served(bounded, db, waited):
    with queued(time.monotonic() - waited):
        response = Client().get("/login/")

    assert response.status_code == 200


def test_admission_healthz_always_served(bounded, db):
    with queued(time.monotonic() - 5.0):
        response = Client().get("/healthz")

    assert response.status_code == 200


def test_admission_request_without_stamp_served(bounded, db):
    # runserver, gunicorn's sync worker: nothing says how long the request waited.
    assert Client().get("/login/").status_code == 200


def test_admission_bound_zero_serves_everything(settings, db):
    settings.WEB_MAX_QUEUE_MS = 0
    with queued(time.monotonic() - 60.0):
        response = Client().get("/login/")

    assert response.status_code == 200


# --- a real gunicorn ------------------------------------------------------------------------------


@pytest.fixture
def saturable(transactional_db, make_user, tmp_path):
    """gunicorn with the repository's config, one worker with one thread, a 100 ms bound; a rater's token
    and a question with two answers (committed: the server is another process)."""
    collection = collection_create(name="Busy", slug="busy")
    answers_upsert(collection=collection, records=[AnswerRecord(a, a, f"answer {a}") for a in ("a1", "a2")])
    questions_upsert(collection=collection, records=[QuestionRecord("q1", "question", Split.TRAIN)])
    rater = make_user("rae", collection=collection, role=Role.RATER)
    _, key = api_token_create(collection=collection, user=rater, role=Role.RATER)
    env = clean_env(
        DEBUG="0",
        SECRET_KEY="s" * 50,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        DATABASE_URL=_database_url_for_tests(),
        RANK_TRAINER_VAR_DIR=str(tmp_path),
        WEB_THREADS="1",
        WEB_MAX_QUEUE_MS="100",
    )
    with gunicorn(env, tmp_path / "gunicorn.log") as port:
        yield port, key, collection
    connection.close()


def _post_rating(port: int, key: str, answer: str, stars: int) -> httpx.Response:
    return HTTP.post(
        f"http://127.0.0.1:{port}/api/collections/busy/ratings/",
        json={"question_id": "q1", "answer_id": answer, "stars": stars},
        headers={"Authorization": f"Token {key}"},
        timeout=60,
    )


def _in_background(call) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()))
    thread.start()
    return thread, result


def _advisory_lock_waiters(conn: psycopg.Connection) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    ).fetchone()[0]


def test_admission_gunicorn_saturated_answers_503_retry_after_and_stores_nothing_of_it(saturable):
    port, key, collection = saturable
    q1 = collection.questions.get(external_id="q1")
    a1, a2 = (collection.answers.get(external_id=a) for a in ("a1", "a2"))
    dsn = _database_url_for_tests().replace("postgres://", "postgresql://")
    with psycopg.connect(dsn) as holder:
        # The test holds the pair's lock: the server's one thread blocks inside the save of (q1, a1).
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [_pair_key(q1.pk, a1.pk)])
        first, first_result = _in_background(lambda: _post_rating(port, key, "a1", 3))
        deadline = time.monotonic() + 30
        with psycopg.connect(dsn, autocommit=True) as observer:
            while _advisory_lock_waiters(observer) == 0:
                assert time.monotonic() < deadline, "the first save never reached the lock"
                time.sleep(0.05)
        second, second_result = _in_background(lambda: _post_rating(port, key, "a2", 1))
        time.sleep(0.6)  # the second save queues behind the blocked thread, past the 100 ms bound
        holder.rollback()  # releases the lock
    first.join(60)
    second.join(60)

    assert first_result[0].status_code == 201
    refused = second_result[0]
    assert (refused.status_code, refused.headers["Retry-After"]) == (503, "1")
    assert said_wait(refused.json()["detail"]) >= 0.1
    assert list(Rating.objects.values_list("answer__external_id", "stars")) == [("a1", 3)]
    assert list(Label.objects.values_list("answer__external_id", "gain", "rater_count")) == [("a1", 3, 1)]

    # Not saturated any more: the refused save, sent again, is stored once.
    again = _post_rating(port, key, "a2", 1)

    assert again.status_code == 201
    assert sorted(Rating.objects.values_list("answer__external_id", "stars")) == [("a1", 3), ("a2", 1)]
    assert sorted(Label.objects.values_list("answer__external_id", "gain", "rater_count")) == [
        ("a1", 3, 1),
        ("a2", 1, 1),
    ]


def test_admission_refusal_not_logged_as_an_error_each(bounded, db, caplog):
    # Under overload there are hundreds a second; they are counted in one warning every 10 s instead.
    with queued(time.monotonic() - 1.0), caplog.at_level("WARNING", logger="django.request"):
        response = Client().get("/login/")

    assert response.status_code == 503
    assert [r for r in caplog.records if r.name == "django.request"] == []
