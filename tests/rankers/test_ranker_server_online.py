"""ranker_server serves an online test (issue 36 §2): a test started while it runs is interleaved from its
next look, the same list for the same query_id, each hit's team and both versions logged; clicks posted
to it give the verdict's counts; a stopped test is no longer served. Real server process, real
PostgreSQL, real events."""

from __future__ import annotations

import pytest

from evaluation.online.verdict import KEEP_GOING
from evaluation.selectors.online import online_test_result
from rankers.backends import RankQuery
from rankers.builtin import BuiltinBackend
from rankers.interleaving import CHALLENGER, CHAMPION, team_draft_interleave
from rankers.models import OnlineTest, Ranker, RankerKind, RankerVersion
from rankers.online_tests import online_test_start, online_test_stop
from rankers.services import version_promote
from tests.http_client import HTTP
from tests.rankers.rankers_support import *  # noqa: F403 - the committed "served" collection
from tests.ubi.ubi_support import await_value, start_logging_server
from ubi.models import UbiEvent, UbiQuery

QUESTION = "boundary layer flow shock heat"


@pytest.fixture(scope="module")
def versions(served, django_db_blocker):
    """A builtin ranker of "served": champion plain BM25, and a challenger ranking BM25's candidates in
    reverse (a learned fusion weighting BM25 −1)."""
    with django_db_blocker.unblock():
        collection = Ranker._meta.get_field("collection").related_model.objects.get(slug="served")
        ranker = Ranker.objects.create(collection=collection, name="Online", kind=RankerKind.BUILTIN)
        champion = RankerVersion.objects.create(ranker=ranker, label="bm25", method="bm25")
        challenger = RankerVersion.objects.create(
            ranker=ranker,
            label="v2",
            method="learned-fusion",
            uses_model=True,
            details={"params": {"signals": ["bm25", "rm3"], "weights": [-1.0, 0.0]}},
        )
        ranker.champion = champion
        ranker.save(update_fields=["champion"])
    return ranker, champion, challenger


@pytest.fixture(scope="module")
def server(served, versions, tmp_path_factory):
    ranker, _, _ = versions
    process = start_logging_server(
        served.slug,
        served.log_dir,
        tmp_path_factory.mktemp("spool"),
        "--ranker",
        str(ranker.pk),
        ONLINE_TEST_POLL_MS="100",
    )
    yield process
    process.stop()


def _rank(server, query_id: str) -> dict:
    body = {"question": {"id": "q1", "text": QUESTION}, "rows": 4, "query_id": query_id}
    return HTTP.post(server.url, json=body).json()


def _click(query_id: str, object_id: str, ordinal: int) -> dict:
    return {
        "action_name": "click",
        "query_id": query_id,
        "timestamp": "2026-11-29T01:02:03Z",
        "client_id": "c-online",
        "event_attributes": {"position": {"ordinal": ordinal}, "object": {"object_id": object_id}},
    }


def test_ranker_server_interleaves_a_started_test_logs_teams_and_counts_clicks(
    server, versions, django_db_blocker
):
    ranker, champion, challenger = versions
    before = _rank(server, "before-the-test")
    with django_db_blocker.unblock():
        test = online_test_start(challenger=challenger, started_by=None)
        backend_champion = BuiltinBackend(collection=ranker.collection, version=champion)
        backend_challenger = BuiltinBackend(collection=ranker.collection, version=challenger)
    health = await_value(
        lambda: HTTP.get(server.url + "healthz").json().get("online_test"),
        bool,
        "the server's look at the started test",
    )
    query_ids = [f"online-{test.pk}-{n}" for n in range(5)]
    answers = [_rank(server, query_id) for query_id in query_ids]
    replay = _rank(server, query_ids[0])

    ranked = [b.rank(RankQuery("q1", QUESTION), 4).ids for b in (backend_champion, backend_challenger)]
    expected = [team_draft_interleave(*ranked, query_id=q, length=4, salt=str(test.pk)) for q in query_ids]
    assert health == {"id": test.pk, "champion": "bm25", "challenger": "v2", "share": 100}
    assert "online_test" not in before and ranked[0] == ranked[1][::-1] and len(ranked[0]) == 4
    assert [[a["id"] for a in answer["answers"]] for answer in answers] == [list(e.hits) for e in expected]
    assert [a["score"] for a in answers[0]["answers"]] == [4.0, 3.0, 2.0, 1.0]
    assert replay["answers"] == answers[0]["answers"] and {a["online_test"] for a in answers} == {test.pk}
    rows = await_value(
        lambda: _stored(django_db_blocker, UbiQuery, query_id__in=query_ids),
        lambda rows: len(rows) == 5,
        "the five interleaved queries",
    )
    by_id = {row.query_id: row for row in rows}
    assert by_id[query_ids[1]].query_attributes == {
        "ranker": "Online",
        "version": "bm25",
        "question_id": "q1",
        "online_test": test.pk,
        "champion": "bm25",
        "challenger": "v2",
        "teams": list(expected[1].teams),
    }

    # Clicks: queries 0 and 1 on a challenger's hit (0 twice: counted once), 2 on a champion's hit, 3 on
    # one of each (a tie), 4 none. By object id, or by ordinal when the object id is not served.
    def hit(n: int, team: int) -> tuple[str, int]:
        position = expected[n].teams.index(team)
        return expected[n].hits[position], position + 1

    events = [
        _click(query_ids[0], *hit(0, CHALLENGER)),
        _click(query_ids[0], *hit(0, CHALLENGER)),
        _click(query_ids[1], "not-served", hit(1, CHALLENGER)[1]),
        _click(query_ids[2], *hit(2, CHAMPION)),
        _click(query_ids[3], *hit(3, CHAMPION)),
        _click(query_ids[3], *hit(3, CHALLENGER)),
    ]
    posted = HTTP.post(server.url + "events", json=events)
    await_value(
        lambda: _stored(django_db_blocker, UbiEvent, query_id__in=query_ids),
        lambda rows: len(rows) == 6,
        "the six clicks",
    )
    with django_db_blocker.unblock():
        result = online_test_result(test=OnlineTest.objects.get(pk=test.pk))

    assert posted.status_code == 202
    counts = result.counts
    assert (counts.impressions, counts.queries_with_clicks, counts.wins, counts.losses, counts.ties) == (
        5,  # the replay of query 0 is the same query (one query_id, one row)
        4,
        2,
        1,
        1,
    )
    assert result.verdict.delta == pytest.approx((2 + 0.5) / 4 - 0.5)
    assert result.verdict.verdict == KEEP_GOING and result.stop_due == ""


