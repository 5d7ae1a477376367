"""An online test's figures from the UBI log: what the version page, the dashboard, the API and the
``online`` promotion policies read (issue 36 §2).

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
any page could have looked, so a verdict once reached stays.

A look (``online_test_result``) carries running totals on from the last one (``Checkpoint``), so its
cost follows what was stored since and the last ``ONLINE_TEST_SETTLE_SECONDS`` of the test, not the log;
``online_test_result_from_scratch`` reads the whole log, and the two give the same figures (tests,
bench/bench_online_look.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db.models import Max, Q
from django.utils import timezone
from numpy.typing import NDArray

from evaluation.numbers import count, interval, signed
from evaluation.online import (
    Credit,
    OnlineVerdict,
    Tally,
    credit_clicks,
    online_verdict,
    sequential_p_values,
    tally,
)
from evaluation.online.verdict import BETTER, KEEP_GOING, WORSE
from rankers.models import OnlineTest, OnlineTestState
from ubi.models import UbiEvent, UbiQuery
from ubi.selectors import log_epoch

CLICK = "click"
NOT_CLICKED = -2  # an outcome: the query did not take part (no credited click)


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


Served = tuple[int, datetime, str, list, dict]  # pk, timestamp, query_id, hit ids, query_attributes
_SERVED_FIELDS = ("pk", "timestamp", "query_id", "query_response_hit_ids", "query_attributes")


def _credit(served: list[Served], clicks) -> Credit:
    """Each served query's credit, in the order of ``served``, from its click events (query_id,
    object_id, ordinal)."""
    index = {row[2]: i for i, row in enumerate(served)}
    rows: list[tuple[int, int, int]] = []
    for query_id, object_id, ordinal in clicks:
        q = index.get(query_id)
        if q is None:
            continue
        hits, attributes = served[q][3], served[q][4]
        teams = attributes.get("teams") or []
        position = hits.index(object_id) if object_id and object_id in hits else (ordinal or 0) - 1
        if 0 <= position < len(teams):
            rows.append((q, position, int(teams[position])))
    columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return credit_clicks(columns[:, 0], columns[:, 1], columns[:, 2], n_queries=len(served))


def _outcomes(served: list[Served], clicks) -> NDArray[np.int8]:
    """Each served query's outcome, in the order of ``served``: +1 the challenger won, −1 lost, 0 a tie,
    ``NOT_CLICKED`` without a credited click."""
    credit = _credit(served, clicks)
    return np.where(credit.clicked, credit.outcome, NOT_CLICKED).astype(np.int8)


def _result(test: OnlineTest, counts: Tally, p_floor: float) -> OnlineTestResult:
    verdict = online_verdict(counts, p_floor=p_floor, max_queries=test.max_queries)
    stop_due = ""
    if test.state == OnlineTestState.RUNNING:
        if test.max_queries is not None and counts.impressions >= test.max_queries:
            stop_due = f"the stop rule's {test.max_queries:,} interleaved queries were served"
        elif test.stop_on_verdict and verdict.verdict != KEEP_GOING:
            stop_due = f"the stop rule: a verdict was reached ({verdict.verdict})"
    return OnlineTestResult(test=test, counts=counts, verdict=verdict, stop_due=stop_due)


def online_test_result_from_scratch(*, test: OnlineTest) -> OnlineTestResult:
    """The test's counts, Δ with its interval and its verdict, read from the whole log as stored now (what
    ``online_test_result`` must equal)."""
    served = list(interleaved_queries(test=test).order_by("timestamp", "id").values_list(*_SERVED_FIELDS))
    clicks = UbiEvent.objects.filter(
        action_name=CLICK, query_id__in=interleaved_queries(test=test).values("query_id")
    ).values_list("query_id", "object_id", "ordinal")
    credit = _credit(served, clicks.iterator(chunk_size=5000))
    p_floor = float(sequential_p_values(credit.outcome)[-1]) if len(served) else 1.0
    return _result(test, tally(credit), p_floor)


# --- a look that costs what is new, not the whole log ------------------------------------------------

CHECKPOINT_KEY = "online-test-tally:1:{test_id}:{started}"
CHECKPOINT_SECONDS = 30 * 24 * 3600


def checkpoint_key(test: OnlineTest) -> str:
    """The test's checkpoint in the cache; its start time too, so a database made again under the same
    cache never meets an older test's totals."""
    return CHECKPOINT_KEY.format(test_id=test.pk, started=test.started_at.timestamp())


