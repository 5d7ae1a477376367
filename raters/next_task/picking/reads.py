"""What the queue's state tells besides the pick: the next pairs in its order (``queue_pairs``, the API's
queue and a judging run's "queue" selection), the task of a question opened directly, and the rater's
home page overview, each without assessing every question or counting every label on every call."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from django.contrib.auth.models import User

from corpus.models import Collection, Question
from raters.next_task.kept import Labels
from raters.next_task.picking.assess import assess, dedupe
from raters.next_task.picking.pick import offered_count, ranked
from raters.next_task.picking.state import State, load
from raters.next_task.reasons import REASON_ALL_RATED, REASON_NOT_NEEDED, REASON_SKIPPED
from raters.next_task.task import Task, shuffled


@dataclass
class Overview:
    """A rater's view of a collection, as shown on their home page."""

    pairs_total: int
    pairs_rated: int
    questions_waiting: int
    my_ratings: int


def queue_pairs_with_reasons(
    *, collection: Collection, rater: User, limit: int
) -> list[tuple[int, int, str]]:
    """The next ``limit`` (question id, answer id, reason) the queue would give ``rater``, in its order:
    the questions ``next_task`` would pick one after another (the first is its pick now), each one's
    answers in candidate order (not shuffled), with the reason the rating page shows for the question."""
    pairs: list[tuple[int, int, str]] = []
    for _, question_id, reason, to_show in ranked(load(collection, rater), pairs=limit):
        for answer_id in to_show:
            pairs.append((question_id, answer_id, reason))
            if len(pairs) >= limit:
                return pairs
    return pairs


def queue_pairs(*, collection: Collection, rater: User, limit: int) -> list[tuple[int, int]]:
    """The next ``limit`` (question id, answer id) pairs the queue would give ``rater``, in its order
    (the question's answers in candidate order, not shuffled): what a judge works through."""
    return [(q, a) for q, a, _ in queue_pairs_with_reasons(collection=collection, rater=rater, limit=limit)]


def task_for_question(*, collection: Collection, rater: User, question: Question) -> Task:
    """The task for a question the rater opened directly (a link, a reload after the task expired).

    Shows what the rater has not rated yet; if that is nothing, every candidate with their ratings so
    they can review them.
    """
    state = load(collection, rater)
    priority, _, reason, to_show = assess(state, question.pk)
    if question.pk in state.skipped:
        priority, reason = None, REASON_SKIPPED
    if not to_show:
        pool = dedupe(
            state.candidates.get(question.pk, []),
            state.run[question.pk].top if question.pk in state.run else [],
            state.mine.get(question.pk, ()),
        )
        to_show = pool
        reason = reason or REASON_ALL_RATED
    elif priority is None:
        reason = reason or REASON_NOT_NEEDED
    return Task(question.pk, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question.pk))


@dataclass
class _Pairs:
    """A collection's pairs the queue knows (candidates, labelled pairs, the evaluation's top k), counted
    per question for one served table: ``known`` {question id: (pairs known, pairs labelled)} and their
    sums, brought up to date for the questions whose labels are not the very dicts counted (:mod:`.kept`
    replaces a question's labels only when they changed)."""

    key: tuple
    known: dict[int, tuple[int, int]] = field(default_factory=dict)
    total: int = 0
    labelled: int = 0
    synced: Labels | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _count(self, state: State, question_id: int) -> None:
        labels = state.labels.get(question_id, {})
        pairs = set(state.candidates.get(question_id, ()))
        pairs.update(labels)
        run = state.run.get(question_id)
        if run is not None:
            pairs.update(run.top)
        old_total, old_labelled = self.known.pop(question_id, (0, 0))
        if pairs:
            self.known[question_id] = (len(pairs), len(labels))
        self.total += len(pairs) - old_total
        self.labelled += len(labels) - old_labelled

    def sync(self, state: State) -> None:
        synced = self.synced
        if synced is state.labels:
            return
        if synced is None:
            for question_id in {*state.candidates, *state.labels, *state.run}:
                self._count(state, question_id)
        else:
            changed = {q for q, labels in state.labels.items() if synced.get(q) is not labels}
            changed.update(q for q in synced if q not in state.labels)
            for question_id in changed:
                self._count(state, question_id)
        self.synced = state.labels


# Per process: collection id -> its pairs counted.
_PAIRS: dict[int, _Pairs] = {}


def _pairs(state: State) -> tuple[int, int]:
    """(pairs the queue knows: candidates plus every labelled pair plus the evaluation's top k; pairs with
    a label), kept per process for the served table."""
    c = state.collection
    key = (c.pk, c.slug, c.created_at, state.table_key)
    kept = _PAIRS.get(c.pk)
    if kept is None or kept.key != key:
        kept = _PAIRS[c.pk] = _Pairs(key)
    with kept.lock:
        kept.sync(state)
        return kept.total, kept.labelled


def rater_overview(*, collection: Collection, rater: User) -> Overview:
    """Pairs the queue knows (candidates plus every rated pair), how many have a label, and questions
    still waiting for this rater."""
    state = load(collection, rater)
    total, labelled = _pairs(state)
    return Overview(
        pairs_total=total,
        pairs_rated=labelled,
        questions_waiting=offered_count(state),
        my_ratings=sum(len(answers) for answers in state.mine.values()),
    )
