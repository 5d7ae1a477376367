"""What the queue reads of judges (models that rate beside people): the pairs where a judge's grade
is far from people's label, and each judge's least sure grades on pairs no person rated ("Review the
judge", both halves).

Given the caller's ``key`` (as :mod:`.kept` takes it: what moves when answers or questions are deleted),
both are kept per process and brought up to date on each call from the questions whose ratings or labels
changed since (``ratings.selectors.label_changes``): only those questions' ratings and labels are read
again, not every judgment and label of the collection. What is kept:

* each question's disputed pairs, (gap, answer) biggest gap first;
* each judge's *front*: its least certain judgments no person rated, ordered by (certainty, question,
  answer), every one of them up to a bound (at least ``FRONT_KEPT`` when it has as many). A question that
  changed loses its entries and gets back those of its fresh read at or below the bound, so the front
  stays exactly the judgments at or below it; when people's ratings have taken so many that fewer are left
  than a call wants, that judge's front is read again (its least certain judgments ``FRONT_BATCH`` at a
  time, and people's ratings of their questions; rare: people rate the front a page at a time).

The results are equal to a fresh read (``_disputed_read``, ``_uncertain_read``, what runs without a key or
inside a transaction), and a question's answer list left unchanged stays the same list (and the result
the same dict when nothing in it changed), so callers can compare them by identity (:mod:`.untouched`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from django.db import connection
from django.db.models import F, Q

from corpus.models import Collection
from raters.next_task.task import DISPUTED_SPREAD
from ratings.models import JudgeAccount, Label, Rating
from ratings.selectors import label_changes

# How many of each judge's least certain judgments (pairs no person rated) the queue offers people.
UNCERTAIN_REVIEWED = 20
# Each judge's least certain judgments no person rated, kept per process (read again when fewer are left
# than a call wants).
FRONT_KEPT = 500
# A front is read this many judgments at a time.
FRONT_BATCH = 1_000
# More questions changed than this since the last call: everything is read again.
CHANGED_READ_MAX = 2_000

Entry = tuple[float, int, int]  # (certainty, question id, answer id) of one judgment


def _judges(collection: Collection) -> tuple[int, ...]:
    """The collection's judges' rater ids, oldest judge first."""
    return tuple(
        JudgeAccount.objects.filter(collection=collection).order_by("pk").values_list("user_id", flat=True)
    )


def _grouped(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    result: dict[int, list[int]] = defaultdict(list)
    for q, a in pairs:
        result[q].append(a)
    return dict(result)


def _people_labels(rows) -> dict[tuple[int, int], int]:
    """{pair: gain} of the labels with at least one person's rating among ``rows`` (a Label queryset)."""
    return {
        (q, a): gain
        for q, a, gain in rows.filter(rater_count__gt=F("judge_count")).values_list(
            "question_id", "answer_id", "gain"
        )
    }


def _gaps(
    labels: dict[tuple[int, int], int], judged: Iterable[tuple[int, int, int]]
) -> dict[int, tuple[tuple[int, int], ...]]:
    """{question id: ((gap, answer id), ...) biggest gap first, then answer id} of the judgments
    (question, answer, stars) DISPUTED_SPREAD or more from people's label (the largest gap of a pair's
    judges)."""
    gaps: dict[tuple[int, int], int] = {}
    for q, a, stars in judged:
        gain = labels.get((q, a))
        if gain is not None and abs(stars - gain) >= DISPUTED_SPREAD:
            gaps[(q, a)] = max(gaps.get((q, a), 0), abs(stars - gain))
    by_question: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (q, a), gap in gaps.items():
        by_question[q].append((-gap, a))
    return {q: tuple((-gap, a) for gap, a in sorted(items)) for q, items in by_question.items()}


