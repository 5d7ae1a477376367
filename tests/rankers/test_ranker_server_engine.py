"""`manage.py ranker_server` serving an engine ranker's trained champion, in a real subprocess, against the
real OpenSearch node (tests/rankers/real_engines.py) holding the Cranfield demo: POST / (engine called,
its top 50 reranked), POST /rank (the caller's candidates reranked), the budget's fallback, errors.

The version served is the one trained once for the session (tests/rankers/trained_engine.py; committed, so
the server processes read it); the expected answers come from the same version ranking in this process
(``get_backend``), with its question vectors computed one question at a time as the server computes them."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from corpus.models import Collection, Question, Role, Split
from evaluation.selectors.online import online_test_result
from rankers.backends import get_backend, service_backend
from rankers.base import Ranking, RankQuery
from rankers.builtin import clear_ranker_caches
from rankers.interleaving import CHALLENGER, team_draft_interleave
from rankers.models import OnlineTest, Ranker, RankerVersion
from rankers.online_tests import online_test_start, online_test_stop
from rankers.reranking import RerankingBackend
from rankers.semantic import forget_vectors
from rankers.services import ranker_create, version_promote
from rankers.serving.service import ENCODING_ELSEWHERE, Faults, reranking_service
from tests.http_client import HTTP
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (served)
from tests.rankers.trained_engine import TRAINED_SLUG
from tests.servers import RankerServer, start_ranker_server
from tests.ubi.ubi_support import await_value
from ubi.models import UbiEvent, UbiQuery

# The data is committed by the module's fixture (the servers are other processes); the mark makes the
# session create the test database and lets the tests read it.
pytestmark = pytest.mark.django_db

SLUG = TRAINED_SLUG
DEAD_URL = "http://127.0.0.1:1/cranfield/_search"


@dataclass
class Trained:
    collection_id: int
    ranker_id: int
    gone_id: int  # the same version's reranker, its engine at a port nothing listens on
    label: str
    signals: tuple[str, ...]
    model_dir: Path
    log_dir: Path

    def start(self, *args: str, ranker: int | None = None) -> RankerServer:
        ranker_id = self.ranker_id if ranker is None else ranker
        return start_ranker_server(
            SLUG, self.log_dir, "--ranker", str(ranker_id), *args, model_dir=self.model_dir
        )


@pytest.fixture(scope="module")
def trained_on(opensearch_trained):
    """The copy of the answers on the shared node the session's training exported into."""
    return opensearch_trained.node


@pytest.fixture(scope="module")
def trained(opensearch_trained, django_db_blocker, tmp_path_factory):
    """The Cranfield demo (committed) with an OpenSearch ranker whose trained v2 is the champion: the session's
    trained v2 (tests/rankers/trained_engine.py) under a ranker of this module's, which promotes it (the
    session's ranker keeps the engine as its champion for the other tests)."""
    shared = opensearch_trained
    before = settings.MODEL_DIR
    settings.MODEL_DIR = shared.model_dir
    clear_ranker_caches()
    with django_db_blocker.unblock():
        version = RankerVersion.objects.get(pk=shared.version_id)
        if version.method == "engine":
            pytest.fail(f"training kept the engine's order ({version.details.get('reason')})")
        demo = Collection.objects.get(pk=shared.collection_id)
        ranker = ranker_create(
            collection=demo,
            name="OpenSearch",
            kind="engine",
            config={"preset": "opensearch", "url": shared.node.search_url, "retries": 0},
        )
        gone = ranker_create(
            collection=demo,
            name="Gone",
            kind="engine",
            config={"preset": "opensearch", "url": DEAD_URL, "retries": 0},
        )
        # The engine as it is (v1) under the module's ranker too: the online test's challenger.
        engine_as_is = RankerVersion.objects.get(ranker_id=shared.ranker_id, label="v1")
        RankerVersion.objects.create(
            ranker=ranker,
            label=engine_as_is.label,
            method=engine_as_is.method,
            details=engine_as_is.details,
            model_file=engine_as_is.model_file,
            uses_model=engine_as_is.uses_model,
        )
        served, copy = (
            RankerVersion.objects.create(
                ranker=owner,
                label=version.label,
                method=version.method,
                details=version.details,
                model_file=version.model_file,
                uses_model=version.uses_model,
            )
            for owner in (ranker, gone)
        )
        with transaction.atomic():
            version_promote(version=served, changed_by=None, reason="served by the tests")
            version_promote(version=copy, changed_by=None, reason="served by the tests")
    try:
        yield Trained(
            collection_id=demo.pk,
            ranker_id=ranker.pk,
            gone_id=gone.pk,
            label=version.label,
            signals=tuple(version.details["params"].get("signals", ())),
            model_dir=shared.model_dir,
            log_dir=tmp_path_factory.mktemp("logs"),
        )
    finally:
        with django_db_blocker.unblock():
            Ranker.objects.filter(pk__in=[ranker.pk, gone.pk]).delete()
        settings.MODEL_DIR = before
        clear_ranker_caches()


