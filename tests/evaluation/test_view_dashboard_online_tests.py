"""The dashboard's history lists the ranker's online tests (running, and stopped with why)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evaluation.models import EvaluationRun, RunStatus
from rankers.models import RankerVersion
from rankers.online_tests import online_test_start, online_test_stop
from tests.online_support import online_log, online_ranker

pytestmark = pytest.mark.django_db


def test_dashboard_lists_online_tests_newest_first(client, collection, trainer):
    ranker, _, challenger = online_ranker(collection)
    first = online_test_start(challenger=challenger, started_by=trainer)
    online_test_stop(test=first, stopped_by=trainer)
    v3 = RankerVersion.objects.create(ranker=ranker, label="v3", method="bm25")
    second = online_test_start(challenger=v3, started_by=trainer)
    client.force_login(trainer)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    block = html.split('data-testid="online-tests">')[1].split("</details>")[0]
    started = second.started_at.strftime("%Y-%m-%d %H:%M")
    first.refresh_from_db()
    span = f"{first.started_at:%Y-%m-%d %H:%M} to {first.stopped_at:%Y-%m-%d %H:%M}"
    assert "<summary>Online tests (2, one running)</summary>" in block
    assert block.index(f"{started}: online test of v3 against v1, running") < block.index(
        f"{span}: online test of v2 against v1. Stopped by tom."
    )


def test_dashboard_online_tests_link_their_version_page(client, collection, trainer):
    ranker, _, challenger = online_ranker(collection)
    online_test_start(challenger=challenger, started_by=trainer)
    client.force_login(trainer)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    block = html.split('data-testid="online-tests">')[1].split("</details>")[0]
    url = reverse("ranker-version", args=[collection.slug, ranker.pk, challenger.pk])
    assert f'running (<a href="{url}#online-heading">figures and verdict</a>)</li>' in block


def test_dashboard_online_tests_hidden_from_raters(client, collection, trainer, rater):
    _, _, challenger = online_ranker(collection)
    online_test_start(challenger=challenger, started_by=trainer)
    client.force_login(rater)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    assert 'data-testid="online-tests"' not in html and "online test of v2" not in html


def test_dashboard_chart_gets_each_online_test_as_a_band(client, collection, trainer):
    ranker, champion, challenger = online_ranker(collection)
    ranker.is_default = True
    ranker.save(update_fields=["is_default"])
    EvaluationRun.objects.create(
        ranker=ranker,
        ranker_version=champion,
        collection=collection,
        status=RunStatus.SUCCEEDED,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
        ndcg_mean=0.5,
        accuracy_mean=0.5,
    )
    first = online_test_start(challenger=challenger, started_by=trainer)
    online_test_stop(test=first, stopped_by=trainer)
    v3 = RankerVersion.objects.create(ranker=ranker, label="v3", method="bm25")
    second = online_test_start(challenger=v3, started_by=trainer)
    first.refresh_from_db()
    client.force_login(trainer)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    bands = json.loads(
        re.search(r'<script id="history-online" type="application/json">(.*?)</script>', html).group(1)
    )
    assert bands == [
        {"start": int(second.started_at.timestamp()), "end": None, "label": "online: v3 vs v1"},
        {
            "start": int(first.started_at.timestamp()),
            "end": int(first.stopped_at.timestamp()),
            "label": "online: v2 vs v1",
        },
    ]
    assert "<summary>Online tests (2, one running), the shaded bands on the chart</summary>" in html


def test_dashboard_what_to_do_next_says_a_test_runs_with_its_verdict_and_link(client, collection, trainer):
    ranker, _, challenger = online_ranker(collection)
    test = online_test_start(challenger=challenger, started_by=trainer, share=50)
    online_log(test, [1, 1, 1, -1, 0, None])
    client.force_login(trainer)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    note = html.split('data-testid="online-running">')[1].split("</li>")[0]
    url = reverse("ranker-version", args=[collection.slug, ranker.pk, challenger.pk])
    assert note == (
        "<strong>An online test is running</strong>: Online v2 against v1 on 50% of the live queries since "
        f"{test.started_at:%Y-%m-%d %H:%M}; its verdict now: keep going: about 150 more queries "
        "(6 interleaved queries, 5 with clicks, online Δ +0.200 (95% CI −0.276 to +0.397)).\n"
        f'    <a href="{url}#online-heading">Its figures, and Stop</a>'
    )


def test_dashboard_what_to_do_next_without_clicks_says_no_verdict_yet(client, collection, trainer):
    _, _, challenger = online_ranker(collection)
    online_test_start(challenger=challenger, started_by=trainer)
    client.force_login(trainer)

    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    note = html.split('data-testid="online-running">')[1].split("</li>")[0]
    assert "its verdict now: none yet, no interleaved query has a click (0 interleaved queries)." in note


def test_dashboard_what_to_do_next_names_no_test_for_raters_or_once_stopped(
    client, collection, trainer, rater
):
    _, _, challenger = online_ranker(collection)
    test = online_test_start(challenger=challenger, started_by=trainer)
    client.force_login(rater)
    assert (
        'data-testid="online-running"'
        not in client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()
    )

    online_test_stop(test=test, stopped_by=trainer)
    client.force_login(trainer)
    html = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    assert 'data-testid="online-running"' not in html and 'id="warnings-heading"' in html
