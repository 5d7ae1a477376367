import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Answer, Role
from ratings.models import JudgeAccount, Label, Rating, RatingHistory, Skip
from ratings.services import question_skip, rating_record, rating_undo, write

pytestmark = pytest.mark.django_db


def label_of(question, answer):
    return Label.objects.values_list("gain", "rater_count", "mean_stars", "disagreement").get(
        question=question, answer=answer
    )


@pytest.mark.parametrize(
    ("stars", "expected"),
    [
        ([2], (2, 1, 2.0, 0)),
        ([2, 3], (2, 2, 2.5, 1)),
        ([0, 3], (1, 2, 1.5, 3)),
        ([1, 2, 3], (2, 3, 2.0, 2)),
        ([3, 3, 0], (3, 3, 2.0, 3)),
    ],
)
def test_rating_record_label_aggregates_one_two_three_raters(corpus, make_user, stars, expected):
    q, a = corpus.q["q1"], corpus.a["d1"]
    for i, value in enumerate(stars):
        rater = make_user(f"r{i}", collection=corpus.collection, role=Role.RATER)
        rating_record(rater=rater, question=q, answer=a, stars=value)

    assert label_of(q, a) == expected


def test_rating_record_rerating_changes_rating_and_keeps_history(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]
    rating_record(rater=rater, question=q, answer=a, stars=1)

    rating_record(rater=rater, question=q, answer=a, stars=3)

    assert Rating.objects.get(rater=rater, question=q, answer=a).stars == 3
    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars")) == [(1, 3)]
    assert label_of(q, a) == (3, 1, 3.0, 0)


def test_rating_undo_restores_previous_then_removes(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]
    rating_record(rater=rater, question=q, answer=a, stars=1)
    rating_record(rater=rater, question=q, answer=a, stars=3)

    assert rating_undo(rater=rater, question=q, answer=a).stars == 1
    assert label_of(q, a) == (1, 1, 1.0, 0)
    assert rating_undo(rater=rater, question=q, answer=a) is None
    assert not Label.objects.filter(question=q, answer=a).exists()


def test_rating_record_pair_from_another_collection_rejected(corpus, rater, other_collection):
    foreign = Answer.objects.create(collection=other_collection, external_id="x", title="x", body="x")

    with pytest.raises(ValidationError) as error:
        rating_record(rater=rater, question=corpus.q["q1"], answer=foreign, stars=2)

    assert error.value.message_dict == {
        "answer": ["This answer belongs to another collection than the question."]
    }
    assert Rating.objects.count() == 0


def test_question_skip_records_reason(corpus, rater):
    skip = question_skip(rater=rater, question=corpus.q["q1"], reason="  too technical  ")

    assert (skip.rater, skip.question, skip.reason) == (rater, corpus.q["q1"], "too technical")


def test_question_skip_twice_keeps_one_row_and_updates_reason(corpus, rater):
    question_skip(rater=rater, question=corpus.q["q1"])
    question_skip(rater=rater, question=corpus.q["q1"], reason="no idea")
    question_skip(rater=rater, question=corpus.q["q1"])

    assert list(Skip.objects.values_list("reason", flat=True)) == ["no idea"]


def test_question_skip_reason_too_long_rejected(corpus, rater):
    with pytest.raises(ValidationError) as error:
        question_skip(rater=rater, question=corpus.q["q1"], reason="x" * 501)

    assert error.value.message_dict == {"reason": ["The reason can be at most 500 characters, not 501."]}
    assert Skip.objects.count() == 0


def test_labels_recompute_postgresql_matches_python_aggregate(corpus, make_user):
    from ratings.services.labels import _labels_recompute_postgresql, _labels_recompute_python

    raters = [make_user(f"r{i}", collection=corpus.collection, role=Role.RATER) for i in range(5)]
    pairs = []
    for n, answer in enumerate(corpus.a.values()):
        pair = (corpus.q["q1"].pk, answer.pk)
        pairs.append(pair)
        for i, rater in enumerate(raters[: (n % 5) + 1]):
            rating_record(rater=rater, question=corpus.q["q1"], answer=answer, stars=(n * 7 + i * 3) % 4)
    Rating.objects.filter(answer=corpus.a["d6"]).delete()  # a pair that lost its ratings loses its label
    columns = ("question_id", "answer_id", "gain", "rater_count", "mean_stars", "disagreement")

    assert _labels_recompute_python(set(pairs)) == 5
    by_python = sorted(Label.objects.values_list(*columns))
    Label.objects.all().delete()
    Label.objects.create(question=corpus.q["q1"], answer=corpus.a["d6"], gain=3, rater_count=1, mean_stars=3)
    assert _labels_recompute_postgresql(set(pairs)) == 5
    by_sql = sorted(Label.objects.values_list(*columns))

    assert by_sql == by_python
    assert len(by_sql) == 5