@pytest.fixture(scope="module")
def server(trained):
    # A generous budget: these tests compare the reranked answers, on a machine other tests load too.
    process = trained.start("--budget-ms", "5000")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def questions(trained, django_db_blocker) -> list[RankQuery]:
    with django_db_blocker.unblock():
        rows = Question.objects.filter(collection_id=trained.collection_id, split=Split.TEST).order_by("pk")
        return [RankQuery(q.external_id, q.text) for q in rows[:5]]


@pytest.fixture
def backends(trained, django_db_blocker):
    """The champion as this process ranks with it, and the engine as it is; question vectors computed
    afresh, one question at a time, as the server computes them."""
    forget_vectors()
    with django_db_blocker.unblock():
        ranker = Ranker.objects.get(pk=trained.ranker_id)
        reranking = get_backend(ranker)
        engine = service_backend(ranker)
    assert isinstance(reranking, RerankingBackend)
    return reranking, engine


def _answers(response: httpx.Response) -> list[tuple[str, float]]:
    return [(a["id"], a["score"]) for a in response.json()["answers"]]


def _body(query: RankQuery, **extra) -> dict:
    return {"question": {"id": query.external_id, "text": query.text}, **extra}


def test_health_says_what_is_served(server, trained, trained_on):
    assert HTTP.get(server.url + "healthz").json() == {
        "status": "ok",
        "collection": SLUG,
        "answers": 1400,
        "ranker": "OpenSearch",
        "version": trained.label,
        "uses_model": True,
        "kind": "engine",
        "first_stage": trained_on.search_url,
        "reranks": True,
        "candidates": 50,
        "budget_ms": 5000,
        "fallback": None,
    }


def test_post_answers_the_champion_reranking_the_engine_top_50(server, trained, questions, backends):
    reranking, engine = backends
    moved = 0
    for query in questions:
        expected = reranking.rank(query, 10)

        response = HTTP.post(server.url, json=_body(query, rows=10), timeout=30)

        assert response.status_code == 200, response.text
        assert _answers(response) == expected.answers
        assert response.json()["reranked"] is True
        assert response.json()["version"] == trained.label
        assert "fallback" not in response.json()
        assert response.headers["Server-Timing"].startswith("engine;dur=")
        moved += expected.ids != engine.rank(query, 10).ids
    assert moved >= 3  # the reranker changes most top 10s


def test_rank_call_reranks_the_callers_candidates_as_the_engine_own(server, questions, backends):
    reranking, engine = backends
    for query in questions:
        top50 = engine.rank(query, 50)
        candidates = [{"id": answer_id, "score": score} for answer_id, score in top50.answers]

        response = HTTP.post(
            server.url + "rank", json=_body(query, candidates=candidates, rows=10), timeout=30
        )

        assert response.status_code == 200, response.text
        assert _answers(response) == reranking.rerank(query, Ranking(answers=top50.answers), 10).answers
        assert _answers(response) == _answers(HTTP.post(server.url, json=_body(query, rows=10), timeout=30))
        assert (response.json()["reranked"], "warning" in response.json()) == (True, False)


def test_rank_call_without_scores_scores_the_candidates_n_to_1(server, trained, questions, backends):
    reranking, engine = backends
    query = questions[0]
    ids = engine.rank(query, 50).ids

    response = HTTP.post(
        server.url + "rank", json=_body(query, candidates=[{"id": i} for i in ids], rows=5), timeout=30
    )

    synthetic = Ranking(answers=[(answer_id, float(50 - i)) for i, answer_id in enumerate(ids)])
    assert response.status_code == 200, response.text
    assert _answers(response) == reranking.rerank(query, synthetic, 5).answers
    assert response.json()["reranked"] is True
    if "engine" in trained.signals:
        assert response.json()["warning"] == (
            "the candidates have no scores: the version's engine signal was given 50, 49, ..., 1 in their "
            "order, not the engine's scores it learned from"
        )
    else:
        assert "warning" not in response.json()


