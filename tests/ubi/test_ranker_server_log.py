"""ranker_server's UBI log (issue 36 §1): each answer has a query_id and is stored as a UBI query; POST
/events takes one event, a JSON list or NDJSON, all or nothing; a restart loses nothing. Real server
processes, real PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

import pytest

from rankers.http import HttpBackend
from tests.http_client import HTTP
from tests.rankers.rankers_support import *  # noqa: F403 - the committed "served" collection
from tests.ubi.ubi_support import await_value, start_logging_server
from ubi.log import APP_TRAFFIC_HEADER
from ubi.models import UbiEvent, UbiQuery


@pytest.fixture(scope="module")
def spool(tmp_path_factory):
    return tmp_path_factory.mktemp("spool")


@pytest.fixture(scope="module")
def server(served, spool):
    process = start_logging_server(served.slug, served.log_dir, spool)
    yield process
    process.stop()


def _rows(django_db_blocker, model, **filters):
    def read():
        with django_db_blocker.unblock():
            return list(model.objects.filter(**filters).order_by("id"))

    return read


def _click(query_id: str, ordinal: int = 1, **fields) -> dict:
    return {
        "action_name": "click",
        "query_id": query_id,
        "timestamp": "2026-11-29T01:02:03.456+01:00",
        "client_id": "c-1",
        "session_id": "s-1",
        "event_attributes": {"position": {"ordinal": ordinal}, "object": {"object_id": "a1"}},
        **fields,
    }


def test_ranker_server_answer_has_a_query_id_and_is_logged_as_a_ubi_query(server, django_db_blocker):
    response = HTTP.post(
        server.url,
        json={
            "question": {"id": "q1", "text": "boundary layer flows"},
            "rows": 2,
            "client_id": "c-1",
            "user_id": "u-9",
        },
    )
    echoed = HTTP.post(
        server.url, json={"question": {"id": "q2", "text": "shock"}, "rows": 1, "query_id": "caller-qid-1"}
    )

    query_id = response.json()["query_id"]
    assert str(uuid.UUID(query_id)) == query_id
    assert echoed.json()["query_id"] == "caller-qid-1"
    (row,) = await_value(_rows(django_db_blocker, UbiQuery, query_id=query_id), bool, "the query row")
    assert (row.application, row.client_id, row.user_id, row.user_query) == (
        "served",
        "c-1",
        "",
        "boundary layer flows",
    )
    assert row.query_response_hit_ids == ["a1", "a4"]
    assert row.query_attributes == {"ranker": "BM25", "version": None, "question_id": "q1"}
    assert row.object_id_field == "id"
    (other,) = await_value(_rows(django_db_blocker, UbiQuery, query_id="caller-qid-1"), bool, "the caller's")
    assert other.query_response_hit_ids == ["a2"]


def test_ranker_server_bad_ubi_id_in_a_rank_request_is_400(server):
    response = HTTP.post(server.url, json={"question": {"id": "q1", "text": "x"}, "client_id": ["c"]})

    assert response.status_code == 400
    assert response.json() == {"error": '"client_id" must be a non-empty string'}


def test_events_one_list_and_ndjson_are_stored_with_orphans_counted(server, django_db_blocker):
    query_id = HTTP.post(server.url, json={"question": {"id": "q1", "text": "heat"}}).json()["query_id"]
    orphan = f"never-served-{uuid.uuid4()}"

    one = HTTP.post(server.url + "events", json=_click(query_id))
    listed = HTTP.post(server.url + "events", json=[_click(query_id, 2), _click(orphan, 3)])
    ndjson = "\n".join(json.dumps(_click(query_id, n)) for n in (4, 5)) + "\n"
    lines = HTTP.post(server.url + "events", content=ndjson, headers={"Content-Type": "application/x-ndjson"})

    assert [(r.status_code, r.json()) for r in (one, listed, lines)] == [
        (202, {"accepted": 1, "orphans": 0}),
        (202, {"accepted": 2, "orphans": 1}),
        (202, {"accepted": 2, "orphans": 0}),
    ]
    rows = await_value(
        _rows(django_db_blocker, UbiEvent, client_id="c-1", query_id__in=[query_id, orphan]),
        lambda rows: len(rows) == 5,
        "five events",
    )
    assert sorted((r.query_id == query_id, r.ordinal, r.object_id, r.session_id) for r in rows) == [
        (False, 3, "a1", "s-1"),
        (True, 1, "a1", "s-1"),
        (True, 2, "a1", "s-1"),
        (True, 4, "a1", "s-1"),
        (True, 5, "a1", "s-1"),
    ]
    assert {r.timestamp.isoformat() for r in rows} == {"2026-11-29T00:02:03.456000+00:00"}
    stats = HTTP.get(server.url + "ubi/stats").json()
    assert stats["orphan_events"] >= 1 and stats["database_error"] is None


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            json.dumps([_click("q"), {k: v for k, v in _click("q").items() if k != "action_name"}]),
            {"error": 'index 1: "action_name" is missing', "field": "action_name", "index": 1},
        ),
        (
            json.dumps(_click("q")) + "\n" + json.dumps(_click("q", timestamp="2026-11-29T01:02:03")),
            {
                "error": "line 2: \"timestamp\" has no UTC offset (add 'Z' or '+00:00'): '2026-11-29T01:02:03'",
                "field": "timestamp",
                "line": 2,
            },
        ),
        (
            json.dumps([_click("q", 0)]),
            {
                "error": 'index 0: "event_attributes.position.ordinal" must be a whole number, 1 or more',
                "field": "event_attributes.position.ordinal",
                "index": 0,
            },
        ),
        (
            json.dumps(_click("q", colour="red")),
            {
                "error": '"colour" is not a field of a UBI event (application, action_name, query_id, session_id, '
                "client_id, user_id, timestamp, message_type, message, event_attributes)",
                "field": "colour",
            },
        ),
    ],
)
def test_events_bad_event_is_400_naming_the_field_and_none_is_kept(server, django_db_blocker, body, error):
    marker = f"c-bad-{uuid.uuid4()}"
    body = body.replace('"c-1"', json.dumps(marker))

    response = HTTP.post(server.url + "events", content=body)
    # The events are stored in the order accepted: once a later one is stored, the refused ones would be.
    HTTP.post(server.url + "events", json=_click("q", client_id=marker + "-after"))
    await_value(_rows(django_db_blocker, UbiEvent, client_id=marker + "-after"), bool, "the later event")

    assert response.status_code == 400
    assert response.json() == error
    assert _rows(django_db_blocker, UbiEvent, client_id=marker)() == []


def _children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def test_ranker_server_app_own_call_is_answered_not_logged(server, django_db_blocker):
    """The app's http ranker marks its calls (evaluations, trainings, the queue's candidates): they are not
    production traffic. The production query sent after it is stored; the app's own never is."""
    own = HTTP.post(
        server.url,
        json={"question": {"id": "q1", "text": "app's own evaluation call"}, "rows": 2},
        headers={APP_TRAFFIC_HEADER: "app"},
    )
    after = HTTP.post(server.url, json={"question": {"id": "q1", "text": "a production query"}, "rows": 2})

    assert own.status_code == 200 and "query_id" not in own.json()
    assert [a["id"] for a in own.json()["answers"]] == [a["id"] for a in after.json()["answers"]]
    await_value(
        _rows(django_db_blocker, UbiQuery, query_id=after.json()["query_id"]), bool, "the production query"
    )
    assert _rows(django_db_blocker, UbiQuery, user_query="app's own evaluation call")() == []