def _disputed(gaps: dict[int, tuple[tuple[int, int], ...]]) -> dict[int, list[int]]:
    """``judge_disputed_pairs``'s dict from each question's gaps: the questions in the order of their
    biggest gap (then question id), as the pairs sorted by (−gap, question, answer) first meet them."""
    order = sorted(gaps, key=lambda q: (-gaps[q][0][0], q))
    return {q: [a for _, a in gaps[q]] for q in order}


def _judged_labels(
    collection: Collection, judges: tuple[int, ...]
) -> tuple[dict[tuple[int, int], int], list[tuple[int, int, int]]]:
    """({pair: gain} of the labels with a person's rating, the judges' (question, answer, stars) on those
    pairs), read from the labels: each one's judgments found by the pair index, not every judgment read."""
    labels = Label.objects.filter(question__collection=collection, rater_count__gt=F("judge_count"))
    rows = labels.filter(
        question__ratings__rater_id__in=judges, question__ratings__answer_id=F("answer_id")
    ).values_list("question_id", "answer_id", "gain", "question__ratings__stars")
    gains: dict[tuple[int, int], int] = {}
    judged: list[tuple[int, int, int]] = []
    for q, a, gain, stars in rows:
        gains[(q, a)] = gain
        judged.append((q, a, stars))
    return gains, judged


def _disputed_read(collection: Collection, judges: tuple[int, ...]) -> dict[int, list[int]]:
    """{question id: answer ids} where a judge's stars are DISPUTED_SPREAD or more from people's label,
    read from scratch."""
    if not judges:  # no judge: no label read
        return {}
    labels = _people_labels(Label.objects.filter(question__collection=collection))
    judged = Rating.objects.filter(question__collection=collection, rater_id__in=judges).values_list(
        "question_id", "answer_id", "stars"
    )
    return _disputed(_gaps(labels, judged))


def _front_read(judge: int, judges: tuple[int, ...], size: int) -> tuple[Entry, ...]:
    """The judge's ``size`` least certain judgments on pairs no person rated, in (certainty, question,
    answer) order: its judgments in that order a batch at a time (a judge rates only its own collection's
    pairs), and people's ratings of the batch's questions, until ``size`` are found."""
    found: list[Entry] = []
    batch = FRONT_BATCH
    after: Q | None = None
    while len(found) < size:
        rows = Rating.objects.filter(rater_id=judge, certainty__isnull=False)
        if after is not None:
            rows = rows.filter(after)
        page = [
            (float(certainty or 0.0), q, a)  # never null (filtered)
            for certainty, q, a in rows.order_by("certainty", "question_id", "answer_id").values_list(
                "certainty", "question_id", "answer_id"
            )[:batch]
        ]
        by_people = set(
            Rating.objects.filter(question_id__in={q for _, q, _ in page})
            .exclude(rater_id__in=judges)
            .values_list("question_id", "answer_id")
        )
        found += [entry for entry in page if (entry[1], entry[2]) not in by_people]
        if len(page) < batch:
            break
        c, q, a = page[-1]
        after = (
            Q(certainty__gt=c)
            | Q(certainty=c, question_id__gt=q)
            | Q(certainty=c, question_id=q, answer_id__gt=a)
        )
    return tuple(found[:size])


def _uncertain(
    judges: tuple[int, ...], fronts: dict[int, tuple[Entry, ...]], per_judge: int
) -> dict[int, list[int]]:
    """``judge_uncertain_pairs``'s dict from each judge's least certain judgments no person rated (at
    least ``per_judge`` of them, or all): judge by judge, each one's first ``per_judge``."""
    chosen: dict[tuple[int, int], None] = {}
    for judge in judges:
        for _, q, a in fronts[judge][:per_judge]:
            chosen.setdefault((q, a), None)
    return _grouped(chosen)


def _uncertain_read(collection: Collection, judges: tuple[int, ...], per_judge: int) -> dict[int, list[int]]:
    """{question id: answer ids}: each judge's ``per_judge`` least certain judgments on pairs no person
    rated, read from scratch."""
    fronts = {judge: _front_read(judge, judges, per_judge) for judge in judges}
    return _uncertain(judges, fronts, per_judge)