def test_rank_call_keeps_unknown_ids_after_the_reranked_ones(server, questions, backends):
    reranking, engine = backends
    query = questions[1]
    top = engine.rank(query, 10).answers
    candidates = [("not-an-answer", 99.0), *top]

    response = HTTP.post(
        server.url + "rank",
        json=_body(query, candidates=[{"id": a, "score": s} for a, s in candidates], rows=11),
        timeout=30,
    )

    expected = reranking.rerank(query, Ranking(answers=candidates), 11).answers
    assert _answers(response) == expected
    assert expected[-1][0] == "not-an-answer"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"[1]", 'body must be a JSON object with "question", "candidates" and "rows"'),
        ({"question": {"id": "q", "text": "x"}}, '"candidates" is missing: a list of {"id", "score"} objects, best first'),
        ({"question": {"id": "q", "text": "x"}, "candidates": {}}, '"candidates" must be a list of {"id", "score"} objects, best first'),
        ({"question": {"id": "q"}, "candidates": []}, '"question.text" must be a string'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [], "rows": 0}, '"rows" must be a whole number from 1 to 1000'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [], "top": 3}, '"top" is not a field of a rank request (question, candidates, rows, query_id, client_id, user_id)'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1"}, "2"]}, '"candidates[1]" must be an object with "id" and optionally "score"'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1"}, {"id": ""}]}, '"candidates[1].id" must be a non-empty string or a whole number'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1"}, {"id": True}]}, '"candidates[1].id" must be a non-empty string or a whole number'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "x" * 201}]}, '"candidates[0].id" is longer than 200 characters'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1"}, {"id": 2}, {"id": "3"}, {"id": 1}]}, "\"candidates[3].id\" repeats \"candidates[0].id\" ('1')"),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1", "score": "high"}]}, '"candidates[0].score" must be a finite number'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1", "score": None}]}, '"candidates[0].score" must be a finite number'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1", "score": 2}, {"id": "2"}]}, '"candidates[1].score" is missing: give a score to every candidate or to none'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1"}, {"id": "2", "score": 1}]}, '"candidates[0].score" is missing: give a score to every candidate or to none'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": "1", "rank": 1}]}, '"candidates[0].rank" is not a field of a candidate (id, score)'),
        ({"question": {"id": "q", "text": "x"}, "candidates": [{"id": str(i)} for i in range(1001)]}, '"candidates" has 1001 items; at most 1000'),
    ],
)  # fmt: skip
def test_rank_call_bad_request_is_400_naming_the_field(server, body, error):
    if isinstance(body, bytes):
        response = HTTP.post(server.url + "rank", content=body, headers={"Content-Type": "application/json"})
    else:
        response = HTTP.post(server.url + "rank", json=body)

    assert response.status_code == 400
    assert response.json() == {"error": error}


def test_rank_call_body_over_1_mb_is_413(server):
    response = HTTP.post(server.url + "rank", content=b" " * 1_000_001)

    assert (response.status_code, response.json()) == (413, {"error": "request body too large"})


def test_slow_rerank_answers_the_engine_order_within_the_budget(trained, questions, backends):
    reranking, engine = backends
    # A question whose reranked top 10 differs from the engine's, so the fallback shows.
    query = next(q for q in questions if engine.rank(q, 10).ids != reranking.rank(q, 10).ids)
    top50 = engine.rank(query, 50)
    # The ranker's own budget (its config has none: 50 ms); each rerank step sleeps 2 s.
    process = trained.start("--rerank-delay-ms", "2000")
    try:
        started = time.monotonic()
        searched = HTTP.post(process.url, json=_body(query, rows=10), timeout=30)
        searched_seconds = time.monotonic() - started
        candidates = [{"id": a, "score": s} for a, s in top50.answers]
        ranked = HTTP.post(
            process.url + "rank", json=_body(query, candidates=candidates, rows=10), timeout=30
        )
    finally:
        process.stop()

    for response in (searched, ranked):
        assert response.status_code == 200
        body = response.json()
        assert uuid.UUID(body.pop("query_id"))  # each answer is logged under its own (docs/ubi.md)
        assert body == {
            "answers": [{"id": a, "score": s} for a, s in top50.answers[:10]],
            "reranked": False,
            "version": trained.label,
            "fallback": "reranker took longer than 50 ms",
        }
    assert searched_seconds < 1.5  # the answer did not wait for the 2 s rerank


