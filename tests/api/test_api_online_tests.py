"""Online tests over the API: start, read, stop; who may (anonymous, rater, trainer, another collection's
token); bad input is a 400 naming the field."""

from __future__ import annotations

import pytest

from rankers.online_tests import CANNOT_INTERLEAVE, online_test_start, online_test_stop
from tests.online_support import online_log, online_ranker
from tests.trainer.api_support import *  # noqa: F403 - caller, lifted throttle

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


@pytest.fixture
def versions(collection):
    return online_ranker(collection)


def _url(versions, stop: bool = False) -> str:
    ranker, _, challenger = versions
    return f"/api/rankers/{ranker.pk}/versions/{challenger.pk}/online-test/{'stop/' if stop else ''}"


@pytest.mark.parametrize(("who", "status"), zip(CALLERS, (401, 403, 201, 403, 201, 404), strict=True))
def test_api_online_test_start_authz(versions, caller, who, status):
    response = caller(who).post(_url(versions), {"share": 50}, format="json")

    assert response.status_code == status, response.content[:300]
    if status == 201:
        body = response.json()
        assert (body["state"], body["champion"], body["challenger"], body["share"]) == (
            "running",
            "v1",
            "v2",
            50,
        )


@pytest.mark.parametrize(("who", "status"), zip(CALLERS, (401, 403, 200, 403, 200, 404), strict=True))
def test_api_online_test_stop_authz(versions, caller, who, status):
    online_test_start(challenger=versions[2], started_by=None)

    response = caller(who).post(_url(versions, stop=True), {}, format="json")

    assert response.status_code == status, response.content[:300]
    if status == 200:
        assert response.json()["state"] == "stopped"


@pytest.mark.parametrize(("who", "status"), zip(CALLERS, (401, 200, 200, 200, 200, 404), strict=True))
def test_api_online_test_read_authz(versions, caller, who, status):
    online_test_start(challenger=versions[2], started_by=None)

    assert caller(who).get(_url(versions)).status_code == status


def test_api_online_test_read_gives_counts_delta_interval_and_verdict(versions, caller):
    test = online_test_start(challenger=versions[2], started_by=None, max_queries=1000)
    online_log(test, [1, 1, 1, -1, 0, None])

    body = caller("rater").get(_url(versions)).json()

    assert {k: body[k] for k in ("impressions", "queries_with_clicks", "wins", "losses", "ties")} == {
        "impressions": 6,
        "queries_with_clicks": 5,
        "wins": 3,
        "losses": 1,
        "ties": 1,
    }
    assert body["delta"] == 0.2  # (3 + ½) / 5 − ½
    assert body["ci_low"] < 0 < body["ci_high"] and body["verdict"] == "keep going"
    assert body["more_queries"] > 0 and body["stop_due"] == "" and body["max_queries"] == 1000


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"share": 101}, {"share": ["Ensure this value is less than or equal to 100."]}),
        ({"max_queries": 0}, {"max_queries": ["Ensure this value is greater than or equal to 1."]}),
        ({"serving": "engine"}, {"serving": [CANNOT_INTERLEAVE]}),
    ],
)
def test_api_online_test_start_bad_field_is_400_naming_it(versions, caller, body, expected):
    response = caller("trainer").post(_url(versions), body, format="json")

    assert (response.status_code, response.json()) == (400, expected)


def test_api_online_test_start_second_and_stop_twice_are_400(versions, caller):
    client = caller("trainer")
    client.post(_url(versions), {}, format="json")

    again = client.post(_url(versions), {}, format="json")
    client.post(_url(versions, stop=True), {}, format="json")
    stopped = client.post(_url(versions, stop=True), {}, format="json")

    assert (again.status_code, again.json()) == (
        400,
        {"challenger": ["Tiny already tests v2 against v1 online: stop that test first (one at a time)."]},
    )
    assert (stopped.status_code, stopped.json()) == (400, {"state": ["This online test is stopped already."]})


def test_api_online_test_of_a_version_without_one_is_404(versions, caller):
    response = caller("trainer").get(_url(versions))

    assert (response.status_code, response.json()) == (
        404,
        {"detail": f"Version {versions[2].pk} has no online test."},
    )


def _list_url(versions) -> str:
    ranker, _, challenger = versions
    return f"/api/rankers/{ranker.pk}/versions/{challenger.pk}/online-tests/"


@pytest.mark.parametrize(("who", "status"), zip(CALLERS, (401, 200, 200, 200, 200, 404), strict=True))
def test_api_online_tests_list_authz(versions, caller, who, status):
    online_test_start(challenger=versions[2], started_by=None)

    assert caller(who).get(_list_url(versions)).status_code == status


def test_api_online_tests_list_gives_every_test_latest_first_with_how_it_ended(versions, caller):
    first = online_test_start(challenger=versions[2], started_by=None)
    online_log(first, [1, -1, 0])
    online_test_stop(test=first, stopped_by=None, reason="Stopped by hand.")
    second = online_test_start(challenger=versions[2], started_by=None, share=20)

    body = caller("trainer").get(_list_url(versions)).json()

    assert [(t["id"], t["state"], t["share"], t["impressions"], t["stop_reason"]) for t in body] == [
        (second.pk, "running", 20, 0, ""),
        (first.pk, "stopped", 100, 3, "Stopped by hand."),
    ]
    assert (body[1]["wins"], body[1]["losses"], body[1]["ties"], body[1]["delta"]) == (1, 1, 1, 0.0)
    assert body[1]["stopped_at"] is not None and body[0]["stopped_at"] is None


def test_api_online_tests_list_of_a_version_without_tests_is_empty(versions, caller):
    assert caller("trainer").get(_list_url(versions)).json() == []
