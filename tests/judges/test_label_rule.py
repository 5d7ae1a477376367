"""Judge ratings and labels: they count only when trusted; people win on a pair unless configured."""

from __future__ import annotations

import pytest

from judges.services import judge_create, judge_trust
from ratings.models import Label, RatingSource
from ratings.services import counted_stars, judge_rating_record, rating_record
from tests.judges.conftest import HUMAN


def _label(judged, q, a):
    return Label.objects.filter(question=judged.q(q), answer=judged.a(a)).first()


@pytest.fixture
def judge(judged):
    return judge_create(collection=judged.collection, name="Builtin", kind="builtin")


def test_judge_rating_without_trust_makes_no_label(judged, judge):
    rating = judge_rating_record(
        account=judge.account, question=judged.q("q3"), answer=judged.a("a1"), stars=2, reply="Grade: 2"
    )

    assert rating.source == RatingSource.JUDGE and rating.reply == "Grade: 2"
    assert _label(judged, "q3", "a1") is None


def test_trusted_judge_labels_unrated_pair_and_is_counted(judged, judge):
    judge_rating_record(account=judge.account, question=judged.q("q3"), answer=judged.a("a1"), stars=2)

    written = judge_trust(judge=judge, counts=True)

    label = _label(judged, "q3", "a1")
    assert written == 1
    assert (label.gain, label.rater_count, label.judge_count) == (2, 1, 1)


def test_trusted_judge_loses_to_people_on_a_rated_pair(judged, judge):
    judge_rating_record(account=judge.account, question=judged.q("q1"), answer=judged.a("a1"), stars=0)
    judge_trust(judge=judge, counts=True)

    label = _label(judged, "q1", "a1")
    assert (label.gain, label.rater_count, label.judge_count) == (3, 1, 0)


def test_judge_as_one_more_rater_joins_the_median(judged, judge):
    judge_rating_record(account=judge.account, question=judged.q("q1"), answer=judged.a("a1"), stars=0)
    judge_trust(judge=judge, counts=True, human_wins=False)

    label = _label(judged, "q1", "a1")
    # Stars 3 (person) and 0 (judge): median 1.5, a half rounded down.
    assert (label.gain, label.rater_count, label.judge_count, label.disagreement) == (1, 2, 1, 3)


def test_turning_trust_off_removes_the_judges_labels(judged, judge):
    judge_rating_record(account=judge.account, question=judged.q("q3"), answer=judged.a("a1"), stars=2)
    judge_trust(judge=judge, counts=True)
    judge_trust(judge=judge, counts=False)

    assert _label(judged, "q3", "a1") is None


def test_person_rating_after_trusted_judge_takes_over(judged, judge):
    judge_trust(judge=judge, counts=True)
    judge_rating_record(account=judge.account, question=judged.q("q3"), answer=judged.a("a1"), stars=3)
    rating_record(rater=judged.human, question=judged.q("q3"), answer=judged.a("a1"), stars=1)

    label = _label(judged, "q3", "a1")
    assert (label.gain, label.rater_count, label.judge_count) == (1, 1, 0)


def test_judge_never_rates_in_another_collection(judged, judge, collection):
    from corpus.formats.records import AnswerRecord, QuestionRecord
    from corpus.models import Answer, Question
    from corpus.services import answers_upsert, questions_upsert

    answers_upsert(collection=collection, records=[AnswerRecord("x1", "X", "x")])
    questions_upsert(collection=collection, records=[QuestionRecord("y1", "y")])
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="its own collection"):
        judge_rating_record(
            account=judge.account,
            question=Question.objects.get(collection=collection),
            answer=Answer.objects.get(collection=collection),
            stars=1,
        )


@pytest.mark.parametrize(
    ("ratings", "trust", "expected"),
    [
        ([(3, None), (0, 7)], {7: (True, True)}, [3]),
        ([(3, None), (0, 7)], {7: (True, False)}, [3, 0]),
        ([(2, 7)], {7: (True, True)}, [2]),
        ([(2, 7)], {7: (False, True)}, []),
    ],
)
def test_counted_stars_rule(ratings, trust, expected):
    assert counted_stars(ratings, trust) == expected


def test_ground_truth_export_says_how_many_ratings_came_from_judges(judged, judge):
    from ratings.selectors import ground_truth_rows

    judge_rating_record(account=judge.account, question=judged.q("q1"), answer=judged.a("a1"), stars=3)
    judge_trust(judge=judge, counts=True, human_wins=False)

    rows = {
        (r.question_id, r.answer_id): r.as_dict() for r in ground_truth_rows(collection=judged.collection)
    }

    assert rows[("q1", "a1")]["rater_count"] == 2 and rows[("q1", "a1")]["judge_count"] == 1
    assert rows[("q1", "a2")]["judge_count"] == 0


def test_training_progress_figures_leave_judges_out(judged, judge):
    from ratings.selectors import multi_rated_ratings, rater_summaries, ratings_per_day

    judge_rating_record(account=judge.account, question=judged.q("q1"), answer=judged.a("a1"), stars=0)
    judge_trust(judge=judge, counts=True, human_wins=False)  # the pair now has two counted raters

    summaries = rater_summaries(
        collection=judged.collection, ratings=multi_rated_ratings(collection=judged.collection)
    )

    assert [s.username for s in summaries] == ["judged-human"]
    assert sum(day.ratings for day in ratings_per_day(collection=judged.collection)) == len(HUMAN)
    # The pair has two counted raters, but people's agreement sees only the person's rating of it.
    assert [r[0] for r in multi_rated_ratings(collection=judged.collection)] == [judged.human.pk]
