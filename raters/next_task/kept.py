"""A collection's labels and each rater's rated pairs, kept per process and brought up to date on each
call by reading only the questions whose ratings or labels changed since (``ratings.selectors
.label_changes``: the marks the one label recomputation writes), not every label of the collection.

What is kept is exactly what a fresh read would give: the position is taken before anything it keeps
is read, every write of ratings or labels marks its questions, and what changes labels without a write
of them (answers or questions deleted) moves the ``key`` the caller passes (the table's ranking state
and the questions' marker), which starts the keeping again. Inside a transaction (``atomic``) nothing
is kept or used: what it reads may yet be rolled back.

Each update makes new dicts rather than changing the kept ones, so a thread still reading the
previous ones (a threaded web worker) never sees them change under it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection

from corpus.models import Collection
from ratings.models import Label, Rating
from ratings.selectors import label_changes

# question id -> answer id -> (rater count, disagreement)
Labels = dict[int, dict[int, tuple[int, int]]]
# question id -> the answer ids the rater rated
Mine = dict[int, frozenset[int]]

# More questions changed than this since the last call: everything is read again (one query, not chunks).
CHANGED_READ_MAX = 2_000
# Raters' rated pairs kept per process at most (then forgotten, and read again when they ask).
RATERS_KEPT = 5_000


@dataclass(frozen=True)
class _KeptLabels:
    key: tuple
    position: int
    labels: Labels


@dataclass(frozen=True)
class _KeptMine:
    key: tuple
    position: int
    mine: Mine


# Per process: collection id -> its labels; (collection id, rater id) -> the rater's rated pairs.
_LABELS: dict[int, _KeptLabels] = {}
_MINE: dict[tuple[int, int], _KeptMine] = {}


def _labels_read(collection_id: int, questions: Iterable[int] | None = None) -> Labels:
    rows = Label.objects.filter(question__collection_id=collection_id)
    if questions is not None:
        rows = Label.objects.filter(question_id__in=list(questions))
    labels: Labels = defaultdict(dict)
    for q, a, count, spread in rows.values_list("question_id", "answer_id", "rater_count", "disagreement"):
        labels[q][a] = (count, spread)
    return dict(labels)


def _mine_read(collection_id: int, rater_id: int, questions: Iterable[int] | None = None) -> Mine:
    rows = Rating.objects.filter(rater_id=rater_id, question__collection_id=collection_id)
    if questions is not None:
        rows = Rating.objects.filter(rater_id=rater_id, question_id__in=list(questions))
    mine: dict[int, set[int]] = defaultdict(set)
    for q, a in rows.values_list("question_id", "answer_id"):
        mine[q].add(a)
    return {q: frozenset(answers) for q, answers in mine.items()}


def labels_and_mine(*, collection: Collection, rater_id: int, key: tuple) -> tuple[Labels, Mine]:
    """({question id: {answer id: (rater count, disagreement)}} of the collection's labels, {question id:
    the answer ids the rater rated}), as they stand now; kept while ``key`` stays equal.

    Per call: one indexed read of the questions changed since (the older of the two positions kept), and
    when some did, their labels and the rater's ratings of them; a question's labels and the rater's
    answers of it left unchanged stay the same dict and set (callers may compare by identity), the labels
    also when everything is read again."""
    if connection.in_atomic_block:
        return _labels_read(collection.pk), _mine_read(collection.pk, rater_id)
    key = (collection.pk, collection.slug, collection.created_at, *key)
    kept_labels = _LABELS.get(collection.pk)
    kept_mine = _MINE.get((collection.pk, rater_id))
    if kept_labels is not None and kept_labels.key != key:
        kept_labels = None
    if kept_mine is not None and kept_mine.key != key:
        kept_mine = None
    positions = [kept.position for kept in (kept_labels, kept_mine) if kept is not None]
    changed, position = label_changes(collection_id=collection.pk, since=min(positions, default=None))
    touched = set(changed)
    many = len(changed) > CHANGED_READ_MAX
    if kept_labels is None or many:
        labels = _labels_read(collection.pk)
        previous = _LABELS.get(collection.pk)
        if previous is not None:  # a question's labels read again unchanged stay the same dict
            for q, answers in labels.items():
                if previous.labels.get(q) == answers:
                    labels[q] = previous.labels[q]
    elif changed:
        labels = {q: answers for q, answers in kept_labels.labels.items() if q not in touched}
        labels.update(_labels_read(collection.pk, changed))
    else:
        labels = kept_labels.labels
    if kept_mine is None or many:
        mine = _mine_read(collection.pk, rater_id)
    elif changed:
        mine = {q: answers for q, answers in kept_mine.mine.items() if q not in touched}
        mine.update(_mine_read(collection.pk, rater_id, changed))
    else:
        mine = kept_mine.mine
    _LABELS[collection.pk] = _KeptLabels(key, position, labels)
    if len(_MINE) >= RATERS_KEPT:
        _MINE.clear()
    _MINE[(collection.pk, rater_id)] = _KeptMine(key, position, mine)
    return labels, mine
