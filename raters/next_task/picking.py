"""The main queue: the most useful question for a rater now (``next_task``), and what the same state
tells (``task_for_question``, ``queue_pairs``, ``queue_pairs_with_reasons``, ``rater_overview``).

Per rater, a question is offered only while it holds a pair the rater has not rated (and they have not
skipped the question). Questions are ranked by the first of these that applies, and the reason is shown:

1. test questions whose latest evaluation put unlabelled answers in the top k (they make NDCG@k uncertain);
2. pairs with fewer raters than the target (``collection.target_raters``; ``overlap_target_raters`` for a
   deterministic sample of questions used to measure agreement), the least-rated questions first
   (training before test on a tie), so training and test questions fill up together;
3. pairs whose raters disagree by 2 or more stars (a further opinion settles them);
4. pairs where a judge (a model) is 2 or more stars from people, then a judge's least sure grades no
   person rated (:mod:`.judge_reads`);
5. questions with the lowest NDCG@k in the latest evaluation.

A question's pool is its candidates (:mod:`.pool`) within its rating budget (:mod:`.budget`), plus the
pairs the queue wants judged (unlabelled answers of the latest evaluation's top k, labelled pairs short
of raters or disputed). A page shows at most k answers at a time, shuffled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import User

from corpus.models import Collection, Question, Split
from raters.next_task.budget import budgeted, is_overlap_question
from raters.next_task.judge_reads import judge_disputed_pairs, judge_uncertain_pairs
from raters.next_task.kept import Labels, Mine, labels_and_mine
from raters.next_task.pool import top_k
from raters.next_task.reasons import (
    REASON_ALL_RATED,
    REASON_NOT_NEEDED,
    REASON_SKIPPED,
    reason_disagreement,
    reason_few_raters,
    reason_judge_disagreement,
    reason_judge_uncertain,
    reason_low_ndcg,
    reason_unlabelled,
)
from raters.next_task.table import latest_run, served
from raters.next_task.task import (
    DISPUTED_SPREAD,
    PRIORITY_DISAGREEMENT,
    PRIORITY_FEW_RATERS,
    PRIORITY_JUDGE_DISAGREEMENT,
    PRIORITY_JUDGE_UNCERTAIN,
    PRIORITY_LOW_NDCG,
    PRIORITY_UNLABELLED_IN_TEST,
    Task,
    shuffled,
)
from raters.next_task.untouched import untouched
from ratings.models import Skip

__all__ = [
    "Overview",
    "latest_run",
    "next_task",
    "queue_pairs",
    "queue_pairs_with_reasons",
    "rater_overview",
    "task_for_question",
]


@dataclass
class Overview:
    """A rater's view of a collection, as shown on their home page."""

    pairs_total: int
    pairs_rated: int
    questions_waiting: int
    my_ratings: int


def _spread_key(rater_id: int, question_id: int) -> bytes:
    """Orders equally urgent questions differently per rater, so raters working at once rarely collide."""
    return hashlib.sha256(f"spread:{rater_id}:{question_id}".encode()).digest()


@dataclass
class _RunResult:
    top: list[int]  # answer ids in the run's top k (answers the collection knows)
    ndcg: float | None


@dataclass
class _State:
    """Everything the queue needs about one collection and one rater, loaded in a handful of queries."""

    collection: Collection
    rater_id: int
    k: int
    questions: dict[int, tuple[str, str]]  # id -> (external id, split)
    candidates: dict[int, list[int]]
    labels: Labels  # question -> answer -> (rater count, disagreement)
    mine: Mine  # question -> the answers the rater rated
    skipped: set[int]
    run: dict[int, _RunResult] = field(default_factory=dict)
    # question -> answers where a judge's stars are DISPUTED_SPREAD or more from people's label
    judge_disputed: dict[int, list[int]] = field(default_factory=dict)
    # question -> answers among each judge's UNCERTAIN_REVIEWED least certain judgments no person rated
    judge_uncertain: dict[int, list[int]] = field(default_factory=dict)
    table_key: tuple = ()  # the served table's key (``table.Served.key``) and the questions' marker

    def target(self, question_id: int) -> int:
        external_id, _ = self.questions[question_id]
        c = self.collection
        if is_overlap_question(collection_slug=c.slug, external_id=external_id, fraction=c.overlap_fraction):
            return max(c.overlap_target_raters, c.target_raters)
        return c.target_raters

    def is_overlap(self, question_id: int) -> bool:
        return self.target(question_id) > self.collection.target_raters