@dataclass(frozen=True)
class _Front:
    """One judge's kept least certain judgments no person rated: every one at or below ``bound``
    (``bound`` None: every one it has)."""

    entries: tuple[Entry, ...]
    bound: Entry | None


@dataclass(frozen=True)
class _Kept:
    key: tuple
    position: int
    gaps: dict[int, tuple[tuple[int, int], ...]]
    fronts: dict[int, _Front]
    disputed: dict[int, list[int]]
    fronts_version: int = 0  # moves whenever a front's entries change
    # per_judge -> (the fronts' version it was made from, the result), made when first asked
    uncertain: dict[int, tuple[int, dict[int, list[int]]]] = field(default_factory=dict)


# Per process: collection id -> its judges' kept pairs.
_KEPT: dict[int, _Kept] = {}


def _front_full(judge: int, judges: tuple[int, ...], size: int) -> _Front:
    """The judge's front read again: its ``size`` least certain judgments no person rated."""
    entries = _front_read(judge, judges, size + 1)
    if len(entries) <= size:
        return _Front(entries, None)
    return _Front(entries[:size], entries[size - 1])


def _same_lists(new: dict[int, list[int]], old: dict[int, list[int]] | None) -> dict[int, list[int]]:
    """``new``, with each question's list that equals ``old``'s replaced by that very list; ``old`` itself
    when equal."""
    if old is None:
        return new
    if new == old:
        return old
    return {q: old[q] if old.get(q) == answers else answers for q, answers in new.items()}


def _kept(collection: Collection, judges: tuple[int, ...], key: tuple) -> _Kept:
    """The collection's judges' kept pairs, brought up to date from the questions changed since."""
    key = (collection.pk, collection.slug, collection.created_at, judges, *key)
    kept = _KEPT.get(collection.pk)
    if kept is not None and kept.key != key:
        kept = None
    changed, position = label_changes(
        collection_id=collection.pk, since=kept.position if kept is not None else None
    )
    if kept is not None and not changed:
        if position != kept.position:
            kept = _KEPT[collection.pk] = replace(kept, position=position)
        return kept
    if kept is None or len(changed) > CHANGED_READ_MAX:
        gaps = _gaps(*_judged_labels(collection, judges))
        fronts = {judge: _front_full(judge, judges, FRONT_KEPT) for judge in judges}
        previous = _KEPT.get(collection.pk)
        if previous is None:
            kept = _KEPT[collection.pk] = _Kept(key, position, gaps, fronts, _disputed(gaps))
        else:  # the lists read again unchanged stay the same lists
            disputed = _same_lists(_disputed(gaps), previous.disputed)
            kept = _KEPT[collection.pk] = replace(
                previous,
                key=key,
                position=position,
                gaps=gaps,
                fronts=fronts,
                disputed=disputed,
                fronts_version=previous.fronts_version + 1,
            )
        return kept
    # Only the changed questions: their ratings (every rater's) and their labels.
    touched = set(changed)
    rows = list(
        Rating.objects.filter(question_id__in=changed).values_list(
            "question_id", "answer_id", "rater_id", "stars", "certainty"
        )
    )
    judge_set = set(judges)
    by_people = {(q, a) for q, a, rater, _, _ in rows if rater not in judge_set}
    labels = _people_labels(Label.objects.filter(question_id__in=changed))
    fresh = _gaps(labels, ((q, a, stars) for q, a, rater, stars, _ in rows if rater in judge_set))
    gaps = {q: items for q, items in kept.gaps.items() if q not in touched}
    gaps.update(fresh)
    fronts = dict(kept.fronts)
    for judge in judges:
        front = kept.fronts[judge]
        entries = [entry for entry in front.entries if entry[1] not in touched]
        for q, a, rater, _, certainty in rows:
            if rater != judge or certainty is None or (q, a) in by_people:
                continue
            if front.bound is None or (certainty, q, a) <= front.bound:
                entries.append((certainty, q, a))
        entries.sort()
        fronts[judge] = _Front(tuple(entries), front.bound)
    disputed = kept.disputed
    if any(kept.gaps.get(q) != gaps.get(q) for q in touched):
        disputed = _same_lists(_disputed(gaps), kept.disputed)
    version = kept.fronts_version
    if any(fronts[judge].entries != kept.fronts[judge].entries for judge in judges):
        version += 1
    kept = _KEPT[collection.pk] = replace(
        kept, position=position, gaps=gaps, fronts=fronts, disputed=disputed, fronts_version=version
    )
    return kept


