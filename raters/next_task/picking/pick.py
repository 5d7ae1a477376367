"""The pick (``next_task``) and the queue's order walked from its front (``ranked``, ``offered_count``),
without assessing every question again on every call.

A question the rater never rated nor skipped is assessed as it is for any such rater, except the rater's
own spread key, the last part of every sort key: those assessments are kept per process in pick order
(:mod:`raters.next_task.untouched`), redone only for the questions whose labels or judges' pairs changed.
The rater's own questions are assessed with their ratings, kept per rater while their labels, ratings and
judges' pairs stay the same objects (``_own``). The queue's order is the least (priority, sort key) first:
the least (priority, key without the spread) first, from the rater's own and the front of the kept order,
then the spread, computed only among the questions tied there.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterable
from math import inf

from django.contrib.auth.models import User

from corpus.models import Collection
from raters.next_task.picking.assess import assess, spread_key
from raters.next_task.picking.state import State, load
from raters.next_task.task import Task, shuffled
from raters.next_task.untouched import Untouched, untouched

# Per process: rater id -> {question id: ``spread_key``}, a pure function kept (at most this many a rater).
_SPREADS: dict[int, dict[int, bytes]] = {}
_SPREADS_KEPT = 200_000


# Per process: (collection id, rater id) -> (the kept assessments' key, {question id: (its labels, the
# rater's answers of it, its judges' disputed and uncertain pairs, the assessment)}) of the questions the
# rater rated (at most this many raters).
_OWN: dict[tuple[int, int], tuple[tuple, dict[int, tuple]]] = {}
_OWN_KEPT = 5_000

# (rank: (priority, sort key without the spread), spread key, question id, reason, answers to show)
Ranked = tuple[tuple, bytes, int, str, list[int]]


def _key(state: State) -> tuple:
    """What every kept assessment depends on besides a question's labels and judges' pairs."""
    c = state.collection
    return (c.pk, c.slug, c.created_at, c.rating_budget, c.target_raters, c.overlap_target_raters,
            c.overlap_fraction, state.k, state.table_key)  # fmt: skip


def _own(state: State, key: tuple, excluded: set[int], split: str) -> list[Ranked]:
    """The rater's own questions (those they rated) that the queue offers them, not skipped nor
    ``excluded`` (and of ``split``, when given), unordered; their assessments kept per rater (an entry
    serves while the question's labels, the rater's answers of it and its judges' pairs are the very
    objects it was made with: :mod:`.kept` and :mod:`.judge_reads` replace them only when they changed)."""
    kept = _OWN.get((state.collection.pk, state.rater_id))
    if kept is None or kept[0] != key:
        if len(_OWN) >= _OWN_KEPT:
            _OWN.clear()
        kept = _OWN[(state.collection.pk, state.rater_id)] = (key, {})
    own_kept = kept[1]
    own: list[Ranked] = []
    for question_id, mine in state.mine.items():
        if question_id not in state.questions or question_id in state.skipped or question_id in excluded:
            continue
        if split and state.questions[question_id][1] != split:
            continue
        labels = state.labels.get(question_id)
        disputed = state.judge_disputed.get(question_id)
        uncertain = state.judge_uncertain.get(question_id)
        hit = own_kept.get(question_id)
        if (
            hit is None
            or hit[0] is not labels
            or hit[1] is not mine
            or hit[2] is not disputed
            or (hit[3] is not uncertain)
        ):
            hit = own_kept[question_id] = (labels, mine, disputed, uncertain, assess(state, question_id))
        priority, sort_key, reason, to_show = hit[4]
        if priority is not None and to_show:
            own.append(((priority, sort_key[:-1]), sort_key[-1], question_id, reason, to_show))
    return own


def _sync(kept: Untouched, state: State) -> None:
    """Bring the collection's kept assessments up to date with ``state``; call with their lock held."""
    free = State(**{**state.__dict__, "mine": {}})
    kept.sync(
        (state.labels, state.judge_disputed, state.judge_uncertain),
        state.questions,
        lambda question_id: assess(free, question_id),
    )


def _spreads(rater_id: int) -> dict[int, bytes]:
    spreads = _SPREADS.setdefault(rater_id, {})
    if len(spreads) > _SPREADS_KEPT:
        spreads.clear()
    return spreads