# Per process: collection id -> ((collection, its questions' change marker), {id: (external id, split)}).
_QUESTIONS: dict[int, tuple[tuple, dict[int, tuple[str, str]]]] = {}


def _questions(collection: Collection, version: int) -> dict[int, tuple[str, str]]:
    """{question id: (external id, split)}, read again only when the questions' change marker moved."""
    key = (collection.pk, collection.slug, collection.created_at, version)
    cached = _QUESTIONS.get(collection.pk)
    if cached is None or cached[0] != key:
        questions = {
            q: (external_id, split)
            for q, external_id, split in Question.objects.filter(collection=collection).values_list(
                "id", "external_id", "split"
            )
        }
        cached = (key, questions)
        _QUESTIONS[collection.pk] = cached
    return cached[1]


# Per process: collection id -> ((table key, questions), {question id: _RunResult}) of the served table.
_RUNS: dict[int, tuple[tuple, dict[int, _RunResult]]] = {}


def _load(collection: Collection, rater: User) -> _State:
    table = served(collection=collection)
    questions = _questions(collection, table.questions_version)
    # Kept per process and brought up to date from the questions changed since (not every label read).
    labels, mine = labels_and_mine(
        collection=collection, rater_id=rater.pk, key=(table.state.get("rank"), table.questions_version)
    )
    skipped = set(
        Skip.objects.filter(rater=rater, question__collection=collection).values_list(
            "question_id", flat=True
        )
    )
    k = top_k(collection=collection)
    state = _State(
        collection=collection,
        rater_id=rater.pk,
        k=k,
        questions=questions,
        candidates=table.table,
        table_key=(table.key, table.questions_version),
        labels=labels,
        mine=mine,
        skipped=skipped,
    )
    state.judge_disputed = judge_disputed_pairs(collection=collection)
    state.judge_uncertain = judge_uncertain_pairs(collection=collection)
    # The latest evaluation's top k, as answer ids: resolved by the table's job, not here (that needed a map
    # of every answer's external id on every call).
    cached = _RUNS.get(collection.pk)
    if cached is None or cached[0] != (table.key, table.questions_version):
        runs = {
            q: _RunResult(top=top, ndcg=ndcg) for q, (top, ndcg) in table.run_top.items() if q in questions
        }
        cached = _RUNS[collection.pk] = ((table.key, table.questions_version), runs)
    state.run = cached[1]
    return state


def _dedupe(*groups: Iterable[int]) -> list[int]:
    seen: dict[int, None] = {}
    for group in groups:
        for a in group:
            seen.setdefault(a, None)
    return list(seen)


