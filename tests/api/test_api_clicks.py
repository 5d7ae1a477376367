"""The clicks API: a collection's implicit judgments and their agreement with people, as JSON, on the
hand-built log of ``tests/evaluation/click_log.py`` (figures worked by hand in
``tests/evaluation/test_selectors_clicks.py`` and ``tests/judges/test_clicks.py``); parameters checked
by name; trainers of the collection only (the full matrix of callers is in ``test_api_authz.py``)."""

from __future__ import annotations

import math

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from corpus.models import Role
from corpus.services import collection_create, membership_set
from tests.evaluation.click_log import clicky_collection, rate_clicky
from ubi.production_questions import production_question_id

RANGE = {"start_date": "2026-11-28", "end_date": "2026-11-28"}


@pytest.fixture
def users(db):
    collection = clicky_collection()
    make = get_user_model().objects.create_user
    trainer, rater, stranger = make("c-trainer"), make("c-rater"), make("c-stranger")
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    membership_set(collection=collection, user=rater, role=Role.RATER)
    other = collection_create(name="Elsewhere", slug="elsewhere")
    membership_set(collection=other, user=stranger, role=Role.TRAINER)
    rate_clicky(collection, rater)
    return {"trainer": trainer, "rater": rater, "stranger": stranger}


def _client(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_implicit_judgments_json_by_the_srw_formula(users):
    response = _client(users["trainer"]).get("/api/collections/clicky/implicit-judgments/", RANGE)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["parameters"] == {
        "max_rank": 20,
        "start_date": "2026-11-28",
        "end_date": "2026-11-28",
        "application": "clicky",
    }
    assert (body["events"], body["queries"], body["matched_queries"], body["unmatched_texts"]) == (
        16,
        5,
        3,
        1,
    )
    assert body["unmatched"] == [{"query": "cheap phones", "count": 2}]
    pairs = {(j["question"], j["answer"]): j for j in body["judgments"]}
    assert math.isclose(pairs[("q1", "a1")]["coec"], 5 / 3)
    assert {p: j["coec_stars"] for p, j in pairs.items()} == {
        ("q1", "a1"): 2,
        ("q1", "a2"): 1,
        ("q1", "a3"): 0,
        ("q2", "a1"): 0,
        ("q2", "a2"): None,
        ("q2", "a3"): 0,
    }
    assert body["stars"]["coec"][1] == {"stars": 1, "from": 0.5, "below": 1.0}
    assert body["expected_ctr"][0] == {"rank": 1, "ctr": 0.6}
    # The default model is the cascade one (figures by hand in tests/evaluation/test_selectors_clicks.py).
    assert body["model"] == "dbn"
    assert body["stars"]["dbn"][3] == {"stars": 3, "from": 0.75, "below": None}
    assert {p: (j["stars"], j["dbn_stars"], j["dbn_reads"]) for p, j in pairs.items()} == {
        ("q1", "a1"): (3, 3, 2),
        ("q1", "a2"): (3, 3, 1),
        ("q1", "a3"): (None, None, 0),
        ("q2", "a1"): (0, 0, 1),
        ("q2", "a2"): (3, 3, 1),
        ("q2", "a3"): (0, 0, 1),
    }


def test_implicit_judgments_json_model_picks_the_stars(users):
    response = _client(users["trainer"]).get(
        "/api/collections/clicky/implicit-judgments/", {**RANGE, "model": "coec"}
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["model"] == "coec"
    pairs = {(j["question"], j["answer"]): j for j in body["judgments"]}
    assert [(pairs[p]["stars"], pairs[p]["value"]) for p in [("q1", "a2"), ("q2", "a2")]] == [
        (1, 5 / 6),
        (None, 0.0),
    ]


def test_clicks_agreement_json_by_hand(users):
    response = _client(users["trainer"]).get("/api/collections/clicky/clicks-agreement/", RANGE)

    assert response.status_code == 200, response.content
    comparisons = {(c["method"], c["grader"]): c for c in response.json()["comparisons"]}
    assert [c["method"] for c in response.json()["comparisons"][:3]] == ["dbn", "coec", "pbm"]
    people = comparisons[("coec", "people")]
    assert (people["pairs"], people["two_or_more_apart"]) == (5, 2)
    assert math.isclose(people["weighted_kappa"], 8 / 43)
    assert people["confusion"] == [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0]]
    # DBN stars (q1·a1 3, q1·a2 3, q2·a1 0, q2·a3 0; q1·a3 never read) against people's 3, 1, 0, 3:
    # quadratic weighted κ = 1 − 13 / 16.
    cascade = comparisons[("dbn", "people")]
    assert (cascade["pairs"], cascade["two_or_more_apart"]) == (4, 2)
    assert math.isclose(cascade["weighted_kappa"], 3 / 16)
    assert cascade["confusion"] == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0, 1]]
    far = [
        (f["question"], f["answer"], f["people"], f["method"], f["stars"], f["coec_stars"])
        for f in response.json()["two_or_more_apart"]
    ]
    assert far == [("q2", "a3", 3, "dbn", 0, 0), ("q1", "a2", 1, "dbn", 3, 1)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"max_rank": "0"}, "max_rank"),
        ({"start_date": "28/11/2026"}, "start_date"),
        ({"start_date": "2026-11-29", "end_date": "2026-11-28"}, "end_date"),
        ({"model": "cascade"}, "model"),
    ],
)
def test_implicit_judgments_bad_parameter_names_it(users, query, field):
    response = _client(users["trainer"]).get("/api/collections/clicky/implicit-judgments/", query)

    assert response.status_code == 400
    assert list(response.json()) == [field]


@pytest.mark.parametrize("path", ["implicit-judgments", "clicks-agreement"])
@pytest.mark.parametrize(
    ("who", "status"), [(None, 401), ("rater", 403), ("stranger", 404), ("trainer", 200)]
)
def test_clicks_api_access(users, path, who, status):
    response = _client(users.get(who) if who else None).get(f"/api/collections/clicky/{path}/")

    assert response.status_code == status


def test_production_questions_adds_new_texts_and_counts_the_others(users):
    response = _client(users["trainer"]).post(
        "/api/collections/clicky/production-questions/",
        {"queries": ["Cheap  Phones", "laptop bag"]},
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["already_questions"] == 1
    assert [(q["id"], q["text"]) for q in body["created"]] == [
        (production_question_id("cheap phones"), "cheap phones")
    ]
    assert body["created"][0]["split"] in {"train", "test"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"queries": ["free lunch"]}, ["Never asked in the production log: 'free lunch'."]),
        ({"queries": []}, ["Ensure this field has at least 1 elements."]),
        ({}, ["This field is required."]),
    ],
)
def test_production_questions_bad_body_names_queries(users, body, message):
    response = _client(users["trainer"]).post(
        "/api/collections/clicky/production-questions/", body, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"queries": message}
