"""``label_changes``: the questions whose ratings or labels a write changed since a position, from the
marks every label recomputation writes (the person's save on PostgreSQL's prepared statements, the bulk
write, undo), per collection."""

from __future__ import annotations

import pytest

from corpus.services import collection_create
from ratings.models import LabelChange, RatingSource
from ratings.selectors import label_changes
from ratings.services import RatingRow, rating_record, rating_undo, ratings_write
from tests.ratings.conftest import build_corpus

# Committed writes: a position is only meaningful between transactions.
pytestmark = pytest.mark.django_db(transaction=True)


def test_label_changes_lists_the_questions_written_since(make_user):
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    other = build_corpus(collection_create(name="Other", slug="other"))
    ann = make_user("ann")
    q, a = corpus.q, corpus.a
    _, start = label_changes(collection_id=corpus.collection.pk, since=None)
    assert label_changes(collection_id=corpus.collection.pk, since=start)[0] == []

    rating_record(rater=ann, question=q["q3"], answer=a["d5"], stars=2)  # a person's save
    ratings_write(  # a bulk write: two pairs of one question
        rater=ann, rows=[RatingRow(q["q1"].pk, a["d1"].pk, 3), RatingRow(q["q1"].pk, a["d2"].pk, 0)],
        source=RatingSource.WEB,
    )  # fmt: skip
    rating_record(rater=ann, question=other.q["q2"], answer=other.a["d3"], stars=1)  # another collection

    changed, _ = label_changes(collection_id=corpus.collection.pk, since=start)
    assert changed == [q["q1"].pk, q["q3"].pk]
    assert label_changes(collection_id=other.collection.pk, since=start)[0] == [other.q["q2"].pk]
    assert dict(LabelChange.objects.values_list("question_id", "collection_id")) == {
        q["q1"].pk: corpus.collection.pk,
        q["q3"].pk: corpus.collection.pk,
        other.q["q2"].pk: other.collection.pk,
    }


def test_label_changes_lists_an_undo_that_removed_the_label(make_user):
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    ann = make_user("ann")
    q, a = corpus.q, corpus.a
    rating_record(rater=ann, question=q["q2"], answer=a["d3"], stars=2)
    _, after_save = label_changes(collection_id=corpus.collection.pk, since=None)

    assert rating_undo(rater=ann, question=q["q2"], answer=a["d3"]) is None  # the first rating removed

    changed, _ = label_changes(collection_id=corpus.collection.pk, since=after_save)
    assert changed == [q["q2"].pk]
