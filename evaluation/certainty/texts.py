"""The sentences the pages show about certainty: how many ratings would settle it, and the verdict
once every answer is rated (the dashboard's panel and the Rankers pages)."""

from __future__ import annotations

from evaluation.numbers import probability as probability_text
from evaluation.uncertainty import VERDICTS


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
