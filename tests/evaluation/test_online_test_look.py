"""A look at an online test carries running totals on (evaluation.selectors.online): the same figures as
read from the whole log, while the log grows, gets a late click, an earlier import and an erasure."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.core.cache import cache

from evaluation.selectors.online import checkpoint_key, online_test_result, online_test_result_from_scratch
from tests.online_support import START, online_log, online_ranker, online_test_logged
from ubi.records import event_check
from ubi.services import ubi_client_erase, ubi_records_import

pytestmark = pytest.mark.django_db


def _figures(result) -> str:
    """Counts, Δ, interval, p, verdict and stop rule as one text (NaN equals NaN in it)."""
    return repr((result.counts, result.verdict, result.stop_due))


def _outcomes(rng, n: int) -> list[int | None]:
    # A challenger a little better: wins 0.3, losses 0.2, ties 0.1, no click 0.4.
    return [[1, -1, 0, None][i] for i in rng.choice(4, size=n, p=[0.3, 0.2, 0.1, 0.4])]


def _click(test, n: int, hit: str, minutes: int = 30) -> None:
    ubi_records_import(
        queries=[],
        events=[
            event_check(
                {
                    "action_name": "click",
                    "query_id": f"t{test.pk}-q{n}",
                    "timestamp": (START + timedelta(seconds=n, minutes=minutes)).isoformat(),
                    "event_attributes": {
                        "position": {"ordinal": 1 if hit == "a" else 2},
                        "object": {"object_id": hit},
                    },
                }
            )
        ],
    )


def test_online_test_look_equals_the_whole_log_read_while_the_log_changes(collection):
    rng = np.random.default_rng(36)
    _, _, challenger = online_ranker(collection)
    outcomes = _outcomes(rng, 300)
    outcomes[10] = None  # clicked late below
    test = online_test_logged(challenger, outcomes)
    # Query n is served at START + n s; settled (folded) are those served 600 s before "now".
    now = START + timedelta(seconds=400)
    key = checkpoint_key(test)
    looks = []

    def look() -> tuple[str, int]:
        looks.append(_figures(online_test_result(test=test, now=now)))
        assert looks[-1] == _figures(online_test_result_from_scratch(test=test))
        return looks[-1], cache.get(key).folded

    assert look()[1] == 0  # nothing served 600 s before: all open
    now = START + timedelta(seconds=900)
    assert look()[1] == 300
    online_log(test, _outcomes(rng, 200), first=300)
    assert look()[1] == 300
    now = START + timedelta(seconds=1200)
    assert look()[1] == 500
    _click(test, 10, "b")  # a late click on a folded query: read again from scratch, once
    assert look()[1] == 500
    _click(test, 10, "b", minutes=31)  # a late repeat click: the outcome stays, the checkpoint too
    assert look()[1] == 500
    online_log(test, [1] * 5, first=-5)  # an import of queries served before the boundary
    assert look()[1] == 505
    online_log(test, [-1] * 20, first=500, client_id="erase-me")
    assert look()[1] == 525
    ubi_client_erase(client_id="erase-me")  # rows deleted: the log's epoch moves
    now = START + timedelta(seconds=3600)
    assert look()[1] == 505
    # The late click, the import and the new queries moved the figures (the repeat click not); the erasure
    # took them back.
    assert looks[4] != looks[3] and looks[5] == looks[4] and looks[6] != looks[5] and looks[7] != looks[6]
    assert looks[8] == looks[6]


def test_online_test_look_reads_only_the_queries_after_its_checkpoint(collection):
    rng = np.random.default_rng(7)
    _, _, challenger = online_ranker(collection)
    test = online_test_logged(challenger, _outcomes(rng, 400))
    now = START + timedelta(days=1)
    online_test_result(test=test, now=now)
    online_log(test, [1, -1, 0], first=400)

    result = online_test_result(test=test, now=now)

    checkpoint = cache.get(checkpoint_key(test))
    assert (checkpoint.folded, checkpoint.open) == (403, ())
    assert _figures(result) == _figures(online_test_result_from_scratch(test=test))
