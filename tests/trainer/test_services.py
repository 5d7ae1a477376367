from corpus.formats.records import QuestionRecord
from corpus.models import Question, Split
from corpus.services import questions_upsert, split_for


def test_split_for_is_stable_and_near_fraction():
    splits = [split_for(collection_slug="c", external_id=str(i), test_fraction=0.3) for i in range(2000)]
    assert splits == [
        split_for(collection_slug="c", external_id=str(i), test_fraction=0.3) for i in range(2000)
    ]
    assert 540 <= splits.count(Split.TEST) <= 660


def test_split_for_extremes():
    assert split_for(collection_slug="c", external_id="x", test_fraction=0.0) == Split.TRAIN
    assert split_for(collection_slug="c", external_id="x", test_fraction=1.0) == Split.TEST


def test_questions_upsert_keeps_split_when_file_gives_none(collection):
    questions_upsert(collection=collection, records=[QuestionRecord("q1", "what lifts", "test")])
    summary = questions_upsert(
        collection=collection, records=[QuestionRecord("q1", "what lifts a wing", None)]
    )
    question = Question.objects.get(external_id="q1")
    assert (question.split, question.text, summary.updated) == ("test", "what lifts a wing", 1)


def test_collection_import_queues_index_build_only_when_answers_change(
    collection, django_capture_on_commit_callbacks
):
    from corpus.formats.records import AnswerRecord
    from trainer.services import collection_import

    records = [AnswerRecord("a1", "Lift", "wing lift")]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        collection_import(collection=collection, answers=records)
    # The index build, and the announcement of the new state (the queue's table refresh: raters.signals).
    assert len(callbacks) == 2
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        collection_import(collection=collection, answers=records)
    assert callbacks == []