@dataclass(frozen=True)
class Checkpoint:
    """What earlier looks read of a test's log (in the cache, one per test).

    The ``folded`` queries, those at or before ``boundary`` (timestamp, pk) in the served order, are
    summed up: their wins, losses and ties, and ``p_floor``, the smallest 1/Λ after any of them. ``open``:
    the pks of the test's queries after the boundary read by the last look, served too recently for their
    clicks to be all in; each look reads them again with their clicks. ``query_mark`` and ``event_mark``:
    the largest query and event pk at that look; ``epoch``: the log's deletions marker then
    (``ubi.selectors.log_epoch``)."""

    epoch: str
    query_mark: int = 0
    event_mark: int = 0
    boundary: tuple[datetime, int] | None = None
    folded: int = 0
    wins: int = 0
    losses: int = 0
    ties: int = 0
    p_floor: float = 1.0
    open: tuple[int, ...] = ()


def _of_test(attributes: dict, test: OnlineTest) -> bool:
    """Whether a query's attributes make it one of the test's interleaved queries (as
    ``interleaved_queries`` selects them in SQL)."""
    test_id = attributes.get("online_test")
    return (
        isinstance(test_id, int | float) and not isinstance(test_id, bool) and test_id == test.pk
    ) and "teams" in attributes


def _late_clicks_change(test: OnlineTest, kept: Checkpoint, event_mark: int) -> bool:
    """Whether clicks stored since ``kept`` (by pk) on queries it folded change one's outcome: its clicks
    then and now (the new click events by pk, their queries by query_id). A repeat click, or one more on
    the team that won, changes nothing."""
    assert kept.boundary is not None
    late = UbiEvent.objects.filter(pk__gt=kept.event_mark, pk__lte=event_mark, action_name=CLICK)
    folded: list[Served] = [
        row
        for row in UbiQuery.objects.filter(query_id__in=late.values("query_id")).values_list(*_SERVED_FIELDS)
        if _of_test(row[4], test) and (row[1], row[0]) <= kept.boundary
    ]
    if not folded:
        return False
    clicks = list(
        UbiEvent.objects.filter(
            action_name=CLICK, query_id__in=[row[2] for row in folded], pk__lte=event_mark
        ).values_list("pk", "query_id", "object_id", "ordinal")
    )
    then = _outcomes(folded, (click[1:] for click in clicks if click[0] <= kept.event_mark))
    return bool((then != _outcomes(folded, (click[1:] for click in clicks))).any())


def _read_on(
    test: OnlineTest, kept: Checkpoint, *, epoch: str, now: datetime
) -> tuple[Tally, float, Checkpoint]:
    """The test's tally and smallest p-value from ``kept`` and what the log holds beyond it, and the
    checkpoint to keep now. From scratch (an empty checkpoint) when the log changed at or before
    ``kept``'s boundary: a query with an earlier place stored since, or a click stored since that changes
    a folded query's outcome."""
    query_mark = UbiQuery.objects.aggregate(last=Max("pk"))["last"] or 0
    event_mark = UbiEvent.objects.aggregate(last=Max("pk"))["last"] or 0
    if query_mark < kept.query_mark or event_mark < kept.event_mark:  # the log went back (a restore)
        kept = Checkpoint(epoch=epoch)
    if kept.query_mark == 0:  # from scratch: the test's partial index
        served = list(
            interleaved_queries(test=test)
            .filter(pk__lte=query_mark)
            .order_by("timestamp", "id")
            .values_list(*_SERVED_FIELDS)
        )
    else:
        # By pk only (the test's own rows sorted out here): PostgreSQL would otherwise take the test's
        # partial index and filter every row of the test, the cost that must not grow.
        rows = UbiQuery.objects.filter(
            Q(pk__in=kept.open) | Q(pk__gt=kept.query_mark), pk__lte=query_mark
        ).values_list(*_SERVED_FIELDS)
        served = sorted((row for row in rows if _of_test(row[4], test)), key=lambda row: (row[1], row[0]))
    if kept.boundary is not None:
        changed = bool(served) and (served[0][1], served[0][0]) <= kept.boundary
        if not changed:
            changed = _late_clicks_change(test, kept, event_mark)
        if changed:
            return _read_on(test, Checkpoint(epoch=epoch), epoch=epoch, now=now)
    tail_ids = (
        interleaved_queries(test=test).filter(pk__lte=query_mark).values("query_id")
        if kept.query_mark == 0
        else [row[2] for row in served]
    )
    clicks = UbiEvent.objects.filter(action_name=CLICK, query_id__in=tail_ids).values_list(
        "query_id", "object_id", "ordinal"
    )
    outcome = _outcomes(served, clicks.iterator(chunk_size=5000))
    p_path = sequential_p_values(outcome, start=(kept.wins, kept.losses))
    # won[i]: wins among the first i tail queries (won[0] = 0), and so on.
    won, lost, tied = (np.concatenate([[0], np.cumsum(outcome == o)]) for o in (1, -1, 0))
    n = len(served)
    counts = Tally(
        impressions=kept.folded + n,
        queries_with_clicks=kept.wins + kept.losses + kept.ties + int(won[n] + lost[n] + tied[n]),
        wins=kept.wins + int(won[n]),
        losses=kept.losses + int(lost[n]),
        ties=kept.ties + int(tied[n]),
    )
    p_floor = min(kept.p_floor, float(p_path[-1])) if n else kept.p_floor
    # Fold in the queries served before the settling time (the first k: ``served`` is in order).
    settled = now - timedelta(seconds=settings.ONLINE_TEST_SETTLE_SECONDS)
    k = sum(1 for row in served if row[1] < settled)
    kept = replace(kept, epoch=epoch, query_mark=query_mark, event_mark=event_mark)
    if not k:
        return counts, p_floor, replace(kept, open=tuple(row[0] for row in served))
    return (
        counts,
        p_floor,
        replace(
            kept,
            boundary=(served[k - 1][1], served[k - 1][0]),
            folded=kept.folded + k,
            wins=kept.wins + int(won[k]),
            losses=kept.losses + int(lost[k]),
            ties=kept.ties + int(tied[k]),
            p_floor=min(kept.p_floor, float(p_path[k - 1])),
            open=tuple(row[0] for row in served[k:]),
        ),
    )


