"""The sentences the pages show about certainty: how many ratings would settle it, the verdict once
every answer is rated (the dashboard's panel and the Rankers pages), and the panel's answer in plain
words, the one a reader sees before opening the figures (bounds, probabilities, the tests behind them)."""

from __future__ import annotations

from evaluation.numbers import probability as probability_text
from evaluation.uncertainty import VERDICTS

IMPROVEMENT, WITHIN_NOISE, DROP = VERDICTS


def settle_text(n: int) -> str:
    """ "About N more ratings would settle this" (or that none would)."""
    if n == 0:
        return "More ratings would not change this much: it is settled as far as ratings go."
    return f"About {n:,} more rating{'s' if n != 1 else ''} would settle this."


def verdict_text(*, verdict: str, shares: tuple[float, ...]) -> str:
    """ "Real improvement, settled" or "Not settled yet: real improvement in 62%, within noise in 38%"."""
    if verdict:
        return f"{verdict.capitalize()}, settled"
    parts = [
        f"{name} in {probability_text(share)}"
        for name, share in sorted(zip(VERDICTS, shares, strict=True), key=lambda v: -v[1])
        if share > 0
    ]
    return "Not settled yet: " + ", ".join(parts)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def headline_plain_text(*, version: str, unrated: int, k: int, ratings_to_settle: int) -> str:
    """Whether the headline may still move as answers get rated, in words (``version``: "version v1")."""
    if ratings_to_settle:
        return f"{_sentence(version)}'s score may still change as answers get rated. " + settle_text(
            ratings_to_settle
        )
    if unrated:
        return f"More ratings would hardly change {version}'s score: it is as sure as ratings can make it."
    return f"Every answer in the top {k} of {version} is rated, so more ratings will not change its score."


def comparison_plain_text(*, champion: str, challenger: str, verdict: str, ratings_to_settle: int) -> str:
    """Whether the challenger is better, in words: the verdict once every answer is rated when it is
    settled, else that we cannot tell yet and how many ratings would tell."""
    if verdict == IMPROVEMENT:
        return f"{_sentence(challenger)} is better than {champion}, and more ratings would not change that."
    if verdict == DROP:
        return f"{_sentence(challenger)} is worse than {champion}, and more ratings would not change that."
    if verdict == WITHIN_NOISE:
        return (
            f"{_sentence(challenger)} and {champion} score about the same (the difference could be chance), "
            "and more ratings would not change that."
        )
    if ratings_to_settle:
        rating = "answer" if ratings_to_settle == 1 else "answers"
        return (
            f"We can't tell yet whether {challenger} is better than {champion}: "
            f"rate about {ratings_to_settle:,} more {rating} to find out."
        )
    return (
        f"We can't tell whether {challenger} is better than {champion}, and more ratings would hardly help: "
        "the difference is too small for this many test questions."
    )