def test_failing_rerank_answers_the_engine_order_saying_why(trained, questions, backends):
    _, engine = backends
    query = questions[3]
    process = trained.start("--rerank-fail")
    try:
        response = HTTP.post(process.url, json=_body(query, rows=5), timeout=30)
    finally:
        process.stop()

    assert response.status_code == 200
    body = response.json()
    assert uuid.UUID(body.pop("query_id"))
    assert body == {
        "answers": [{"id": a, "score": s} for a, s in engine.rank(query, 50).answers[:5]],
        "reranked": False,
        "version": trained.label,
        "fallback": "reranker failed: injected failure (--rerank-fail)",
    }


def test_engine_down_is_502_json_and_the_rank_call_still_reranks(trained, questions, backends):
    reranking, engine = backends
    query = questions[4]
    top50 = engine.rank(query, 50)
    process = trained.start("--budget-ms", "5000", ranker=trained.gone_id)
    try:
        searched = HTTP.post(process.url, json=_body(query, rows=10), timeout=30)
        candidates = [{"id": a, "score": s} for a, s in top50.answers]
        ranked = HTTP.post(
            process.url + "rank", json=_body(query, candidates=candidates, rows=10), timeout=30
        )
    finally:
        process.stop()

    assert searched.status_code == 502
    assert searched.headers["Content-Type"] == "application/json"
    error = searched.json()["error"]
    assert error.startswith(f"engine at {DEAD_URL} cannot be reached: ")
    assert error.endswith(" (1 attempt)")
    assert ranked.status_code == 200
    assert _answers(ranked) == reranking.rerank(query, Ranking(answers=top50.answers), 10).answers
    assert ranked.json()["reranked"] is True


def test_builtin_server_has_no_rank_call(served):
    process = served.start()
    try:
        response = HTTP.post(
            process.url + "rank", json={"question": {"id": "q", "text": "x"}, "candidates": []}
        )
    finally:
        process.stop()

    assert response.status_code == 404
    assert response.json() == {
        "error": "POST /rank (candidates from the caller) is served for engine and http rankers; "
        "this server ranks with the builtin ranker: POST /"
    }


def test_answers_met_first_while_another_rerank_encodes_get_the_engine_order_at_once(
    trained, questions, backends, settings, tmp_path, django_db_blocker
):
    """Issue 35 §4: one rerank at a time encodes answers met for the first time; another one that meets
    such answers meanwhile answers the engine's order at once, saying why, and encodes nothing."""
    _, engine = backends
    query = questions[1]
    top50 = engine.rank(query, 50)
    settings.EMBEDDINGS_DIR = tmp_path  # no answer's vector is known here
    forget_vectors()
    with django_db_blocker.unblock():
        ranker = Ranker.objects.get(pk=trained.ranker_id)
        service, _ = reranking_service(
            ranker, None, Faults(latency_ms=0, fail_first=0, garbage=False, unknown_ids=0), budget_ms=5000
        )
    try:
        with service.encoding:  # another rerank is encoding
            answered = service.rerank(query, top50, 10)
    finally:
        service.pool.shutdown()
        service.prepare_pool.shutdown()
        forget_vectors()

    assert (answered.ranking.answers, answered.reranked) == (top50.answers[:10], False)
    assert answered.fallback == ENCODING_ELSEWHERE
    assert not (tmp_path / "returned").exists()


@pytest.fixture(scope="module")
def online_v1(trained, django_db_blocker):
    """An online test of v1, the engine as it is, against the trained champion: committed (module scope
    sets up outside the test's transaction) for the server to read, stopped at the module's end."""
    with django_db_blocker.unblock():
        v1 = RankerVersion.objects.get(ranker_id=trained.ranker_id, label="v1")
        test = online_test_start(challenger=v1, started_by=None)
    yield test
    with django_db_blocker.unblock():
        online_test_stop(test=test, stopped_by=None)


def test_online_test_interleaves_the_reranked_champion_with_the_engine_as_it_is(
    server, questions, backends, online_v1
):
    """Last in the module: the server (its watch looking every 5 s) interleaves the started test for the
    caller's candidates."""

    reranking, engine = backends
    query = questions[2]
    top50 = engine.rank(query, 50)
    await_value(lambda: HTTP.get(server.url + "healthz").json().get("online_test"), bool, "the watch's look")
    body = _body(
        query, candidates=[{"id": a, "score": s} for a, s in top50.answers], rows=10, query_id="ot-e1"
    )

    response = HTTP.post(server.url + "rank", json=body, timeout=30)

    champion = reranking.rerank(query, Ranking(answers=top50.answers), 10).ids
    expected = team_draft_interleave(
        champion, top50.ids[:10], query_id="ot-e1", length=10, salt=str(online_v1.pk)
    )
    assert champion != top50.ids[:10]
    assert [a["id"] for a in response.json()["answers"]] == list(expected.hits)
    assert (response.json()["online_test"], response.json()["query_id"]) == (online_v1.pk, "ot-e1")