def test_rating_record_returns_the_stored_row(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]

    rating = rating_record(rater=rater, question=q, answer=a, stars=2)

    stored = Rating.objects.get(rater=rater, question=q, answer=a)
    assert (rating.pk, rating.stars, rating.source, rating.created_at, rating.updated_at) == (
        stored.pk,
        2,
        "web",
        stored.created_at,
        stored.updated_at,
    )
    assert (rating.rater, rating.question, rating.answer) == (rater, q, a)


@pytest.fixture(params=["postgresql", "orm"])
def write_path(request, monkeypatch):
    """rating_record's one query string (PostgreSQL), or the ORM path other databases take."""
    if request.param == "orm":
        monkeypatch.setattr(write, "_rating_write_postgresql", lambda *args: write._rating_write_orm(*args))
    return request.param


def test_rating_record_returns_the_label_it_left(corpus, rater, make_user, write_path):
    q, a = corpus.q["q1"], corpus.a["d1"]
    other = make_user("ann", collection=corpus.collection, role=Role.RATER)
    rating_record(rater=other, question=q, answer=a, stars=3)

    first = rating_record(rater=rater, question=q, answer=a, stars=0)
    noted = rating_record(rater=rater, question=q, answer=a, stars=2, note="close")

    # 3 and 0: the median of two is their mean rounded down, 1; then 3 and 2: 2.
    assert (first.saved_label, noted.saved_label) == ((1, 2), (2, 2))
    assert label_of(q, a)[:2] == (2, 2)


def test_rating_record_of_an_uncounted_judge_alone_leaves_no_label(corpus, make_user, write_path):
    judge = make_user("judge-bot")
    JudgeAccount.objects.create(user=judge, collection=corpus.collection, counts=False)

    rating = rating_record(rater=judge, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)

    assert rating.saved_label is None
    assert Label.objects.count() == 0


def test_rating_record_same_stars_again_changes_nothing(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]
    first = rating_record(rater=rater, question=q, answer=a, stars=2)

    again = rating_record(rater=rater, question=q, answer=a, stars=2, source="import")

    stored = Rating.objects.get(rater=rater, question=q, answer=a)
    assert (again.pk, again.source, again.updated_at) == (first.pk, "web", first.updated_at)
    assert (stored.source, stored.updated_at) == ("web", first.updated_at)
    assert RatingHistory.objects.count() == 0
    assert label_of(q, a) == (2, 1, 2.0, 0)


def test_rating_record_rerating_returns_new_stars_and_history_keeps_previous_source(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]
    first = rating_record(rater=rater, question=q, answer=a, stars=1, source="import")

    changed = rating_record(rater=rater, question=q, answer=a, stars=0)

    assert (changed.pk, changed.stars, changed.source) == (first.pk, 0, "web")
    assert changed.updated_at > first.updated_at and changed.created_at == first.created_at
    assert list(
        RatingHistory.objects.values_list("rating", "previous_stars", "previous_source", "new_stars")
    ) == [(first.pk, 1, "import", 0)]


def test_rating_record_in_a_failed_outer_transaction_stores_nothing(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]

    with pytest.raises(RuntimeError), transaction.atomic():
        rating_record(rater=rater, question=q, answer=a, stars=3)
        raise RuntimeError("the caller fails after the save")

    assert Rating.objects.count() == 0
    assert Label.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_rating_record_prepares_its_statements_once_per_connection(
    corpus, make_user, django_assert_num_queries
):
    from django.db import connection

    rater = make_user("ray", collection=corpus.collection, role=Role.RATER)
    q1, d1 = corpus.q["q1"], corpus.a["d1"]
    connection.close()

    with django_assert_num_queries(2):  # a new connection: PREPARE (both statements), then the save
        rating_record(rater=rater, question=q1, answer=d1, stars=1)
    with django_assert_num_queries(1):
        rating_record(rater=rater, question=q1, answer=d1, stars=2)
    # A rolled-back transaction keeps them (prepared statements belong to the session, not the transaction).
    with pytest.raises(RuntimeError), transaction.atomic():
        rating_record(rater=rater, question=q1, answer=d1, stars=3)
        raise RuntimeError
    with django_assert_num_queries(1):
        saved = rating_record(rater=rater, question=q1, answer=d1, stars=3)

    assert (saved.stars, saved.saved_label) == (3, (3, 1))
    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars")) == [(1, 2), (2, 3)]