def _assess(state: _State, question_id: int) -> tuple[int | None, tuple, str, list[int]]:
    """(priority, sort key within the priority, reason, answers to show) of one question for the rater."""
    external_id, split = state.questions[question_id]
    labels = state.labels.get(question_id, {})
    mine = state.mine.get(question_id, frozenset())
    run = state.run.get(question_id)
    target = state.target(question_id)
    spread_key = _spread_key(state.rater_id, question_id)

    run_top = run.top if run else []
    unlabelled = [a for a in run_top if a not in labels] if split == Split.TEST else []
    short = [a for a, (count, _) in labels.items() if count < target]
    disputed = [a for a, (_, spread) in labels.items() if spread >= DISPUTED_SPREAD]
    uncertain = state.judge_uncertain.get(question_id, [])
    pool = _dedupe(
        budgeted(
            state.candidates.get(question_id, []),
            labels,
            budget=state.collection.rating_budget,
            target=target,
        ),
        run_top,
        short,
        disputed,
        state.judge_disputed.get(question_id, []),
    )
    # A judge's uncertain pair is shown, but it is the review step below that asks for it, not the
    # target number of raters: its reason must say why it is there.
    needs_raters = pool
    pool = _dedupe(pool, uncertain)
    # A page shows at most k answers; the rest of the pool comes on the next visit.
    to_show = [a for a in pool if a not in mine][: state.k]

    k = state.k
    if unlabelled:
        reason = reason_unlabelled(count=len(unlabelled), k=k)
        return PRIORITY_UNLABELLED_IN_TEST, (-len(unlabelled), spread_key), reason, to_show

    needing = [a for a in needs_raters if labels.get(a, (0, 0))[0] < target and a not in mine]
    if needing:
        reason = reason_few_raters(
            count=len(needing), target=target, overlap=state.is_overlap(question_id), split=split
        )
        # The least-rated questions first, whatever their split (training first on a tie): training
        # questions teach, and the test questions are what the champion/challenger gate compares on, so
        # both fill up page by page. Training-first starved the gate: a first training found no rated
        # test question and could not promote a far better version (bench_loop, covidfaq: +0.17).
        spent = sum(count for count, _ in labels.values())
        return PRIORITY_FEW_RATERS, (spent, split != Split.TRAIN, spread_key), reason, to_show

    disputed_open = [a for a in disputed if a not in mine]
    if disputed_open:
        reason = reason_disagreement(count=len(disputed_open))
        return PRIORITY_DISAGREEMENT, (-len(disputed_open), spread_key), reason, to_show

    judged_open = [a for a in state.judge_disputed.get(question_id, []) if a not in mine]
    if judged_open:
        reason = reason_judge_disagreement(count=len(judged_open))
        return PRIORITY_JUDGE_DISAGREEMENT, (-len(judged_open), spread_key), reason, to_show

    uncertain_open = [a for a in uncertain if a not in mine]
    if uncertain_open:
        reason = reason_judge_uncertain(count=len(uncertain_open))
        return PRIORITY_JUDGE_UNCERTAIN, (-len(uncertain_open), spread_key), reason, to_show

    if run is not None and run.ndcg is not None and any(a not in mine for a in run_top):
        reason = reason_low_ndcg(ndcg=run.ndcg, k=k)
        return PRIORITY_LOW_NDCG, (run.ndcg, spread_key), reason, to_show

    return None, (), "", to_show


def _ranked(
    state: _State, exclude: Iterable[int] = (), split: str = ""
) -> list[tuple[int, tuple, int, str, list[int]]]:
    excluded = set(exclude)
    ranked = []
    for question_id, (_, question_split) in state.questions.items():
        if question_id in state.skipped or question_id in excluded:
            continue
        if split and question_split != split:
            continue
        priority, key, reason, to_show = _assess(state, question_id)
        if priority is not None and to_show:
            ranked.append((priority, key, question_id, reason, to_show))
    ranked.sort(key=lambda item: (item[0], item[1]))
    return ranked


# Per process: rater id -> {question id: ``_spread_key``}, a pure function kept (at most this many a rater).
_SPREADS: dict[int, dict[int, bytes]] = {}
_SPREADS_KEPT = 200_000


# Per process: (collection id, rater id) -> (the kept assessments' key, {question id: (its labels, the
# rater's answers of it, the assessment)}) of the questions the rater rated (at most this many raters).
_OWN: dict[tuple[int, int], tuple[tuple, dict[int, tuple]]] = {}
_OWN_KEPT = 5_000


def _own_assessments(collection_id: int, rater_id: int, key: tuple) -> dict[int, tuple]:
    """The rater's own questions' kept assessments, for the same ``key`` as the untouched ones: an entry
    serves while the question's labels and the rater's answers of it are the very objects it was made with
    (``kept``: replaced only when the question's ratings changed)."""
    kept = _OWN.get((collection_id, rater_id))
    if kept is None or kept[0] != key:
        if len(_OWN) >= _OWN_KEPT:
            _OWN.clear()
        kept = _OWN[(collection_id, rater_id)] = (key, {})
    return kept[1]


