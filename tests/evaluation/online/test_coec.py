"""COEC as the Search Relevance Workbench computes it: rank CTRs, best rank, date range, its quirks."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from evaluation.online.coec import NO_RANK, coec


def _events(rows):
    action, ordinal, query, obj = zip(*rows, strict=True)
    return {
        "action": list(action),
        "ordinal": list(ordinal),
        "user_query": list(query),
        "object_id": list(obj),
    }


# Two searches for "laptop" and one for "phone", ordinals from 0 as in SRW's sample data; max_rank = 3.
LOG = [
    ("impression", 0, "laptop", "A"),
    ("impression", 1, "laptop", "B"),
    ("impression", 2, "laptop", "C"),
    ("click", 0, "laptop", "A"),
    ("impression", 0, "laptop", "B"),
    ("impression", 1, "laptop", "A"),
    ("impression", 2, "laptop", "C"),
    ("click", 1, "laptop", "A"),
    ("impression", 0, "phone", "X"),
    ("impression", 1, "phone", "A"),
    ("Click", 0, "phone", "X"),  # action names compare case-insensitively
    ("impression", 3, "phone", "D"),  # ordinal = max_rank: kept, but rank 3 has no expected CTR
    ("impression", 4, "phone", "E"),  # ordinal > max_rank: left out
    ("hover", 1, "phone", "F"),  # another action: a pair with nothing counted
]


def test_coec_by_hand_uses_each_pairs_best_rank():
    result = coec(**_events(LOG), max_rank=3)

    # CTR per rank over all queries: rank 0: 2 clicks / 3 impressions; rank 1: 1 / 3; rank 2: 0 / 2.
    assert result.expected_ctr.tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])
    rows = {
        (q, o): (c, n, r, v)
        for q, o, c, n, r, v in zip(
            result.user_query,
            result.object_id,
            result.clicks,
            result.impressions,
            result.best_rank,
            result.value,
            strict=True,
        )
    }
    # ("laptop", A): 2 clicks, shown at ranks 0 and 1. SRW: 2 / (ctr(0) * 2) = 1.5; expected clicks per
    # impression would have been 2/3 + 1/3 = 1, so COEC 2.0: the best rank is what SRW uses.
    assert rows["laptop", "A"] == (2, 2, 0, pytest.approx(1.5))
    assert rows["laptop", "B"] == (0, 2, 0, 0.0)
    assert rows["laptop", "C"] == (0, 2, 2, 0.0)  # ctr(2) = 0: no expected clicks, COEC 0
    assert rows["phone", "X"] == (1, 1, 0, pytest.approx(1.5))  # 1 / (2/3 * 1)
    assert rows["phone", "A"] == (0, 1, 1, 0.0)
    assert rows["phone", "D"] == (0, 1, 3, 0.0)
    assert rows["phone", "F"] == (0, 0, NO_RANK, 0.0)
    assert ("phone", "E") not in rows
    assert list(result.user_query) == ["laptop"] * 3 + ["phone"] * 4  # sorted by query, then answer


def test_coec_with_ordinals_from_one_shifts_the_rank_table():
    shifted = [(a, o + 1, q, d) for a, o, q, d in LOG if o + 1 <= 3]

    as_srw = coec(**_events(shifted), max_rank=3)  # SRW on a log counted from 1: ranks 0, 1, 2
    meant = coec(**_events(shifted), max_rank=3, first_ordinal=1)

    assert as_srw.expected_ctr.tolist() == pytest.approx([0.0, 2 / 3, 1 / 3])
    assert meant.expected_ctr.tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])
    laptop_a = list(zip(meant.user_query, meant.object_id, strict=True)).index(("laptop", "A"))
    assert meant.value[laptop_a] == pytest.approx(1.5)
    assert as_srw.value[laptop_a] == pytest.approx(2 / (2 / 3 * 2))  # best rank 1 is SRW's rank-1 slot: 2/3


def test_coec_keeps_the_max_rank_most_frequent_ordinals_per_action_as_the_aggregation_does():
    # max_rank = 2 keeps ordinals 0, 1, 2; clicks at 0 (3), 2 (2) and 1 (1): the terms aggregation of
    # size 2 returns ordinals 0 and 2, so rank 1's click is lost and ctr(1) = 0.
    rows = [("impression", r, "q", f"d{r}") for r in (0, 1, 2) for _ in range(4)]
    rows += [("click", 0, "q", "d0")] * 3 + [("click", 2, "q", "d2")] * 2 + [("click", 1, "q", "d1")]

    result = coec(**_events(rows), max_rank=2)

    assert result.expected_ctr.tolist() == [0.75, 0.0]


def test_coec_date_range_includes_both_whole_days_in_utc():
    rows = [("impression", 0, "q", "a"), ("click", 0, "q", "a")] * 4
    stamps = np.array(
        [
            "2026-11-01T23:59:59.999",  # the day before: out
            "2026-11-01T23:59:59.999",
            "2026-11-02T00:00:00.000",  # start day: in
            "2026-11-02T00:00:00.000",
            "2026-11-05T23:59:59.999",  # end day, last millisecond: in
            "2026-11-05T12:00:00.000",
            "2026-11-06T00:00:00.000",  # the day after: out
            "2026-11-06T00:00:00.000",
        ],
        dtype="datetime64[ms]",
    )
    events = _events(rows)

    result = coec(
        **events, max_rank=1, timestamp=stamps, start_date=dt.date(2026, 11, 2), end_date=dt.date(2026, 11, 5)
    )

    # Kept: indices 2-5 = impression, click, impression, click.
    assert (result.clicks.tolist(), result.impressions.tolist()) == ([2], [2])
    with pytest.raises(ValueError, match="timestamps"):
        coec(**events, max_rank=1, start_date=dt.date(2026, 11, 2))


def test_coec_skips_events_without_a_user_query_but_counts_them_in_the_rank_ctr():
    rows = [
        ("impression", 0, None, "a"),
        ("click", 0, None, "a"),
        ("impression", 0, "q", "b"),
        ("impression", 0, "q", "b"),
    ]

    result = coec(**_events(rows), max_rank=1)

    assert result.expected_ctr.tolist() == [1 / 3]
    assert list(result.object_id) == ["b"]
    assert result.value.tolist() == [0.0]