def test_http_ranker_marks_its_calls_as_the_app_own():
    ranker = HttpBackend(config={"url": "http://127.0.0.1:9/"})

    assert ranker.client.headers[APP_TRAFFIC_HEADER] == "app"


def test_ranker_server_writer_killed_is_started_again(server, django_db_blocker):
    (writer,) = _children(server.process.pid)
    os.kill(writer, signal.SIGKILL)
    restarted = await_value(
        lambda: _children(server.process.pid), lambda c: c and c != [writer], "a new writer"
    )

    query_id = HTTP.post(server.url, json={"question": {"id": "q1", "text": "plate"}}).json()["query_id"]

    assert await_value(_rows(django_db_blocker, UbiQuery, query_id=query_id), bool, "the query row")
    assert restarted != [writer]


def test_ranker_server_killed_loses_no_accepted_event_and_the_next_one_replays_it(
    server, spool, served, django_db_blocker
):
    """The module's server, last: killed at once (SIGKILL: no drain at exit), what its writer had not
    stored yet is in its spool file, which the next server's writer replays."""
    marker = f"c-kill-{uuid.uuid4()}"
    try:
        for n in range(1, 51):
            question = {"question": {"id": f"q{n}", "text": "flow"}, "client_id": marker}
            assert HTTP.post(server.url, json=question).status_code == 200
        clicks = [_click("q", n, client_id=marker) for n in range(1, 51)]
        assert HTTP.post(server.url + "events", json=clicks).status_code == 202
    finally:
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
    second = start_logging_server(served.slug, served.log_dir, spool)
    try:
        events = await_value(
            _rows(django_db_blocker, UbiEvent, client_id=marker), lambda r: len(r) == 50, "50 events"
        )
        queries = await_value(
            _rows(django_db_blocker, UbiQuery, client_id=marker), lambda r: len(r) == 50, "50 queries"
        )
    finally:
        second.stop()

    assert sorted(e.ordinal for e in events) == list(range(1, 51))
    assert len({q.query_id for q in queries}) == 50
    assert list(spool.iterdir()) == []  # the second drained both files, and removed its own at its exit