def judge_disputed_pairs(*, collection: Collection, key: tuple | None = None) -> dict[int, list[int]]:
    """{question id: answer ids} where a judge's stars are DISPUTED_SPREAD or more from people's label
    (a label with at least one person's rating), biggest gap first.

    With ``key`` (what moves when answers or questions are deleted, as :mod:`.kept` takes it), kept per
    process and read again only where ratings changed (see the module); without, read from scratch."""
    judges = _judges(collection)
    if not judges:  # no judge: nothing else read
        return {}
    if key is None or connection.in_atomic_block:
        return _disputed_read(collection, judges)
    return _kept(collection, judges, key).disputed


def judge_uncertain_pairs(
    *, collection: Collection, per_judge: int = UNCERTAIN_REVIEWED, key: tuple | None = None
) -> dict[int, list[int]]:
    """{question id: answer ids}: each judge's ``per_judge`` least certain judgments (``Rating.certainty``,
    smallest first, then pair ids; judgments without a certainty left out) on pairs no person rated.

    Certainties are compared within one judge only: each kind measures them on its own scale. ``key`` as
    for ``judge_disputed_pairs``."""
    judges = _judges(collection)
    if not judges:
        return {}
    if key is None or connection.in_atomic_block:
        return _uncertain_read(collection, judges, per_judge)
    return _uncertain_kept(collection, judges, _kept(collection, judges, key), per_judge)


def judge_pairs(*, collection: Collection, key: tuple) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """(``judge_disputed_pairs``, ``judge_uncertain_pairs`` with ``UNCERTAIN_REVIEWED``) kept for ``key``,
    with one read of the judges and of the changes for both."""
    judges = _judges(collection)
    if not judges:
        return {}, {}
    if connection.in_atomic_block:
        return _disputed_read(collection, judges), _uncertain_read(collection, judges, UNCERTAIN_REVIEWED)
    kept = _kept(collection, judges, key)
    return kept.disputed, _uncertain_kept(collection, judges, kept, UNCERTAIN_REVIEWED)


def _uncertain_kept(
    collection: Collection, judges: tuple[int, ...], kept: _Kept, per_judge: int
) -> dict[int, list[int]]:
    """``judge_uncertain_pairs`` from the kept fronts: made again only when a front changed, and a
    judge's front read again when fewer than ``per_judge`` of its kept judgments are left."""
    made, previous = kept.uncertain.get(per_judge, (None, None))
    if previous is not None and made == kept.fronts_version:
        return previous
    fronts = dict(kept.fronts)
    version = kept.fronts_version
    for judge in judges:
        front = fronts[judge]
        if front.bound is not None and len(front.entries) < per_judge:  # people rated the rest
            fronts[judge] = _front_full(judge, judges, max(FRONT_KEPT, per_judge))
            version = kept.fronts_version + 1
    result = _same_lists(_uncertain(judges, {j: f.entries for j, f in fronts.items()}, per_judge), previous)
    uncertain = {**kept.uncertain, per_judge: (version, result)}
    _KEPT[collection.pk] = replace(kept, fronts=fronts, fronts_version=version, uncertain=uncertain)
    return result
