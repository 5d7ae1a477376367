"""The version page's "Inside the engine" section and its downloads: the export model of an engine
ranker's version in each of its formats, as JSON files."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from rankers.models import RankerVersion
from rankers.services import ranker_create
from tests.rankers.engine_support import es_config
from tests.rankers.export_support import opensearch_model
from tests.trainer.rankers_views_support import assert_authz

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported(collection):
    ranker = ranker_create(
        collection=collection, name="OpenSearch", kind="engine", config=es_config("http://127.0.0.1:9")
    )
    return RankerVersion.objects.create(ranker=ranker, label="v1", details={"export": opensearch_model()})


def _page(version) -> str:
    return reverse("ranker-version", args=["tiny", version.ranker_id, version.pk])


def _download(version, fmt: str) -> str:
    return reverse("ranker-version-export", args=["tiny", version.ranker_id, version.pk, fmt])


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)).strip())


def _testid(body: str, name: str) -> str:
    return _text(re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>.*?</\1>', body, re.S).group(0))


def test_version_page_shows_the_export_figures_and_a_link_per_format(client, exported, trainer):
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()

    assert (
        _testid(body, "export-engine-alone"),
        _testid(body, "export-app"),
        _testid(body, "export-engine"),
    ) == (
        "0.328",
        "0.345",
        "0.345",
    )
    assert _testid(body, "export-left-out").startswith(
        "Left out, because the engine cannot compute them: cosine"
    )
    assert _testid(body, "export-left-out").endswith(
        "What that costs: +0.045 NDCG@10 on rated answers (95% CI +0.012 to +0.070; this version minus the "
        "exported model; negative: the export ranks better; 62% of this version's top 10 and 55% of the "
        "export's are rated)."
    )
    for fmt in ("opensearch-rescore", "opensearch-ltr"):
        assert f'href="{_download(exported, fmt)}" download data-testid="export-{fmt}"' in body
    assert 'data-testid="export-solr-rerank"' not in body


def test_version_page_on_few_rated_answers_shows_no_cost_but_how_many_to_rate(client, exported, trainer):
    export = opensearch_model()
    export["figures"].update(rated_share_version=0.3, rated_share_export=0.2)
    RankerVersion.objects.filter(pk=exported.pk).update(details={"export": export})
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()

    # ⌈0.5 × 570⌉ = 285 rated places needed; the export's top 10s hold round(0.2 × 570) = 114.
    assert _testid(body, "export-cost") == (
        "not measurable yet: rate at least 171 more answers of the test questions' top 10 (30% of this version's top "
        "10 and 20% of the export's are rated; NDCG@10 on rated answers needs 50% of each before its sign "
        "can be trusted)."
    )
    assert "+0.045" not in body


def test_version_page_of_a_tree_version_says_how_much_of_its_gain_the_export_keeps(client, exported, trainer):
    RankerVersion.objects.filter(pk=exported.pk).update(
        method="lambdamart", feature_importances={"cosine": 0.7, "engine": 0.3}
    )
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()

    # (0.345 − 0.328133) / (0.39 − 0.328133) = 0.2726...
    assert _testid(body, "export-kept") == (
        "This version ranks with trees (LambdaMART) over the app's features, 70% of their gain from cosine, "
        "which the engine cannot compute: the exported linear model over the engine's features does not copy "
        "them. The export keeps 27% of the version's gain over the engine alone (NDCG@10 on rated answers: "
        "engine alone 0.328, export 0.345, this version 0.390). To keep all of it, serve the version itself in "
        "front of the engine: manage.py ranker_server --ranker ID (docs/rankers.md, Serving a trained engine "
        "ranker where production calls)."
    )


def test_version_page_without_an_export_says_so(client, exported, trainer):
    version = RankerVersion.objects.create(ranker=exported.ranker, label="v0")
    client.force_login(trainer)

    body = client.get(_page(version)).content.decode()

    assert _testid(body, "export-missing") == (
        "No model for the engine: this version was made before exports were fitted with each training."
    )


def test_version_export_download_is_a_json_attachment(client, exported, trainer):
    client.force_login(trainer)

    response = client.get(_download(exported, "opensearch-ltr"))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="ranktrainer-7-v1-opensearch-ltr.json"'
    assert (
        json.loads(response.content)["requests"][1]["url"]
        == "http://127.0.0.1:9200/_ltr/_featureset/ranktrainer-7-v1"
    )


def test_version_export_download_authz(client, exported, rater, outsider, trainer):
    url = _download(exported, "opensearch-rescore")

    assert_authz(client, method="get", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=200)


@pytest.mark.parametrize("fmt", ["solr-rerank", "csv"])
def test_version_export_download_of_another_format_is_404(client, exported, trainer, fmt):
    client.force_login(trainer)

    assert client.get(_download(exported, fmt)).status_code == 404


def _with(version, details: dict | None = None, **figures) -> None:
    model = opensearch_model()
    version.details = {**(details or {}), "export": {**model, "figures": {**model["figures"], **figures}}}
    version.save(update_fields=["details"])


def test_version_page_does_not_offer_a_tree_model_below_the_engine(client, exported, trainer):
    _with(exported, ndcg_trees_app=0.3)
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()

    assert _testid(body, "export-not-offered") == (
        "The exported tree model scores 0.3000 NDCG@10 on rated answers on the 57 test questions, below the "
        "engine alone (0.3281): it would rank worse than the engine does, so it is not offered."
    )
    assert "(the Learning to Rank plugin: a linear model)" in body
    assert f'href="{_download(exported, "opensearch-ltr")}"' in body


def test_version_page_and_download_refuse_a_linear_model_below_the_engine(client, exported, trainer):
    _with(exported, ndcg_export_app=0.3)
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()
    response = client.get(_download(exported, "opensearch-rescore"))

    why = (
        "The exported linear model scores 0.3000 NDCG@10 on rated answers on the 57 test questions, below the "
        "engine alone (0.3281): it would rank worse than the engine does, so it is not offered."
    )
    assert _testid(body, "export-not-offered") == why
    assert (
        _testid(body, "export-opensearch-rescore-not-offered"),
        _testid(body, "export-opensearch-ltr-not-offered"),
    ) == (
        "opensearch-rescore: not offered",
        "opensearch-ltr: not offered",
    )
    assert (
        "ranker-version-export" not in body
        and f'href="{_download(exported, "opensearch-rescore")}"' not in body
    )
    assert response.status_code == 409 and response["Content-Type"] == "application/json"
    assert "Content-Disposition" not in response
    assert json.loads(response.content) == {
        "detail": why,
        "format": "opensearch-rescore",
        "offered": False,
        "why": why,
    }


# A training whose every learned candidate scored the engine's own cross-validated figure, as
# positive-only labels give.
LEARNED_NOTHING = {
    "first_stage": "engine",
    "candidates": [
        {"name": "engine", "trained": False, "cv_ndcg": 0.8123, "chosen": True},
        {"name": "fusion", "trained": False, "cv_ndcg": 0.79, "chosen": False},
        {"name": "learned-fusion", "trained": True, "cv_ndcg": 0.8123, "chosen": False},
        {"name": "lambdamart", "trained": True, "cv_ndcg": 0.8123, "chosen": False},
    ],
}


def test_version_that_learned_nothing_offers_no_export(client, exported, trainer):
    _with(exported, LEARNED_NOTHING)
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()
    response = client.get(_download(exported, "opensearch-ltr"))

    why = (
        "Version v1 learned nothing: every candidate that learns from ratings scored exactly the "
        "cross-validated NDCG@10 of the engine's own order (0.8123), as when every rated answer is relevant "
        "and none is known to be bad. It ranks in the engine's own order; there is no model to export."
    )
    assert _testid(body, "export-not-offered") == why
    assert f'href="{_download(exported, "opensearch-rescore")}"' not in body
    assert (response.status_code, json.loads(response.content)["why"]) == (409, why)


def test_version_that_kept_the_untrained_fusion_offers_no_export(client, exported, trainer):
    rows = [{**row, "chosen": row["name"] == "fusion"} for row in LEARNED_NOTHING["candidates"]]
    rows[2]["cv_ndcg"] = 0.8
    _with(exported, {**LEARNED_NOTHING, "candidates": rows})
    client.force_login(trainer)

    body = client.get(_page(exported)).content.decode()

    assert _testid(body, "export-not-offered") == (
        "Version v1 learned nothing: its training kept the untrained fusion (its first stage's score with "
        "semantic similarity, fixed weights), which needs no ratings; there is no learned model to export."
    )
    assert 'data-testid="export-opensearch-rescore"' not in body
