"""What a promotion decision keeps of the comparison (``RankerVersion.comparison["predicted"]``)."""

from __future__ import annotations

import math

from .estimates import ComparisonCertainty


def comparison_json(c: ComparisonCertainty) -> dict:
    """The figures a decision keeps (``RankerVersion.comparison["predicted"]``); NaN becomes None, which
    PostgreSQL's jsonb cannot hold otherwise."""

    def finite(value: float) -> float | None:
        return None if math.isnan(value) else float(value)

    return {
        "probability": finite(c.probability),
        "expected_difference": finite(c.expected_difference),
        "verdict": c.verdict,
        "verdict_shares": [float(share) for share in c.verdict_shares],
        "ratings_to_settle": c.ratings_to_settle,
    }
