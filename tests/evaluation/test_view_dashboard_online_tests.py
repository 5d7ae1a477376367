"""The dashboard's history lists the ranker's online tests (running, and stopped with why)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rankers.models import RankerVersion
from rankers.online_tests import online_test_start, online_test_stop
from tests.online_support import online_ranker

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
