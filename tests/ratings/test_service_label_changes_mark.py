"""``label_changes_mark``: a write that bypassed the label recomputation (a bench's bulk delete) marks its
questions, so the processes keeping labels read them again."""

from __future__ import annotations

import pytest

from corpus.services import collection_create
from ratings.models import LabelChange
from ratings.selectors import label_changes
from ratings.services import label_changes_mark
from tests.ratings.conftest import build_corpus

pytestmark = pytest.mark.django_db(transaction=True)


def test_label_changes_mark_lists_the_questions_once_each():
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    q = corpus.q
    _, start = label_changes(collection_id=corpus.collection.pk, since=None)

    label_changes_mark(question_ids=[q["q3"].pk, q["q1"].pk, q["q3"].pk])

    assert label_changes(collection_id=corpus.collection.pk, since=start)[0] == [q["q1"].pk, q["q3"].pk]
    assert LabelChange.objects.count() == 2