def online_test_result(*, test: OnlineTest, now: datetime | None = None) -> OnlineTestResult:
    """The test's counts, Δ with its interval and its verdict: the figures
    ``online_test_result_from_scratch`` gives from the log as stored now, at a cost that does not grow
    with the log.

    Running totals per test (a ``Checkpoint`` in the cache) are carried on: a look reads the test's
    queries stored since the last look and those served in the last ``ONLINE_TEST_SETTLE_SECONDS`` (their
    clicks may still come), with their clicks, and folds the settled ones in. The served order matters
    only to the always-valid p-value (the minimum over a look after every query): the checkpoint keeps
    that minimum and the wins and losses it was reached with, and ``sequential_p_values(start=...)`` goes
    on from there. What changes the folded queries starts again from scratch once (and the checkpoint is
    rebuilt): a query stored since with an earlier place (an import), a click stored since that changes a
    folded query's outcome (later than the settling time), rows deleted (retention, erasure: ``ubi.selectors.log_epoch``),
    the cache lost.

    A limit: an event whose transaction commits after a look has read past its id (two writers'
    transactions crossing) and that clicks a query folded at that look is not seen. A ``ranker_server``
    has one writer, which stores its batches one after the other.
    """
    now = now or timezone.now()
    epoch = log_epoch()
    key = checkpoint_key(test)
    kept = cache.get(key)
    if not isinstance(kept, Checkpoint) or kept.epoch != epoch:
        kept = Checkpoint(epoch=epoch)
    counts, p_floor, checkpoint = _read_on(test, kept, epoch=epoch, now=now)
    if checkpoint != kept:
        cache.set(key, checkpoint, CHECKPOINT_SECONDS)
    return _result(test, counts, p_floor)


def latest_online_test(*, version) -> OnlineTest | None:
    """The version's latest online test as challenger (running or stopped), or None."""
    return (
        OnlineTest.objects.select_related("champion", "challenger", "started_by", "stopped_by")
        .filter(challenger=version)
        .order_by("-started_at", "-id")
        .first()
    )


def version_online_tests(*, version) -> list[OnlineTest]:
    """Every online test of the version as challenger, latest first."""
    return list(
        OnlineTest.objects.select_related("champion", "challenger", "started_by", "stopped_by")
        .filter(challenger=version)
        .order_by("-started_at", "-id")
    )


@dataclass(frozen=True)
class RunningTestNote:
    """A collection's running online test as the dashboard's "What to do next" says it."""

    test: OnlineTest
    ranker_id: int
    sentence: str  # its verdict now, with the figures behind it


def running_test_note(*, test: OnlineTest) -> RunningTestNote:
    """The running ``test`` (its challenger's ranker selected) in one sentence: which challenger against
    which champion, since when, and its verdict now."""
    result = online_test_result(test=test)
    c, v = result.counts, result.verdict
    seen = f"{count(c.impressions)} interleaved quer{'y' if c.impressions == 1 else 'ies'}"
    if c.queries_with_clicks:
        figures = (
            f"{seen}, {count(c.queries_with_clicks)} with clicks, online Δ {signed(v.delta)} "
            f"(95% CI {interval(v.low, v.high)})"
        )
        now = f"{result.sentence}{'; the stop rule ends it within a minute' if result.stop_due else ''}"
    else:
        figures, now = seen, "none yet, no interleaved query has a click"
    sentence = (
        f"{test.challenger.ranker.name} {test.challenger.label} against {test.champion.label} on "
        f"{test.share}% of the live queries since {timezone.localtime(test.started_at):%Y-%m-%d %H:%M}; "
        f"its verdict now: {now} ({figures})."
    )
    return RunningTestNote(test=test, ranker_id=test.challenger.ranker_id, sentence=sentence)
