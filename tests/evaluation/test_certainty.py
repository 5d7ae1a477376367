"""evaluation.certainty: which versions are compared, and the texts the dashboard shows."""

from __future__ import annotations

import math

import pytest

from evaluation.certainty import (
    Certainty,
    ComparisonCertainty,
    Panel,
    certainty,
    comparison_json,
    comparison_plain_text,
    deciding_pairs,
    headline_plain_text,
    panel,
    settle_text,
    version_pair,
)
from evaluation.numbers import probability as probability_text
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


def test_headline_plain_text_says_whether_ratings_would_move_it():
    assert headline_plain_text(version="version v1", unrated=395, k=10, ratings_to_settle=23) == (
        "Version v1's score may still change as answers get rated. About 23 more ratings would settle this."
    )
    assert headline_plain_text(version="version v1", unrated=12, k=10, ratings_to_settle=0) == (
        "More ratings would hardly change version v1's score: it is as sure as ratings can make it."
    )
    assert headline_plain_text(version="version v1", unrated=0, k=10, ratings_to_settle=0) == (
        "Every answer in the top 10 of version v1 is rated, so more ratings will not change its score."
    )


def test_comparison_plain_text_names_the_verdict_or_the_ratings_that_would_tell():
    def plain(verdict: str, n: int = 0) -> str:
        return comparison_plain_text(
            champion="version v1", challenger="version v2", verdict=verdict, ratings_to_settle=n
        )

    assert (
        plain("", 40)
        == "We can't tell yet whether version v2 is better than version v1: rate about 40 more answers to find out."
    )
    assert (
        plain("", 1)
        == "We can't tell yet whether version v2 is better than version v1: rate about 1 more answer to find out."
    )
    assert plain("", 0) == (
        "We can't tell whether version v2 is better than version v1, and more ratings would hardly help: "
        "the difference is too small for this many test questions."
    )
    assert (
        plain("real improvement")
        == "Version v2 is better than version v1, and more ratings would not change that."
    )
    assert (
        plain("real drop") == "Version v2 is worse than version v1, and more ratings would not change that."
    )
    assert plain("within noise") == (
        "Version v2 and version v1 score about the same (the difference could be chance), "
        "and more ratings would not change that."
    )
    for words in ("probability", "randomization", "bootstrap", "p = ", "%"):
        assert all(words not in plain(v, 40).lower() for v in ("", "real improvement", "within noise"))


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


def _comparison(shares: tuple[float, float, float], verdict: str) -> ComparisonCertainty:
    return ComparisonCertainty(
        champion="version v3",
        challenger="version v4",
        champion_id=1,
        challenger_id=2,
        k=10,
        probability=0.8,
        expected_difference=0.02,
        label_sd=0.01,
        question_sd=0.01,
        ratings_to_settle=12,
        questions=40,
        verdict_shares=shares,
        verdict=verdict,
    )


def test_panel_verdict_settled_and_not_settled_texts(collection, make_user):
    scenario = two_versions(collection, make_user)
    pair = version_pair(ranker=scenario.ranker)

    def shown(shares, verdict):
        return Panel(Certainty(None, _comparison(shares, verdict)), pair, []).verdict

    assert shown((0.97, 0.03, 0.0), "real improvement") == "Real improvement, settled"
    assert shown((0.62, 0.375, 0.005), "") == (
        "Not settled yet: real improvement in 62%, within noise in 38%, real drop in 1%"
    )
    assert shown((0.0, 0.3, 0.7), "") == "Not settled yet: real drop in 70%, within noise in 30%"


def test_certainty_verdict_with_one_test_question_is_within_noise_settled(collection, make_user):
    # One question: the sign-flip test can never reject (p = 1), whatever d6 and d5 turn out to be.
    scenario = two_versions(collection, make_user)

    comparison = certainty(collection=collection, pair=version_pair(ranker=scenario.ranker)).comparison

    assert comparison is not None
    assert (comparison.verdict_shares, comparison.verdict) == ((0.0, 1.0, 0.0), "within noise")


def test_comparison_json_keeps_the_decision_figures_and_nan_as_none():
    c = ComparisonCertainty(
        champion="version v1",
        challenger="version v2",
        champion_id=1,
        challenger_id=2,
        k=10,
        probability=math.nan,
        expected_difference=-0.0127,
        label_sd=0.01,
        question_sd=0.02,
        ratings_to_settle=35,
        questions=0,
        verdict_shares=(0.25, 0.75, 0.0),
        verdict="",
    )

    assert comparison_json(c) == {
        "probability": None,
        "expected_difference": -0.0127,
        "verdict": "",
        "verdict_shares": [0.25, 0.75, 0.0],
        "ratings_to_settle": 35,
    }
