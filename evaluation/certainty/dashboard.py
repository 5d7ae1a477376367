"""The "How sure are we?" panel of the dashboard: both answers for the default ranker's versions, the
versions a trainer may pick, and the link that starts rating the pairs that decide."""

from __future__ import annotations

import math
from dataclasses import dataclass

from corpus.models import Collection
from evaluation.numbers import NO_VALUE, figure, figure_range, percent, signed
from evaluation.numbers import probability as probability_text
from evaluation.uncertainty import SETTLED_SHARE
from rankers.models import Ranker, RankerVersion

from .estimates import VERDICT_DRAWS, Certainty, certainty
from .texts import comparison_plain_text, headline_plain_text, settle_text, verdict_text
from .versions import VersionPair, version_pair


@dataclass(frozen=True)
class Panel:
    """The dashboard's two answers with the versions a trainer may pick and the link to rate."""

    certainty: Certainty
    pair: VersionPair
    versions: list[RankerVersion]

    @property
    def headline_range(self) -> str:
        h = self.certainty.headline
        if h is None or math.isnan(h.low):
            return NO_VALUE
        return figure_range(h.low, h.high)

    @property
    def headline_estimate(self) -> str:
        h = self.certainty.headline
        return NO_VALUE if h is None else figure(h.estimate)

    @property
    def headline_settle(self) -> str:
        return settle_text(self.certainty.headline.ratings_to_settle) if self.certainty.headline else ""

    @property
    def rated_champion(self) -> str:
        c = self.certainty.comparison
        return figure(c.rated_champion) if c else NO_VALUE

    @property
    def rated_challenger(self) -> str:
        c = self.certainty.comparison
        return figure(c.rated_challenger) if c else NO_VALUE

    @property
    def rated_difference(self) -> str:
        c = self.certainty.comparison
        return signed(c.rated_challenger - c.rated_champion) if c else NO_VALUE

    @property
    def rated_shares(self) -> tuple[str, str]:
        """Each version's share of rated answers in its top k: (champion, challenger)."""
        c = self.certainty.comparison
        return (percent(c.rated_share_champion), percent(c.rated_share_challenger)) if c else ("", "")

    def headline_plain(self) -> str:
        """Whether the headline may still move, in words (no figures: they are behind the disclosure)."""
        h = self.certainty.headline
        if h is None:
            return ""
        return headline_plain_text(
            version=h.version, unrated=h.unrated, k=h.k, ratings_to_settle=h.ratings_to_settle
        )

    @property
    def comparison_plain(self) -> str:
        """Whether the challenger is better, in words ("We can't tell yet whether ...")."""
        c = self.certainty.comparison
        if c is None:
            return ""
        return comparison_plain_text(
            champion=c.champion,
            challenger=c.challenger,
            verdict=c.verdict,
            ratings_to_settle=c.ratings_to_settle,
        )

    @property
    def probability(self) -> str:
        c = self.certainty.comparison
        return probability_text(c.probability) if c else NO_VALUE

    @property
    def expected_difference(self) -> str:
        c = self.certainty.comparison
        return signed(c.expected_difference) if c else NO_VALUE

    @property
    def comparison_settle(self) -> str:
        return settle_text(self.certainty.comparison.ratings_to_settle) if self.certainty.comparison else ""

    @property
    def verdict(self) -> str:
        """ "Real improvement, settled" or "Not settled yet: real improvement in 62%, within noise in 38%"."""
        c = self.certainty.comparison
        return verdict_text(verdict=c.verdict, shares=c.verdict_shares) if c else ""

    @property
    def settled_share(self) -> str:
        return probability_text(SETTLED_SHARE)

    @property
    def verdict_draws(self) -> int:
        return VERDICT_DRAWS

    @property
    def rate_query(self) -> str:
        """The rating page's query that starts rating exactly the pairs that decide this."""
        query = f"mode=decide&champion={self.pair.champion.pk}"
        challenger = self.pair.challenger.pk if self.pair.challenger else self.pair.champion.pk
        return f"{query}&challenger={challenger}"


def panel(
    *, collection: Collection, ranker: Ranker, champion_id: object = None, challenger_id: object = None
) -> Panel | None:
    """The dashboard panel for the ranker (None without versions or test questions)."""
    pair = version_pair(ranker=ranker, champion_id=champion_id, challenger_id=challenger_id)
    if pair is None:
        return None
    result = certainty(collection=collection, pair=pair)
    if result.headline is None and not result.unavailable:
        return None
    versions = list(RankerVersion.objects.filter(ranker=ranker).order_by("-created_at", "-id"))
    return Panel(result, pair, versions)
