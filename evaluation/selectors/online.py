"""An online test's figures from the UBI log: what the version page, the API and the ``online`` promotion
policies read (issue 36 §2).

The interleaved queries are the UBI queries ``ranker_server`` logged with ``query_attributes.online_test``
= the test's id and each hit's team in ``query_attributes.teams`` (−1 champion, +1 challenger, 0 nobody).
A click event (``action_name`` "click") on one of them credits the team of the hit it names: by
``event_attributes.object.object_id`` when the served list holds it, else by
``event_attributes.position.ordinal`` (1 = first hit). Then (``evaluation.online``)::

    impressions          = interleaved queries served
    queries with clicks  = those whose clicks credit a team = wins + losses + ties
    Δ                    = (wins + ½ ties) / (wins + losses + ties) − ½     (the challenger's side)

with its always-valid 95% interval and the mixture-SPRT verdict. The always-valid p-value is the minimum
over a look after every query, in the order the queries were served (``sequential_p_values``): the most
any page could have looked, so a verdict once reached stays. Three queries whatever the test's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import Q

from evaluation.online import OnlineVerdict, Tally, credit_clicks, online_verdict, sequential_p_values, tally
from evaluation.online.verdict import BETTER, KEEP_GOING, WORSE
from rankers.models import OnlineTest, OnlineTestState
from ubi.models import UbiEvent, UbiQuery

CLICK = "click"


@dataclass(frozen=True)
class OnlineTestResult:
    test: OnlineTest
    counts: Tally
    verdict: OnlineVerdict
    stop_due: str  # why the stop rule says the running test should stop now ("" while it should go on)

    @property
    def significant(self) -> bool:
        return self.verdict.verdict in (BETTER, WORSE)

    @property
    def sentence(self) -> str:
        """The verdict as the page says it: "challenger better", ..., "keep going: about 1,200 more
        queries"."""
        v = self.verdict
        if v.verdict == KEEP_GOING and v.more_queries is not None:
            return f"{KEEP_GOING}: about {v.more_queries:,} more queries"
        return v.verdict


def interleaved_queries(*, test: OnlineTest):
    # has_key "online_test" too: the partial index on the test's id (ubi.models) is used only then.
    return UbiQuery.objects.filter(
        Q(query_attributes__has_key="online_test"),
        Q(query_attributes__has_key="teams"),
        query_attributes__online_test=test.pk,
    )


def online_test_result(*, test: OnlineTest) -> OnlineTestResult:
    """The test's counts, Δ with its interval and its verdict, from the log as stored now."""
    served = list(
        interleaved_queries(test=test)
        .order_by("timestamp", "id")
        .values_list("query_id", "query_response_hit_ids", "query_attributes")
    )
    index = {query_id: i for i, (query_id, _, _) in enumerate(served)}
    clicks = UbiEvent.objects.filter(
        action_name=CLICK, query_id__in=interleaved_queries(test=test).values("query_id")
    ).values_list("query_id", "object_id", "ordinal")
    rows: list[tuple[int, int, int]] = []
    for query_id, object_id, ordinal in clicks.iterator(chunk_size=5000):
        q = index.get(query_id)
        if q is None:
            continue
        _, hits, attributes = served[q]
        teams = attributes.get("teams") or []
        position = hits.index(object_id) if object_id and object_id in hits else (ordinal or 0) - 1
        if 0 <= position < len(teams):
            rows.append((q, position, int(teams[position])))
    columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
    credit = credit_clicks(columns[:, 0], columns[:, 1], columns[:, 2], n_queries=len(served))
    counts = tally(credit)
    p_floor = float(sequential_p_values(credit.outcome)[-1]) if len(served) else 1.0
    verdict = online_verdict(counts, p_floor=p_floor, max_queries=test.max_queries)
    stop_due = ""
    if test.state == OnlineTestState.RUNNING:
        if test.max_queries is not None and counts.impressions >= test.max_queries:
            stop_due = f"the stop rule's {test.max_queries:,} interleaved queries were served"
        elif test.stop_on_verdict and verdict.verdict != KEEP_GOING:
            stop_due = f"the stop rule: a verdict was reached ({verdict.verdict})"
    return OnlineTestResult(test=test, counts=counts, verdict=verdict, stop_due=stop_due)


def latest_online_test(*, version) -> OnlineTest | None:
    """The version's latest online test as challenger (running or stopped), or None."""
    return (
        OnlineTest.objects.select_related("champion", "challenger", "started_by", "stopped_by")
        .filter(challenger=version)
        .order_by("-started_at", "-id")
        .first()
    )
