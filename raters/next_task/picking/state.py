"""One rater's state of a collection, as the queue reads it: the served table, the questions, the labels
and the rater's rated answers, skips, the judges' pairs and the latest evaluation's top k, loaded in a
handful of queries; what does not change between calls is kept per process."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User

from corpus.models import Collection, Question
from raters.next_task.budget import is_overlap_question
from raters.next_task.judge_reads import judge_pairs
from raters.next_task.kept import Labels, Mine, labels_and_mine
from raters.next_task.pool import top_k
from raters.next_task.table import served
from ratings.models import Skip


@dataclass
class RunResult:
    top: list[int]  # answer ids in the run's top k (answers the collection knows)
    ndcg: float | None


@dataclass
class State:
    """Everything the queue needs about one collection and one rater, loaded in a handful of queries."""

    collection: Collection
    rater_id: int
    k: int
    questions: dict[int, tuple[str, str]]  # id -> (external id, split)
    candidates: dict[int, list[int]]
    labels: Labels  # question -> answer -> (rater count, disagreement)
    mine: Mine  # question -> the answers the rater rated
    skipped: set[int]
    run: dict[int, RunResult] = field(default_factory=dict)
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


# Per process: collection id -> ((table key, questions), {question id: RunResult}) of the served table.
_RUNS: dict[int, tuple[tuple, dict[int, RunResult]]] = {}


def load(collection: Collection, rater: User) -> State:
    table = served(collection=collection)
    questions = _questions(collection, table.questions_version)
    # Kept per process and brought up to date from the questions changed since (not every label read);
    # the key moves when answers or questions are deleted (their labels and ratings go without a mark).
    key = (table.state.get("rank"), table.questions_version)
    labels, mine = labels_and_mine(collection=collection, rater_id=rater.pk, key=key)
    skipped = set(
        Skip.objects.filter(rater=rater, question__collection=collection).values_list(
            "question_id", flat=True
        )
    )
    k = top_k(collection=collection)
    state = State(
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
    state.judge_disputed, state.judge_uncertain = judge_pairs(collection=collection, key=key)
    # The latest evaluation's top k, as answer ids: resolved by the table's job, not here (that needed a map
    # of every answer's external id on every call).
    cached = _RUNS.get(collection.pk)
    if cached is None or cached[0] != (table.key, table.questions_version):
        runs = {
            q: RunResult(top=top, ndcg=ndcg) for q, (top, ndcg) in table.run_top.items() if q in questions
        }
        cached = _RUNS[collection.pk] = ((table.key, table.questions_version), runs)
    state.run = cached[1]
    return state
