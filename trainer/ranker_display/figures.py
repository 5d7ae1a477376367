"""Figures in sentences: a difference with its interval and p-value, a comparison of two versions, the
shares of their top k rated, a duration, a share. Figures as :mod:`evaluation.numbers` writes them
everywhere (NDCG 0.412, differences +0.041 and −0.012, "p = 0.004" or "p < 0.001"); durations in seconds
or minutes."""

from __future__ import annotations

from evaluation import measures
from evaluation.numbers import figure, interval, number, p_text, percent, signed

# The rankers pages' older name for the signed difference (tests/trainer/test_ranker_display.py uses it).
signed_text = signed


def ci_text(ci_low: object, ci_high: object) -> str:
    """95% CI +0.012 to +0.070; "" when the bounds show the same (two versions that rank alike)."""
    return f"95% CI {interval(ci_low, ci_high)}" if signed(ci_low) != signed(ci_high) else ""


def difference_text(difference: object, ci_low: object, ci_high: object, p_value: object) -> str:
    """+0.082 (95% CI +0.051 to +0.114, p < 0.001), or +0.000 (p = 1.000) when the interval collapses."""
    ci = ci_text(ci_low, ci_high)
    return f"{signed(difference)} ({ci + ', ' if ci else ''}{p_text(p_value)})"


def comparison_text(
    *,
    k: int,
    challenger: object,
    champion: object,
    difference: object,
    ci_low: object,
    ci_high: object,
    p_value: object,
) -> str:
    """NDCG@10 on rated answers 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004): every
    comparison of two versions uses that measure (``evaluation.measures.NDCG_RATED``), named as such; the
    interval is left out when its bounds show the same (two versions that rank alike: "+0.000, p = 1.000")."""
    ci = ci_text(ci_low, ci_high)
    return (
        f"{measures.name(measures.NDCG_RATED, k)} {figure(challenger)} vs {figure(champion)} "
        f"({signed(difference)}{', ' + ci if ci else ''}, {p_text(p_value)})"
    )


def rated_shares_text(*, k: int, challenger: object, champion: object) -> str:
    """ "with 62% and 55% of their top 10 rated" (challenger's first): how much of what the comparison
    ranked is known; "" when the shares were not recorded (decisions before they were)."""
    if number(challenger) is None or number(champion) is None:
        return ""
    return f"with {percent(challenger)} and {percent(champion)} of their top {k} rated"


def duration_text(seconds: object) -> str:
    """12.3 s, 2 min 5 s, or "" when unknown."""
    x = number(seconds)
    if x is None:
        return ""
    if x < 60:
        return f"{x:.1f} s"
    minutes, rest = divmod(round(x), 60)
    return f"{minutes} min {rest} s"


def percent_text(share: object) -> str:
    """A share 0..1 as a whole percent ("42%"), or "" when there is none."""
    return "" if number(share) is None else percent(share)
