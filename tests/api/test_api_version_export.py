"""``GET /api/rankers/{id}/versions/{vid}/export/?format=...``: who may read a version's export, the
formats, and the answers for a bad format, a version without an export model and another collection's."""

from __future__ import annotations

import pytest

from rankers.models import RankerVersion
from rankers.services import ranker_create
from tests.rankers.engine_support import es_config
from tests.rankers.export_support import opensearch_model
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


@pytest.fixture
def exported(collection):
    ranker = ranker_create(
        collection=collection, name="OpenSearch", kind="engine", config=es_config("http://127.0.0.1:9")
    )
    version = RankerVersion.objects.create(ranker=ranker, label="v1", details={"export": opensearch_model()})
    return version


def _url(version, fmt: str | None = "opensearch-rescore") -> str:
    query = f"?format={fmt}" if fmt is not None else ""
    return f"/api/rankers/{version.ranker_id}/versions/{version.pk}/export/{query}"


@pytest.mark.parametrize(("who", "expected"), zip(CALLERS, (401, 403, 200, 403, 200, 404), strict=True))
def test_version_export_authz(caller, exported, who, expected):
    response = caller(who).get(_url(exported))

    assert response.status_code == expected, response.content[:300]
    if expected != 200:
        assert set(response.json()) == {"detail"}


@pytest.mark.parametrize("fmt", ["opensearch-rescore", "opensearch-ltr"])
def test_version_export_answers_the_format_as_json(caller, exported, fmt):
    response = caller("trainer").get(_url(exported, fmt))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert (body["format"], body["engine"], body["name"], body["window"]) == (
        fmt,
        "opensearch",
        "ranktrainer-7-v1",
        50,
    )
    assert body["figures"]["parity"] == 0.0001 and body["left_out"][0]["feature"] == "cosine"


def test_version_export_shows_the_cost_whose_sign_can_be_trusted(caller, exported):
    figures = caller("trainer").get(_url(exported)).json()["figures"]

    assert (figures["cost"], figures["cost_status"], figures["cost_text"]) == (
        0.045,
        "measured",
        "+0.045 NDCG@10 on rated answers (95% CI +0.012 to +0.070; this version minus the exported model; "
        "negative: the export ranks better; 62% of this version's top 10 and 55% of the export's are rated).",
    )


def test_version_export_on_few_rated_answers_has_no_cost(caller, exported):
    export = opensearch_model()
    export["figures"].update(rated_share_version=0.3, rated_share_export=0.2)
    RankerVersion.objects.filter(pk=exported.pk).update(details={"export": export})

    figures = caller("trainer").get(_url(exported)).json()["figures"]

    assert (figures["cost"], figures["cost_status"], figures["cost_text"]) == (
        None,
        "not measurable yet",
        "not measurable yet: rate at least 171 more answers of the test questions' top 10 (30% of this version's top "
        "10 and 20% of the export's are rated; NDCG@10 on rated answers needs 50% of each before its sign "
        "can be trusted).",
    )


def test_version_export_ltr_lists_the_requests_to_apply(caller, exported):
    body = caller("trainer").get(_url(exported, "opensearch-ltr")).json()

    assert [r["method"] for r in body["requests"]] == ["PUT", "POST", "POST", "POST"]
    assert sorted(body["search"]) == ["linear", "trees"]


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        (
            "trec",
            "format must be one of opensearch-rescore, opensearch-ltr, solr-rerank, solr-ltr, not 'trec'.",
        ),
        (None, "format must be one of opensearch-rescore, opensearch-ltr, solr-rerank, solr-ltr, not ''."),
        (
            "solr-rerank",
            "this export model was fitted on opensearch's features; its formats are "
            "opensearch-rescore, opensearch-ltr, not 'solr-rerank'.",
        ),
    ],
)
def test_version_export_bad_format_is_400_naming_format(caller, exported, fmt, message):
    response = caller("trainer").get(_url(exported, fmt))

    assert (response.status_code, response.json()) == (400, {"format": [message]})


def test_version_export_without_a_model_is_409(caller, exported):
    version = RankerVersion.objects.create(ranker=exported.ranker, label="v0")

    response = caller("trainer").get(_url(version))

    assert response.status_code == 409
    assert response.json() == {
        "detail": "Version v0 has no export model: it was made before exports were fitted with each training; "
        "train the ranker again to get one."
    }


def test_version_export_of_an_unknown_version_or_another_ranker_is_404(caller, exported, collection):
    other = ranker_create(
        collection=collection, name="Other", kind="engine", config=es_config("http://127.0.0.1:9")
    )
    client = caller("trainer")

    unknown = client.get(
        f"/api/rankers/{exported.ranker_id}/versions/999999/export/?format=opensearch-rescore"
    )
    elsewhere = client.get(
        f"/api/rankers/{other.pk}/versions/{exported.pk}/export/?format=opensearch-rescore"
    )

    assert (unknown.status_code, elsewhere.status_code) == (404, 404)
    assert unknown.json() == {"detail": f"Ranker {exported.ranker_id} has no version 999999."}


def test_version_export_whose_linear_model_scores_below_the_engine_is_409_saying_why(caller, exported):
    exported.details = {
        "export": opensearch_model(figures={**opensearch_model()["figures"], "ndcg_export_app": 0.3})
    }
    exported.save(update_fields=["details"])

    response = caller("trainer").get(_url(exported, "opensearch-rescore"))

    why = (
        "The exported linear model scores 0.3000 NDCG@10 on rated answers on the 57 test questions, below "
        "the engine alone (0.3281): it would rank worse than the engine does, so it is not offered."
    )
    assert response.status_code == 409
    assert response.json() == {"detail": why, "format": "opensearch-rescore", "offered": False, "why": why}


def test_version_export_ltr_leaves_out_a_tree_model_below_the_engine(caller, exported):
    exported.details = {
        "export": opensearch_model(figures={**opensearch_model()["figures"], "ndcg_trees_app": 0.3})
    }
    exported.save(update_fields=["details"])

    body = caller("trainer").get(_url(exported, "opensearch-ltr")).json()

    why = (
        "The exported tree model scores 0.3000 NDCG@10 on rated answers on the 57 test questions, below "
        "the engine alone (0.3281): it would rank worse than the engine does, so it is not offered."
    )
    assert body["models"] == {"linear": {"offered": True, "why": ""}, "trees": {"offered": False, "why": why}}
    assert [r["step"] for r in body["requests"]] == [
        "Create the default feature store (once per cluster).",
        "Create the featureset.",
        "Upload the linear model.",
    ]
    assert list(body["search"]) == ["linear"] and body["notes"][-1] == f"No tree model: {why}"
