"""The trainer's export page and its downloads: ground truth, ratings and version models as plain links,
serving the same bytes as the API; trainers of the collection only."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from rankers.models import RankerVersion
from rankers.services import ranker_create
from tests.rankers.engine_support import es_config
from tests.rankers.export_support import opensearch_model
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from tests.trainer.rankers_views_support import assert_authz

pytestmark = pytest.mark.django_db

PAGE = "/c/tiny/manage/export/"


def _file(what: str, fmt: str, split: str) -> str:
    return reverse("collection-export-file", args=["tiny", what]) + f"?format={fmt}&split={split}"


@pytest.mark.parametrize(
    "url",
    [PAGE, _file("ground-truth", "jsonl", "test"), _file("ratings", "csv", "all")],
    ids=["page", "ground-truth", "ratings"],
)
def test_collection_export_authz(client, api_data, rater, outsider, trainer, url):
    assert_authz(client, method="get", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=200)


@pytest.mark.parametrize(
    ("what", "fmt", "split", "api"),
    [
        ("ground-truth", "jsonl", "test", "/api/collections/tiny/ground-truth/?format=jsonl&split=test"),
        ("ground-truth", "rnr-csv", "all", "/api/collections/tiny/ground-truth/?format=rnr-csv&split=all"),
        ("ground-truth", "trec-qrels", "train", "/api/collections/tiny/ground-truth/?format=trec-qrels"),
        ("ratings", "csv", "all", "/api/collections/tiny/ratings/export/?format=csv&split=all"),
        ("ratings", "jsonl", "test", "/api/collections/tiny/ratings/export/?format=jsonl&split=test"),
    ],
)
def test_collection_export_file_is_the_apis_file(client, api_data, caller, trainer, what, fmt, split, api):
    client.force_login(trainer)

    page = client.get(_file(what, fmt, split))
    from_api = caller("trainer_token").get(api)

    assert (page.status_code, from_api.status_code) == (200, 200)
    assert page.content == from_api.content and page.content
    for header in ("Content-Type", "Content-Disposition"):
        assert page[header] == from_api[header]


def test_collection_export_file_ground_truth_holds_the_test_labels(client, api_data, trainer):
    client.force_login(trainer)

    response = client.get(_file("ground-truth", "trec-qrels", "test"))

    assert response["Content-Disposition"] == 'attachment; filename="tiny-test.qrels"'
    assert response.content.decode() == "q2 0 a2 2\n"


@pytest.mark.parametrize(
    ("what", "query", "said"),
    [
        (
            "ground-truth",
            "?format=xml&split=all",
            "format: must be jsonl or rnr-csv or trec-qrels, not 'xml'.",
        ),
        ("ratings", "?format=csv&split=dev", "split: must be train, test or all, not 'dev'."),
    ],
)
def test_collection_export_file_bad_choice_names_the_field(client, api_data, trainer, what, query, said):
    client.force_login(trainer)

    response = client.get(reverse("collection-export-file", args=["tiny", what]) + query)

    assert (response.status_code, response.content.decode()) == (400, said)


def test_collection_export_file_unknown_export_is_404(client, api_data, trainer):
    client.force_login(trainer)

    assert client.get(reverse("collection-export-file", args=["tiny", "answers"])).status_code == 404


def test_collection_export_page_links_every_file_and_each_version_model(client, api_data, trainer):
    ranker = ranker_create(
        collection=api_data.collection,
        name="OpenSearch",
        kind="engine",
        config=es_config("http://127.0.0.1:9"),
    )
    version = RankerVersion.objects.create(ranker=ranker, label="v1", details={"export": opensearch_model()})
    RankerVersion.objects.create(ranker=ranker, label="v0")  # made before exports: not listed
    client.force_login(trainer)

    body = client.get(PAGE).content.decode()
    links = re.findall(r'href="([^"]+)" download', body)

    assert links == [
        _file("ground-truth", fmt, split).replace("&", "&amp;")
        for split in ("train", "test", "all")
        for fmt in ("jsonl", "rnr-csv", "trec-qrels")
    ] + [
        _file("ratings", fmt, split).replace("&", "&amp;")
        for split in ("train", "test", "all")
        for fmt in ("csv", "jsonl")
    ] + [
        reverse("ranker-version-export", args=["tiny", ranker.pk, version.pk, fmt])
        for fmt in ("opensearch-rescore", "opensearch-ltr")
    ]
    manage = client.get(reverse("collection-manage", args=["tiny"])).content.decode()
    assert f'<a href="{PAGE}" data-testid="export-link">Export files</a>' in manage
