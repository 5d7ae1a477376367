"""OnlineWatch follows the ranker's champion (issue 36 §2): an unpinned watch swaps in the promoted
version's backend, a pinned one never switches, a version that cannot be loaded leaves the old one
serving with a note saying why. Real database, real loader (get_backend)."""

from __future__ import annotations

import pytest

from rankers.builtin import BuiltinBackend
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.serving.online import OnlineWatch, Served, builtin_loader
from tests.rankers.rankers_support import tiny_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def ranker(collection):
    tiny_answers(collection)
    ranker = Ranker.objects.create(collection=collection, name="B", kind=RankerKind.BUILTIN)
    ranker.champion = RankerVersion.objects.create(ranker=ranker, label="v1", method="bm25")
    ranker.save(update_fields=["champion"])
    return ranker


def _watch(ranker: Ranker, *, follow: bool) -> OnlineWatch:
    champion = ranker.champion
    backend = builtin_loader(ranker, champion)
    return OnlineWatch(
        ranker=ranker,
        served=Served(version=champion, backend=backend),
        loader=builtin_loader,
        poll_seconds=60,
        follow=follow,
    )


def _promote(ranker: Ranker, label: str) -> RankerVersion:
    version = RankerVersion.objects.create(ranker=ranker, label=label, method="bm25")
    Ranker.objects.filter(pk=ranker.pk).update(champion=version)
    return version


def test_online_watch_unpinned_serves_the_promoted_champion(ranker):
    watch = _watch(ranker, follow=True)
    before = watch.served
    v2 = _promote(ranker, "v2")

    watch.refresh()

    assert before.label == "v1" and watch.served is not before
    assert watch.served.version == v2 and watch.served.label == "v2"
    assert isinstance(watch.served.backend, BuiltinBackend) and watch.served.backend.version == v2
    assert watch.champion_health() == {"version": "v2"}


def test_online_watch_pinned_never_switches(ranker):
    watch = _watch(ranker, follow=False)
    before = watch.served
    _promote(ranker, "v2")

    watch.refresh()

    assert watch.served is before and watch.champion_health() == {"version": "v1"}


def test_online_watch_champion_that_cannot_load_keeps_the_old_one_with_a_note(ranker):
    watch = _watch(ranker, follow=True)
    before = watch.served
    _promote(ranker, "v2")
    Ranker.objects.filter(pk=ranker.pk).update(config={"candidates": 5})  # unusable: get_backend refuses

    watch.refresh()
    watch.refresh()  # not loaded again until the champion changes again

    assert watch.served is before
    assert watch.champion_health() == {
        "version": "v1",
        "champion_note": "champion v2 cannot be loaded: ranker 'B' has an unusable config: "
        "{'candidates': ['candidates must be a whole number from 10 to 1000.']}; still serving v1",
    }
    Ranker.objects.filter(pk=ranker.pk).update(config={}, champion=before.version)
    watch.refresh()
    assert watch.served is before and watch.champion_health() == {"version": "v1"}