def _pick(state: State, exclude: Iterable[int], split: str) -> tuple[int, int, str, list[int]] | None:
    """The first of the queue's order (``ranked(state, exclude, split)[0]``): the least (priority, key
    without the spread) from the rater's own and the front of the kept order, then the least spread among
    the questions tied there."""
    excluded = set(exclude)
    key = _key(state)
    own = _own(state, key, excluded, split)
    best = min((rank for rank, *_ in own), default=None)
    spreads = _spreads(state.rater_id)
    group: list[tuple[bytes, int, str, list[int]]] = []
    kept = untouched(state.collection.pk, key)
    with kept.lock:
        _sync(kept, state)
        best, front = kept.front(
            leave=state.mine.keys() | state.skipped | excluded, split=split, splits=state.questions, best=best
        )
        if front:
            for q in front:
                if q not in spreads:
                    spreads[q] = spread_key(state.rater_id, q)
            question_id = min(front, key=spreads.__getitem__)
            _, _, reason, to_show = kept.entries[question_id]
            group.append((spreads[question_id], question_id, reason, to_show))
    if best is None:
        return None
    group += [(spread, q, reason, to_show) for rank, spread, q, reason, to_show in own if rank == best]
    _, question_id, reason, to_show = min(group, key=lambda item: item[0])
    return best[0], question_id, reason, to_show


def ranked(state: State, *, pairs: int) -> list[tuple[int, int, str, list[int]]]:
    """The questions the queue offers the rater, in its order ((priority, question id, reason, answers to
    show), as ``next_task`` would pick them one after another), from the front until their answers to show
    number ``pairs`` or more (or every one).

    Walks the kept order a run of ties at a time, merged with the rater's own questions; a run's spread
    keys are computed only for the runs walked, and only its first questions are sorted out of it."""
    key = _key(state)
    own = sorted(_own(state, key, set(), ""), key=lambda item: (item[0], item[1]))
    leave = state.mine.keys() | state.skipped
    spreads = _spreads(state.rater_id)
    result: list[tuple[int, int, str, list[int]]] = []
    shown = 0
    at_own = 0
    kept = untouched(state.collection.pk, key)
    with kept.lock:
        _sync(kept, state)
        order, entries = kept.order, kept.entries
        at = 0
        while shown < pairs:
            while at < len(order) and order[at][1] in leave:
                at += 1
            rank: tuple | None = None
            tied: list[int] = []
            if at < len(order):
                rank = order[at][0]
                end = bisect_left(order, (rank, inf), lo=at)
                tied = [q for _, q in order[at:end] if q not in leave]
                at = end
            elif at_own >= len(own):
                break
            # The rater's own questions ranked before this run of ties (after the order's end: the rest).
            while shown < pairs and at_own < len(own) and (rank is None or own[at_own][0] < rank):
                (priority, _), _, q, reason, to_show = own[at_own]
                result.append((priority, q, reason, to_show))
                shown += len(to_show)
                at_own += 1
            if rank is None or shown >= pairs:
                continue
            # The run, merged by spread key with the rater's own questions tied to it.
            run: list[Ranked] = []
            while at_own < len(own) and own[at_own][0] == rank:
                run.append(own[at_own])
                at_own += 1
            for q in tied:
                if q not in spreads:
                    spreads[q] = spread_key(state.rater_id, q)
            # Each question shows one answer at least: no more of the run is needed than pairs are missing.
            firsts = heapq.nsmallest(pairs - shown, tied, key=spreads.__getitem__)
            run += [(rank, spreads[q], q, entries[q][2], entries[q][3]) for q in firsts]
            for _, _, q, reason, to_show in sorted(run, key=lambda item: item[1]):
                if shown >= pairs:
                    break
                result.append((rank[0], q, reason, to_show))
                shown += len(to_show)
    return result


def offered_count(state: State) -> int:
    """How many questions the queue offers the rater (``len(ranked(state, pairs=∞))``): the kept order's
    length, less the rater's own and skipped questions in it, plus the rater's own offered."""
    key = _key(state)
    own = _own(state, key, set(), "")
    kept = untouched(state.collection.pk, key)
    with kept.lock:
        _sync(kept, state)
        count = len(kept.order)
        for q in state.mine.keys() | state.skipped:
            entry = kept.entries.get(q)
            if entry is not None and entry[0] is not None and entry[3]:
                count -= 1
    return count + len(own)


def next_task(
    *, collection: Collection, rater: User, exclude: Iterable[int] = (), split: str = ""
) -> Task | None:
    """The most useful question for the rater now, or None when the queue wants nothing more from them.

    ``exclude`` skips questions for this pick only (the rater pressed "next question"); ``split``
    ("train" or "test") keeps to one split, e.g. when a trainer needs more training labels to train.
    """
    picked = _pick(load(collection, rater), exclude, split)
    if picked is None:
        return None
    priority, question_id, reason, to_show = picked
    return Task(question_id, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question_id))
