"""evaluation.certainty: which versions are compared, and the texts the dashboard shows."""

from __future__ import annotations

import math

import pytest

from evaluation.certainty import certainty, deciding_pairs, panel, probability_text, settle_text, version_pair
from rankers.models import Ranker, RankerKind, RankerVersion
from tests.evaluation.decide_scenario import two_versions

pytestmark = pytest.mark.django_db


def test_version_pair_defaults_to_champion_and_newest_other_version(collection, make_user):
    scenario = two_versions(collection, make_user)

    pair = version_pair(ranker=scenario.ranker)

    assert (pair.champion, pair.challenger) == (scenario.v3, scenario.v4)


def test_version_pair_ignores_versions_of_another_ranker(collection, make_user):
    scenario = two_versions(collection, make_user)
    other = Ranker.objects.create(
        collection=collection, name="other", kind=RankerKind.HTTP, config={"url": "http://x/"}
    )
    foreign = RankerVersion.objects.create(ranker=other, label="v9")

    pair = version_pair(ranker=scenario.ranker, champion_id=foreign.pk, challenger_id=scenario.v3.pk)

    # The foreign champion is ignored (the ranker's champion v3 stands), and v3 against itself is no comparison.
    assert (pair.champion, pair.challenger) == (scenario.v3, None)


def test_probability_text_whole_percent_never_rounds_to_certainty():
    assert [probability_text(p) for p in (0.0, 0.004, 0.5, 0.996, 1.0)] == ["0%", "1%", "50%", "99%", "100%"]
    assert probability_text(math.nan) == "–"


def test_settle_text_counts_and_plurals():
    assert settle_text(1) == "About 1 more rating would settle this."
    assert settle_text(1234) == "About 1,234 more ratings would settle this."
    assert settle_text(0).startswith("More ratings would not change this much")


def test_certainty_without_rankings_says_so_instead_of_zero_bounds(collection, make_user):
    scenario = two_versions(collection, make_user)
    # A new version with no run: the ranker (nothing listens on port 9) must rank live, and cannot.
    v5 = RankerVersion.objects.create(ranker=scenario.ranker, label="v5")

    result = certainty(collection=collection, pair=version_pair(ranker=scenario.ranker, challenger_id=v5.pk))
    shown = panel(collection=collection, ranker=scenario.ranker, challenger_id=v5.pk)

    assert (result.headline, result.comparison) == (None, None)
    assert result.unavailable != ""
    assert shown is not None and shown.certainty.unavailable == result.unavailable
    assert (
        deciding_pairs(collection=collection, pair=version_pair(ranker=scenario.ranker, challenger_id=v5.pk))
        == []
    )
