"""Promote by hand: the champion changes and the change records who did it (rolling back is the same)."""

from __future__ import annotations

from django.urls import reverse

from rankers.models import ChampionChange
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


def test_ranker_promote_older_version_rolls_back(client, rankers, trainer):
    client.force_login(trainer)
    client.post(_url(rankers, rankers.v2))

    client.post(_url(rankers, rankers.v1))

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
