"""The judges API: CRUD with a write-only key, trust, runs, agreement; who may call what."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from judges.models import Judge, Judging, JudgingStatus
from judges.services import judge_create, judging_run
from ratings.models import Label


@pytest.fixture
def api(judged):
    client = APIClient()
    client.force_authenticate(judged.trainer)
    return client


def test_create_judge_never_returns_the_key(api, judged, judge_server):
    response = api.post(
        "/api/collections/judged/judges/",
        {
            "name": "Ref",
            "kind": "openai-chat",
            "base_url": judge_server.url,
            "model": "m",
            "api_key": "sk-top-secret",
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["has_api_key"] is True
    assert "sk-top-secret" not in response.content.decode()
    assert Judge.objects.get(pk=response.json()["id"]).api_key == "sk-top-secret"
    listed = api.get("/api/collections/judged/judges/")
    detail = api.get(f"/api/judges/{response.json()['id']}/")
    assert "sk-top-secret" not in listed.content.decode() + detail.content.decode()


def test_create_judge_bad_template_names_the_field(api, judged):
    response = api.post(
        "/api/collections/judged/judges/", {"name": "Bad", "prompt_template": "Grade it."}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["prompt_template"] == [
        "The prompt template must contain {question}. The prompt template must contain {answer}."
    ]


def test_patch_keeps_key_unless_given_and_toggles_trust(api, judged):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin", api_key="k")
    response = api.patch(f"/api/judges/{judge.pk}/", {"temperature": 0.5, "counts": True}, format="json")

    assert response.status_code == 200, response.content
    judge.refresh_from_db()
    judge.account.refresh_from_db()
    assert (judge.temperature, judge.api_key, judge.account.counts) == (0.5, "k", True)
    api.patch(f"/api/judges/{judge.pk}/", {"api_key": ""}, format="json")
    judge.refresh_from_db()
    assert judge.api_key == ""


def test_start_run_status_and_agreement(api, judged):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin")
    response = api.post(
        f"/api/judges/{judge.pk}/judgings/",
        {"selection": "questions", "question_ids": ["q1", "q2"]},
        format="json",
    )
    assert response.status_code == 202, response.content
    judging_id = response.json()["id"]
    assert response["Location"].endswith(f"/api/judgings/{judging_id}/")
    judging_run(judging_id=judging_id, worker="test")

    status = api.get(f"/api/judgings/{judging_id}/").json()
    figures = api.get(f"/api/judges/{judge.pk}/agreement/").json()

    assert status["status"] == "succeeded" and status["judged"] == status["total"]
    assert figures["pairs"] == 4  # people rated (q1, a1), (q1, a2), (q2, a2), (q2, a4)
    assert sum(map(sum, figures["confusion"])) == 4
    certainties = [row["certainty"] for row in figures["least_certain"]]
    assert len(certainties) == status["judged"] and certainties == sorted(certainties)
    assert {
        row["people"] for row in figures["least_certain"] if (row["question"], row["answer"]) == ("q1", "a1")
    } == {3}


def test_start_conflict_is_409_and_cancel_resume(api, judged):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin")
    body = {"selection": "questions", "question_ids": ["q1"]}
    first = api.post(f"/api/judges/{judge.pk}/judgings/", body, format="json").json()

    assert api.post(f"/api/judges/{judge.pk}/judgings/", body, format="json").status_code == 409
    cancelled = api.post(f"/api/judgings/{first['id']}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    resumed = api.post(f"/api/judgings/{first['id']}/resume/")
    assert resumed.status_code == 202 and resumed.json()["status"] == "queued"
    assert api.post(f"/api/judgings/{first['id']}/resume/").status_code == 400


def test_bad_selection_is_400_naming_the_field(api, judged):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin")
    response = api.post(f"/api/judges/{judge.pk}/judgings/", {"selection": "all"}, format="json")

    assert response.status_code == 400 and "selection" in response.json()
    assert not Judging.objects.exists()


def test_test_connection_endpoint_shows_raw_reply(api, judged, judge_server):
    judge = judge_create(
        collection=judged.collection, name="R", kind="openai-chat", base_url=judge_server.url, model="m"
    )
    response = api.post(f"/api/judges/{judge.pk}/test/")

    assert response.status_code == 200
    assert response.json()["reply"] == "3" and response.json()["stars"] == 3


def test_delete_judge_removes_its_labels(api, judged):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin")
    judging = api.post(
        f"/api/judges/{judge.pk}/judgings/", {"selection": "questions", "question_ids": ["q3"]}, format="json"
    ).json()
    judging_run(judging_id=judging["id"], worker="test")
    api.patch(f"/api/judges/{judge.pk}/", {"counts": True, "human_wins": False}, format="json")
    assert Label.objects.filter(judge_count=1).exists()

    assert api.delete(f"/api/judges/{judge.pk}/").status_code == 204
    assert not Label.objects.filter(judge_count__gt=0).exists()


# --- authz: anonymous 401, rater 403, trainer 2xx, another collection's trainer 404 -------------------


def _calls(judge, judging):
    return {
        "list": ("get", "/api/collections/judged/judges/", None, 200),
        "create": ("post", "/api/collections/judged/judges/", {"name": "New"}, 201),
        "detail": ("get", f"/api/judges/{judge}/", None, 200),
        "update": ("patch", f"/api/judges/{judge}/", {"few_shot": 1}, 200),
        "test": ("post", f"/api/judges/{judge}/test/", None, 200),
        "runs": ("get", f"/api/judges/{judge}/judgings/", None, 200),
        "agreement": ("get", f"/api/judges/{judge}/agreement/", None, 200),
        "run": ("get", f"/api/judgings/{judging}/", None, 200),
        "cancel": ("post", f"/api/judgings/{judging}/cancel/", None, 200),
        "resume": ("post", f"/api/judgings/{judging}/resume/", None, 400),  # it is queued, not resumable
        "start": (
            "post",
            f"/api/judges/{judge}/judgings/",
            {"selection": "questions", "question_ids": ["q1"]},
            409,
        ),
        "delete": ("delete", f"/api/judges/{judge}/", None, 400),  # it is judging: cancel first
    }


@pytest.mark.parametrize("caller", ["anonymous", "rater", "trainer", "other"])
@pytest.mark.parametrize(
    "call",
    [
        "list",
        "create",
        "detail",
        "update",
        "test",
        "runs",
        "agreement",
        "run",
        "cancel",
        "resume",
        "start",
        "delete",
    ],
)
def test_judges_api_authz(judged, make_user, outsider, caller, call):
    judge = judge_create(collection=judged.collection, name="B", kind="builtin")
    judging = Judging.objects.create(
        judge=judge, selection="questions", pairs=[[judged.q("q1").pk, judged.a("a1").pk]]
    )
    method, url, body, trainer_status = _calls(judge.pk, judging.pk)[call]
    client = APIClient()
    if caller == "rater":
        client.force_authenticate(judged.human)
    elif caller == "trainer":
        client.force_authenticate(judged.trainer)
    elif caller == "other":
        client.force_authenticate(outsider)

    response = getattr(client, method)(url, body, format="json")

    expected = {"anonymous": 401, "rater": 403, "trainer": trainer_status, "other": 404}[caller]
    assert response.status_code == expected, response.content
    if caller != "trainer":
        judging.refresh_from_db()
        assert judging.status == JudgingStatus.QUEUED and Judge.objects.filter(pk=judge.pk).exists()