def test_online_test_end_to_end_clicks_give_the_verdict_on_the_page_and_the_log_round_trips(
    server, trained, questions, online_v1, client, make_user, django_db_blocker, tmp_path
):
    """Issue 36 §4 on the real node: POST / answers interleaved lists (the engine's top 50 reranked by the
    champion against the engine as it is), UBI clicks posted over HTTP on the challenger's first hit of
    each, the version page shows the figures and verdict the selector computes, and the log exported
    with ubi_export, imported by ubi_import into an empty log and exported again is the same."""
    await_value(lambda: HTTP.get(server.url + "healthz").json().get("online_test"), bool, "the watch's look")
    query_ids = [f"e2e-{online_v1.pk}-{n}" for n in range(4)]
    served = [
        HTTP.post(server.url, json=_body(q, rows=10, query_id=query_id), timeout=30).json()
        for q, query_id in zip(questions, query_ids, strict=False)
    ]
    logged = await_value(
        lambda: _rows(django_db_blocker, UbiQuery, query_ids),
        lambda rows: len(rows) == 4,
        "the four interleaved queries",
    )
    teams = {row.query_id: row.query_attributes["teams"] for row in logged}
    clicks = []
    for query_id, answer in zip(query_ids, served, strict=True):
        position = teams[query_id].index(CHALLENGER)
        clicks.append(
            {
                "action_name": "click",
                "query_id": query_id,
                "timestamp": "2026-11-29T04:00:00Z",
                "client_id": "c-e2e",
                "session_id": "s-e2e",
                "event_attributes": {
                    "position": {"ordinal": position + 1},
                    "object": {"object_id": answer["answers"][position]["id"]},
                },
            }
        )
    posted = HTTP.post(server.url + "events", content="".join(json.dumps(e) + "\n" for e in clicks))
    await_value(
        lambda: _rows(django_db_blocker, UbiEvent, query_ids), lambda rows: len(rows) == 4, "4 clicks"
    )
    result = online_test_result(test=OnlineTest.objects.get(pk=online_v1.pk))
    collection = Collection.objects.get(pk=trained.collection_id)
    client.force_login(make_user("tess", collection=collection, role=Role.TRAINER))
    page = client.get(reverse("ranker-version", args=[SLUG, trained.ranker_id, online_v1.challenger_id]))
    html = page.content.decode()

    assert posted.status_code == 202
    assert {a["online_test"] for a in served} == {online_v1.pk}
    assert [[a["id"] for a in answer["answers"]] for answer in served] == [
        row.query_response_hit_ids for row in logged
    ]
    counts = result.counts
    assert (counts.queries_with_clicks, counts.wins, counts.losses, counts.ties) == (4, 4, 0, 0)
    assert result.verdict.delta == 0.5
    assert page.status_code == 200
    assert f'data-testid="online-impressions">{counts.impressions}<' in html
    assert 'data-testid="online-wlt">4 / 0 / 0<' in html
    verdict = html.split('data-testid="online-verdict">')[1].split("</p>")[0]
    assert verdict.startswith(result.sentence[0].upper() + result.sentence[1:] + ":")
    assert "online Δ +0.500" in verdict

    # The log as exported, imported into an empty log (this test's transaction, rolled back after), and
    # exported again: the same records, this test's queries with their teams among them.
    first = {"queries": str(tmp_path / "q1.ndjson"), "events": str(tmp_path / "e1.ndjson")}
    second = {"queries": str(tmp_path / "q2.ndjson"), "events": str(tmp_path / "e2.ndjson")}
    call_command("ubi_export", **first)
    UbiQuery.objects.all().delete()
    UbiEvent.objects.all().delete()
    call_command("ubi_import", **first)
    call_command("ubi_export", **second)
    exported = {k: _ndjson(Path(path)) for k, path in first.items()}
    again = {k: _ndjson(Path(path)) for k, path in second.items()}

    assert again == exported
    mine = {r["query_id"]: r for r in exported["queries"] if r["query_id"] in query_ids}
    assert {q: r["query_attributes"]["teams"] for q, r in mine.items()} == teams
    assert sorted(e["query_id"] for e in exported["events"] if e["query_id"] in query_ids) == sorted(
        query_ids
    )


def _rows(django_db_blocker, model, query_ids):
    with django_db_blocker.unblock():
        return sorted(model.objects.filter(query_id__in=query_ids), key=lambda r: query_ids.index(r.query_id))


def _ndjson(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
