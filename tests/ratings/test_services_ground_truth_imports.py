"""Imports of judgments kept with their option: recorded by an import, turned on and off, read by the
selectors the learner uses, and the imports made before they were kept (the data migration)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Question, Split
from ratings.models import GroundTruthImport, RatingSource
from ratings.selectors import complete_question_ids, ground_truth_imports, imports_judging
from ratings.services import ground_truth_import_set, rating_record
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

ANSWERS = [AnswerRecord(a, a, a) for a in ("a1", "a2", "a3")]
QUESTIONS = [
    QuestionRecord("q1", "lift", Split.TRAIN),
    QuestionRecord("q2", "drag", Split.TRAIN),
    QuestionRecord("q3", "heat", Split.TEST),
]


def _import(collection, judgments, *, unlisted_incorrect: bool, files=("qrels.txt",)):
    return collection_import(
        collection=collection,
        answers=ANSWERS,
        questions=QUESTIONS,
        judgments=[JudgmentRecord(q, a, s) for q, a, s in judgments],
        unlisted_incorrect=unlisted_incorrect,
        files=files,
    )


def _ids(collection, *external_ids: str) -> set[int]:
    return set(
        Question.objects.filter(collection=collection, external_id__in=external_ids).values_list(
            "id", flat=True
        )
    )


def test_collection_import_keeps_the_import_with_its_files_questions_and_option(collection):
    summary = _import(
        collection, [("q1", "a1", 3), ("q1", "a2", 1), ("q3", "a3", 2)], unlisted_incorrect=True
    )

    record = summary.ground_truth_import
    assert record is not None
    assert (record.files, record.judgments, record.unlisted_incorrect, record.rater.username) == (
        "qrels.txt",
        3,
        True,
        "ground-truth",
    )
    assert set(record.questions.values_list("id", flat=True)) == _ids(collection, "q1", "q3")
    assert record.name == f"import {record.pk} (qrels.txt)"
    assert summary.option_sentence == (
        f"The training reads the answers that import {record.pk} (qrels.txt) does not list for its 2 judged questions "
        "as 0 stars."
    )


def test_collection_import_without_judgments_keeps_no_import(collection):
    summary = collection_import(collection=collection, answers=ANSWERS)

    assert (summary.ground_truth_import, summary.option_sentence) == (None, "")
    assert GroundTruthImport.objects.count() == 0


def test_ground_truth_import_set_turns_the_option_off_and_on(collection):
    record = _import(collection, [("q1", "a1", 3)], unlisted_incorrect=True).ground_truth_import

    ground_truth_import_set(record=record, unlisted_incorrect=False)
    off = GroundTruthImport.objects.get(pk=record.pk).unlisted_incorrect
    ground_truth_import_set(record=record, unlisted_incorrect=True)

    assert (off, GroundTruthImport.objects.get(pk=record.pk).unlisted_incorrect) == (False, True)


def test_complete_question_ids_only_from_imports_with_the_option_on(collection, rater):
    _import(collection, [("q1", "a1", 3), ("q3", "a1", 3)], unlisted_incorrect=True)
    off = _import(collection, [("q2", "a2", 3)], unlisted_incorrect=False).ground_truth_import
    # A person's rating never makes a question complete.
    q2 = Question.objects.get(collection=collection, external_id="q2")
    rating_record(rater=rater, question=q2, answer=q2.collection.answers.get(external_id="a3"), stars=2)

    assert complete_question_ids(collection=collection, split=Split.TRAIN) == _ids(collection, "q1")
    assert complete_question_ids(collection=collection) == _ids(collection, "q1", "q3")
    ground_truth_import_set(record=off, unlisted_incorrect=True)
    assert complete_question_ids(collection=collection, split=Split.TRAIN) == _ids(collection, "q1", "q2")


def test_ground_truth_imports_and_imports_judging_count_questions(collection):
    first = _import(collection, [("q1", "a1", 3), ("q3", "a1", 3)], unlisted_incorrect=True)
    second = _import(collection, [("q1", "a2", 2), ("q2", "a2", 3)], unlisted_incorrect=False, files=())
    first_record, second_record = first.ground_truth_import, second.ground_truth_import

    rows = ground_truth_imports(collection=collection)
    training = _ids(collection, "q1", "q2")

    assert [(r.record.pk, r.record.name, r.questions, r.training_questions) for r in rows] == [
        (first_record.pk, f"import {first_record.pk} (qrels.txt)", 2, 1),
        (second_record.pk, f"import {second_record.pk}", 2, 2),
    ]
    assert [
        (r.pk, n)
        for r, n in imports_judging(collection=collection, question_ids=training, unlisted_incorrect=True)
    ] == [(first_record.pk, 1)]
    assert [
        (r.pk, n)
        for r, n in imports_judging(collection=collection, question_ids=training, unlisted_incorrect=False)
    ] == [(second_record.pk, 2)]


def test_migration_keeps_earlier_imports_with_the_option_on(collection, other_collection, rater):
    # Ratings of source "import" from before imports were kept: one import per collection and import rater.
    collection_import(collection=collection, answers=ANSWERS, questions=QUESTIONS)
    collection_import(collection=other_collection, answers=ANSWERS, questions=QUESTIONS)
    gt = get_user_model().objects.create(username="ground-truth")
    legacy = get_user_model().objects.create(username="legacy-import")
    for coll, user, pairs in (
        (collection, gt, [("q1", "a1"), ("q1", "a2"), ("q3", "a3")]),
        (collection, legacy, [("q2", "a1")]),
        (other_collection, gt, [("q2", "a2")]),
    ):
        for q, a in pairs:
            question = Question.objects.get(collection=coll, external_id=q)
            rating_record(
                rater=user,
                question=question,
                answer=coll.answers.get(external_id=a),
                stars=3,
                source=RatingSource.IMPORT,
            )
    rating_record(  # a person's rating: no import
        rater=rater,
        question=Question.objects.get(collection=collection, external_id="q2"),
        answer=collection.answers.get(external_id="a3"),
        stars=1,
    )

    importlib.import_module("ratings.migrations.0005_ground_truth_import").earlier_imports_record(apps, None)

    assert [
        (
            r.collection_id,
            r.rater.username,
            r.judgments,
            r.unlisted_incorrect,
            r.files,
            sorted(r.questions.values_list("external_id", flat=True)),
        )
        for r in GroundTruthImport.objects.order_by("collection_id", "rater_id")
    ] == [
        (collection.pk, "ground-truth", 3, True, "", ["q1", "q3"]),
        (collection.pk, "legacy-import", 1, True, "", ["q2"]),
        (other_collection.pk, "ground-truth", 1, True, "", ["q2"]),
    ]
    assert complete_question_ids(collection=collection, split=Split.TRAIN) == _ids(collection, "q1", "q2")
