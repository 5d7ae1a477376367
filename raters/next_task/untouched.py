"""The assessments of a collection's questions as any rater who never rated them sees them, kept per
process in pick order, so a pick walks only the front of the order instead of every question.

An assessment (``picking.assess`` with no ratings of the rater's own) depends on the question's labels,
its judges' pairs, and on what the caller's ``key`` holds (the queue's settings, the table): the kept
assessments are emptied when the key moves, and a question's assessment is redone when its labels or its
judges' pairs changed (``sync``: both are kept per process, :mod:`.kept` and :mod:`.judge_reads`, and a
question's labels or pairs left unchanged are the same dict or list, so the changed ones are found by
identity). The rater's own spread key, the last part of
every sort key, is not kept: ``front`` gives the questions tied at the least (priority, key without the
spread), and the caller takes the least spread among them.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from math import inf

# (priority, sort key, reason, answers to show) of one question, as ``picking.assess`` returns it; the
# sort key's last part is the rater's spread key.
Assessment = tuple[int | None, tuple, str, list[int]]


@dataclass
class Untouched:
    """One collection's kept assessments: ``entries`` {question id: (priority, key without the spread,
    reason, answers to show)}, ``order`` the ((priority, key without the spread), question id) of those
    the queue offers (a priority and answers to show), sorted."""

    key: tuple
    entries: dict[int, tuple[int | None, tuple, str, list[int]]] = field(default_factory=dict)
    order: list[tuple] = field(default_factory=list)
    synced: tuple | None = None  # the (labels, judges' disputed, judges' uncertain) assessed with
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _set(self, question_id: int, assessment: Assessment) -> None:
        old = self.entries.get(question_id)
        if old is not None and old[0] is not None and old[3]:
            entry = ((old[0], old[1]), question_id)
            at = bisect_left(self.order, entry)
            if at < len(self.order) and self.order[at] == entry:
                del self.order[at]
        priority, key, reason, to_show = assessment
        self.entries[question_id] = (priority, key[:-1], reason, to_show)
        if priority is not None and to_show:
            insort(self.order, ((priority, key[:-1]), question_id))

    def sync(
        self, by_question: tuple[dict, ...], questions: Iterable[int], assess: Callable[[int], Assessment]
    ) -> None:
        """Bring the entries up to date with ``by_question`` (the labels, the judges' disputed and
        uncertain pairs, each {question id: ...}): every question assessed the first time, then only those
        whose entry in one of them is not the very object they were assessed with."""
        synced = self.synced
        if synced is not None and all(new is old for new, old in zip(by_question, synced, strict=True)):
            return
        if synced is None:
            for question_id in questions:
                self._set(question_id, assess(question_id))
        else:
            changed: set[int] = set()
            for new, old in zip(by_question, synced, strict=True):
                if new is not old:
                    changed.update(q for q, value in new.items() if old.get(q) is not value)
                    changed.update(q for q in old if q not in new)
            for question_id in sorted(changed):
                if question_id in self.entries:
                    self._set(question_id, assess(question_id))
        self.synced = by_question

    def front(
        self,
        *,
        leave: Container[int],
        split: str,
        splits: dict[int, tuple[str, str]],
        best: tuple | None,
    ) -> tuple[tuple | None, list[int]]:
        """(the least (priority, key without the spread) among ``best`` and the offered questions not in
        ``leave`` (and of ``split``, when given), the questions of the order tied there). ``best``:
        the least rank of the questions the caller assessed itself (None: none).

        Walks the order to the first question left in, then takes its rank's whole run of ties at once
        (found by bisection), so a pick reads the front of the order, not every question."""
        order = self.order
        at = 0
        while at < len(order):
            rank, question_id = order[at]
            if best is not None and rank > best:
                return best, []
            left_out = question_id in leave or (split and splits[question_id][1] != split)
            if not left_out:
                break
            at += 1
        else:
            return best, []
        end = bisect_left(order, (rank, inf), lo=at)
        if split:
            group = [q for _, q in order[at:end] if q not in leave and splits[q][1] == split]
        else:
            group = [q for _, q in order[at:end] if q not in leave]
        if best is None or rank < best:
            return rank, group
        return best, group  # rank == best: tied with the caller's own


# Per process: collection id -> its kept assessments.
_KEPT: dict[int, Untouched] = {}


def untouched(collection_id: int, key: tuple) -> Untouched:
    """The collection's kept assessments for ``key``, emptied when the key moved."""
    kept = _KEPT.get(collection_id)
    if kept is None or kept.key != key:
        kept = _KEPT[collection_id] = Untouched(key)
    return kept