def test_ranker_server_stops_interleaving_a_stopped_test(server, versions, django_db_blocker):
    ranker, champion, challenger = versions
    with django_db_blocker.unblock():
        test = OnlineTest.objects.filter(challenger=challenger, state="running").first() or online_test_start(
            challenger=challenger, started_by=None
        )
        await_value(lambda: "online_test" in _rank(server, "probe-running"), bool, "interleaving")
        online_test_stop(test=test, stopped_by=None)
        alone = BuiltinBackend(collection=ranker.collection, version=champion).rank(
            RankQuery("q1", QUESTION), 4
        )

    answer = await_value(
        lambda: _rank(server, "after-the-stop"), lambda a: "online_test" not in a, "the server's look"
    )

    assert [a["id"] for a in answer["answers"]] == alone.ids
    assert "online_test" not in HTTP.get(server.url + "healthz").json()


def test_ranker_server_follows_a_promoted_champion_with_no_failed_request(
    server, versions, django_db_blocker
):
    ranker, champion, challenger = versions
    statuses: list[int] = []

    def ask(query_id: str) -> dict:
        body = {"question": {"id": "q1", "text": QUESTION}, "rows": 4, "query_id": query_id}
        response = HTTP.post(server.url, json=body)
        statuses.append(response.status_code)
        return response.json()

    before = ask("follow-before")
    with django_db_blocker.unblock():
        version_promote(version=challenger, changed_by=None, reason="test")
        alone = BuiltinBackend(collection=ranker.collection, version=challenger).rank(
            RankQuery("q1", QUESTION), 4
        )
    try:
        after = await_value(
            lambda: ask(f"follow-{len(statuses)}"), lambda a: a["version"] == "v2", "the promoted champion"
        )
        health = HTTP.get(server.url + "healthz").json()
        row = await_value(
            lambda: _stored(django_db_blocker, UbiQuery, query_id=after["query_id"]), bool, "its UBI query"
        )[0]
        # An online test against the new champion is interleaved, as any test of the served champion.
        with django_db_blocker.unblock():
            test = online_test_start(challenger=RankerVersion.objects.get(pk=champion.pk), started_by=None)
        interleaved = await_value(lambda: ask("follow-test"), lambda a: "online_test" in a, "the new test")
    finally:
        with django_db_blocker.unblock():
            for running in OnlineTest.objects.filter(challenger=champion, state="running"):
                online_test_stop(test=running, stopped_by=None)
            version_promote(version=champion, changed_by=None, reason="test: back")

    assert before["version"] == "bm25" and set(statuses) == {200}
    assert [a["id"] for a in after["answers"]] == alone.ids
    assert health["version"] == "v2" and "champion_note" not in health
    assert row.query_attributes == {"ranker": "Online", "version": "v2", "question_id": "q1"}
    assert interleaved["online_test"] == test.pk and interleaved["version"] == "v2"


def _stored(django_db_blocker, model, **filters):
    with django_db_blocker.unblock():
        return list(model.objects.filter(**filters).order_by("id"))
