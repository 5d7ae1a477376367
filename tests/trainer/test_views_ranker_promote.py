"""Promote by hand: the champion changes and the change records who did it (rolling back is the same).
A version not measured better than the champion gets a confirmation page stating the measured difference
first; its button posts ``confirm=1``."""

from __future__ import annotations

import re

from django.urls import reverse

from rankers.models import ChampionChange, RankerVersion
from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import assert_authz


def _url(rankers, version) -> str:
    return reverse("ranker-version-promote", args=[rankers.collection.slug, rankers.ranker.pk, version.pk])


def test_ranker_promote_authz(client, rankers, rater, outsider, trainer):
    url = _url(rankers, rankers.v2)
    assert url == f"/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/promote/"
    assert_authz(client, method="post", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=303)


def test_ranker_promote_get_is_405(client, rankers, trainer):
    client.force_login(trainer)
    assert client.get(_url(rankers, rankers.v2)).status_code == 405


def test_ranker_promote_changes_champion_and_records_who(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers, rankers.v2))

    version_url = f"/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/"
    assert (response.status_code, response["Location"]) == (303, version_url)
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.champion_id == rankers.v2.pk
    change = ChampionChange.objects.filter(ranker=rankers.ranker).order_by("-id").first()
    assert (change.version_id, change.previous_id, change.changed_by_id, change.reason) == (
        rankers.v2.pk,
        rankers.v1.pk,
        trainer.pk,
        "Promoted by hand by tom.",
    )
    page = client.get(version_url)
    assert [str(m) for m in page.context["messages"]] == ["v2 is now the champion of Built-in."]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _within_noise(rankers) -> RankerVersion:
    """v3: the untrained fusion again, compared with the champion v1 on 57 test questions: within noise."""
    return RankerVersion.objects.create(
        ranker=rankers.ranker,
        label="v3",
        method="fusion",
        label_count=777,
        comparison={
            "k": 10,
            "questions": 57,
            "challenger_ndcg": 0.43611,
            "champion_ndcg": 0.43611,
            "difference": 0.0,
            "ci_low": 0.0,
            "ci_high": 0.0,
            "p_value": 1.0,
            "verdict": "within noise",
            "champion": "v1",
            "champion_id": rankers.v1.pk,
        },
    )


def test_ranker_promote_unconfirmed_authz(client, rankers, rater, outsider, trainer):
    url = _url(rankers, _within_noise(rankers))
    assert_authz(client, method="post", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=200)
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.champion_id == rankers.v1.pk


def test_ranker_promote_confirmed_authz(client, rankers, rater, outsider, trainer):
    v3 = _within_noise(rankers)
    url = _url(rankers, v3)
    assert_authz(
        client,
        method="post",
        url=url,
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=303,
        data={"confirm": "1"},
    )
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.champion_id == v3.pk


def test_ranker_promote_not_measured_better_asks_with_the_measured_difference(client, rankers, trainer):
    v3 = _within_noise(rankers)
    client.force_login(trainer)

    response = client.post(_url(rankers, v3))

    assert response.status_code == 200
    assert [t.name for t in response.templates][0] == "trainer/ranker_promote_confirm.html"
    body = response.content.decode()
    figures = re.search(r'data-testid="promote-confirm-figures">(.*?)</p>', body, re.S).group(1)
    assert _text(figures) == (
        "v3 scored 0.436 vs the champion&#x27;s 0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 "
        "test questions). Promote anyway?"
    )
    form = re.search(r'<form method="post" action="([^"]+)">(.*?)</form>', body, re.S)
    assert form.group(1) == _url(rankers, v3)
    assert '<input type="hidden" name="confirm" value="1">' in form.group(2)
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.champion_id == rankers.v1.pk
    assert ChampionChange.objects.filter(ranker=rankers.ranker).count() == 1


def test_ranker_promote_confirmed_records_that_it_was_not_measured_better(client, rankers, trainer):
    v3 = _within_noise(rankers)
    client.force_login(trainer)

    response = client.post(_url(rankers, v3), {"confirm": "1"})

    assert response.status_code == 303
    change = ChampionChange.objects.filter(ranker=rankers.ranker).order_by("-id").first()
    assert (change.version_id, change.changed_by_id, change.reason) == (
        v3.pk,
        trainer.pk,
        "Promoted by hand by tom. Confirmed although not measured better: v3 scored 0.436 vs the champion's "
        "0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 test questions).",
    )


def test_ranker_promote_older_version_rolls_back_after_confirming(client, rankers, trainer):
    client.force_login(trainer)
    client.post(_url(rankers, rankers.v2))

    asked = client.post(_url(rankers, rankers.v1))
    client.post(_url(rankers, rankers.v1), {"confirm": "1"})

    assert "v1 has not been compared with the champion, v2: it is not measured better." in _text(
        asked.content.decode()
    )
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.champion_id == rankers.v1.pk
    assert list(
        ChampionChange.objects.filter(ranker=rankers.ranker)
        .order_by("id")
        .values_list("version__label", "previous__label", "changed_by__username")
    ) == [("v1", None, None), ("v2", "v1", "tom"), ("v1", "v2", "tom")]


def test_ranker_promote_champion_again_is_refused_and_records_nothing(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers, rankers.v1), follow=True)

    assert [str(m) for m in response.context["messages"]] == ["v1 is already the champion of Built-in."]
    assert ChampionChange.objects.filter(ranker=rankers.ranker).count() == 1
