"""A fixed rating session the queue's decisions are recorded on (``test_next_task_same_decisions``): a
collection with a builtin ranker (its champion, the bm25 baseline and a learned-fusion challenger pooled),
an evaluation of the champion, then three raters taking turns as the rating page's *Next question* does,
each rating the task's answers with stars from a hash of the pair. What the queue said at each turn is
kept with external ids and usernames, so two runs compare whatever the database's ids."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from django.contrib.auth.models import User

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Split
from corpus.services import collection_create
from evaluation.models import RunTrigger
from evaluation.services import chunk_evaluate, evaluation_start, run_plan
from rankers.models import RankerVersion
from rankers.services import ranker_create
from raters.next_task.picking import next_task, queue_pairs_with_reasons, rater_overview, task_for_question
from ratings.services import rating_record
from trainer.services import collection_import, demo_collection_load

OUTSIDE_ADI = Path(__file__).resolve().parent.parent / "data" / "outside" / "adi"
TURNS = 36
WORKER = "queue-scenario"


def _hash(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(str(p) for p in parts).encode()).digest()[:8], "big")


def _read_tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def demo() -> Collection:
    """The Cranfield demo (1,400 answers, its judgments as ratings), 40 of its questions kept (a hash
    picks them) so the session stays a few seconds."""
    collection = demo_collection_load(slug="queue-demo")
    assert collection is not None
    ids = sorted(
        Question.objects.filter(collection=collection).values_list("external_id", flat=True),
        key=lambda e: _hash("keep", e),
    )
    Question.objects.filter(collection=collection, external_id__in=ids[40:]).delete()
    return collection


def outside() -> Collection:
    """ADI (82 abstracts, 35 questions), imported without its judgments; a third of it test questions."""
    collection = collection_create(name="queue adi", slug="queue-adi")
    answers = [
        AnswerRecord(row[0], "", row[1] if len(row) > 1 else "")
        for row in _read_tsv(OUTSIDE_ADI / "answers.tsv")
    ]
    questions = [
        QuestionRecord(
            row[0],
            row[1] if len(row) > 1 else "",
            Split.TEST if _hash("adi", row[0]) % 3 == 0 else Split.TRAIN,
        )
        for row in _read_tsv(OUTSIDE_ADI / "questions.tsv")
    ]
    collection_import(collection=collection, answers=answers, questions=questions)
    return collection


def run(collection: Collection, *, refreshed: Callable[[Collection], None]) -> dict:
    """The session on ``collection``; ``refreshed`` is called after each change the queue must see (its
    ranker and versions, the evaluation): what a worker does then."""
    ranker = ranker_create(collection=collection, name="queue", kind="builtin", is_default=True)
    RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="learned-fusion",
        uses_model=True,
        details={"params": {"signals": ["bm25", "rm3"], "weights": [1.0, 0.5]}},
    )
    refreshed(collection)
    evaluation = evaluation_start(ranker=ranker, trigger=RunTrigger.VERSION)
    for chunk_id in run_plan(run_id=evaluation.pk, worker=WORKER):
        chunk_evaluate(chunk_id=chunk_id, worker=WORKER, token=f"{WORKER}-{chunk_id}")
    refreshed(collection)

    raters = [User.objects.create_user(f"{collection.slug}-rater-{i}") for i in range(3)]
    questions = {q.pk: q for q in Question.objects.filter(collection=collection)}
    answers = dict(Answer.objects.filter(collection=collection).values_list("pk", "external_id"))
    answer_objects = {a.pk: a for a in Answer.objects.filter(collection=collection)}

    def pairs(rater: User) -> list[list[str]]:
        return [
            [questions[q].external_id, answers[a], reason]
            for q, a, reason in queue_pairs_with_reasons(collection=collection, rater=rater, limit=40)
        ]

    record: dict = {"pairs_before": pairs(raters[0]), "turns": []}
    last: dict[int, int] = {}
    for turn in range(TURNS):
        rater = raters[turn % len(raters)]
        exclude = [last[rater.pk]] if rater.pk in last else []
        task = next_task(collection=collection, rater=rater, exclude=exclude)
        if task is None and exclude:
            task = next_task(collection=collection, rater=rater)
        if task is None:
            record["turns"].append([rater.username, None])
            continue
        question = questions[task.question_id]
        record["turns"].append(
            [
                rater.username,
                question.external_id,
                task.priority,
                task.reason,
                [answers[a] for a in task.answer_ids],
            ]
        )
        for answer_id in task.answer_ids[:6]:
            stars = _hash(question.external_id, answers[answer_id]) % 4
            rating_record(rater=rater, question=question, answer=answer_objects[answer_id], stars=stars)
        last[rater.pk] = task.question_id
    record["pairs_after"] = pairs(raters[1])
    first = min(questions)
    opened = task_for_question(collection=collection, rater=raters[2], question=questions[first])
    record["opened"] = [
        questions[first].external_id,
        opened.priority,
        opened.reason,
        [answers[a] for a in opened.answer_ids],
    ]
    overview = rater_overview(collection=collection, rater=raters[0])
    record["overview"] = [
        overview.pairs_total,
        overview.pairs_rated,
        overview.questions_waiting,
        overview.my_ratings,
    ]
    return record