def _pick(state: _State, exclude: Iterable[int], split: str) -> tuple[int, int, str, list[int]] | None:
    """``_ranked(state, exclude, split)[0]`` without assessing every question again on every call.

    A question the rater never rated nor skipped is assessed as it is for any such rater, except the
    rater's own spread key, the last part of every sort key: those assessments are kept per process in
    pick order (:mod:`.untouched`), redone only for the questions whose labels changed. The rater's own
    questions are assessed with their ratings, kept per rater while their labels and ratings stay
    (``_own_assessments``). The pick is the least (priority, sort key): the least (priority, key without
    the spread) first, from the rater's own and the front of the kept order, then the spread computed
    only among the questions tied there."""
    excluded = set(exclude)
    touched = state.mine.keys()
    c = state.collection
    key = (c.pk, c.slug, c.created_at, c.rating_budget, c.target_raters, c.overlap_target_raters,
           c.overlap_fraction, state.k, state.table_key, state.judge_disputed, state.judge_uncertain)  # fmt: skip
    own_kept = _own_assessments(c.pk, state.rater_id, key)
    best: tuple | None = None
    own: list[tuple[tuple, int, str, list[int], bytes]] = []
    for question_id in touched:
        if question_id not in state.questions or question_id in state.skipped or question_id in excluded:
            continue
        if split and state.questions[question_id][1] != split:
            continue
        labels, mine = state.labels.get(question_id), state.mine[question_id]
        hit = own_kept.get(question_id)
        if hit is None or hit[0] is not labels or hit[1] is not mine:
            hit = own_kept[question_id] = (labels, mine, _assess(state, question_id))
        priority, sort_key, reason, to_show = hit[2]
        if priority is None or not to_show:
            continue
        rank = (priority, sort_key[:-1])
        own.append((rank, question_id, reason, to_show, sort_key[-1]))
        if best is None or rank < best:
            best = rank
    kept = untouched(c.pk, key)
    free = _State(**{**state.__dict__, "mine": {}})
    spreads = _SPREADS.setdefault(state.rater_id, {})
    if len(spreads) > _SPREADS_KEPT:
        spreads.clear()

    group: list[tuple[bytes, int, str, list[int]]] = []
    with kept.lock:
        kept.sync(state.labels, state.questions, lambda question_id: _assess(free, question_id))
        best, front = kept.front(
            leave=touched | state.skipped | excluded, split=split, splits=state.questions, best=best
        )
        if front:
            for q in front:
                if q not in spreads:
                    spreads[q] = _spread_key(state.rater_id, q)
            question_id = min(front, key=spreads.__getitem__)
            _, _, reason, to_show = kept.entries[question_id]
            group.append((spreads[question_id], question_id, reason, to_show))
    if best is None:
        return None
    group += [(spread, q, reason, to_show) for rank, q, reason, to_show, spread in own if rank == best]
    _, question_id, reason, to_show = min(group, key=lambda item: item[0])
    return best[0], question_id, reason, to_show


def next_task(
    *, collection: Collection, rater: User, exclude: Iterable[int] = (), split: str = ""
) -> Task | None:
    """The most useful question for the rater now, or None when the queue wants nothing more from them.

    ``exclude`` skips questions for this pick only (the rater pressed "next question"); ``split``
    ("train" or "test") keeps to one split, e.g. when a trainer needs more training labels to train.
    """
    picked = _pick(_load(collection, rater), exclude, split)
    if picked is None:
        return None
    priority, question_id, reason, to_show = picked
    return Task(question_id, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question_id))


def queue_pairs_with_reasons(
    *, collection: Collection, rater: User, limit: int
) -> list[tuple[int, int, str]]:
    """The next ``limit`` (question id, answer id, reason) the queue would give ``rater``, in its order:
    the questions ``next_task`` would pick one after another (the first is its pick now), each one's
    answers in candidate order (not shuffled), with the reason the rating page shows for the question."""
    pairs: list[tuple[int, int, str]] = []
    for _, _, question_id, reason, to_show in _ranked(_load(collection, rater)):
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
    state = _load(collection, rater)
    priority, _, reason, to_show = _assess(state, question.pk)
    if question.pk in state.skipped:
        priority, reason = None, REASON_SKIPPED
    if not to_show:
        pool = _dedupe(
            state.candidates.get(question.pk, []),
            state.run[question.pk].top if question.pk in state.run else [],
            state.mine.get(question.pk, ()),
        )
        to_show = pool
        reason = reason or REASON_ALL_RATED
    elif priority is None:
        reason = reason or REASON_NOT_NEEDED
    return Task(question.pk, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question.pk))


def rater_overview(*, collection: Collection, rater: User) -> Overview:
    """Pairs the queue knows (candidates plus every rated pair), how many have a label, and questions
    still waiting for this rater."""
    state = _load(collection, rater)
    pairs = {(q, a) for q, answers in state.candidates.items() for a in answers}
    pairs.update((q, a) for q, answers in state.labels.items() for a in answers)
    for q, result in state.run.items():
        pairs.update((q, a) for a in result.top)
    rated = sum(len(answers) for answers in state.labels.values())
    return Overview(
        pairs_total=len(pairs),
        pairs_rated=rated,
        questions_waiting=len(_ranked(state)),
        my_ratings=sum(len(answers) for answers in state.mine.values()),
    )
