"""The training progress page lists pairs where raters disagree, with each rater's stars and note."""

import pytest
from django.urls import reverse

from corpus.models import Role
from ratings.selectors import disagreements
from ratings.services import rating_note_set, rating_record

pytestmark = pytest.mark.django_db

URL = reverse("rating-progress", args=["tiny"])


@pytest.fixture
def split_pair(corpus, rater, make_user):
    ann = make_user("ann", collection=corpus.collection, role=Role.RATER)
    q1, d1, d2 = corpus.q["q1"], corpus.a["d1"], corpus.a["d2"]
    rating_record(rater=rater, question=q1, answer=d1, stars=3)
    rating_record(rater=ann, question=q1, answer=d1, stars=0)
    rating_note_set(rater=ann, question=q1, answer=d1, note="about a different aircraft")
    rating_record(rater=rater, question=q1, answer=d2, stars=2)
    rating_record(rater=ann, question=q1, answer=d2, stars=1)  # one star apart: not a disagreement
    return corpus


def test_disagreements_selector_lists_pairs_two_stars_apart_with_notes(split_pair):
    count, pairs = disagreements(collection=split_pair.collection)

    assert count == 1
    assert [(p.answer_external_id, p.spread, p.ratings) for p in pairs] == [
        ("d1", 3, [("rita", 3, ""), ("ann", 0, "about a different aircraft")])
    ]


def test_training_progress_shows_disagreements_beside_notes(client, split_pair, trainer):
    client.force_login(trainer)

    html = client.get(URL).content.decode()

    assert 'data-testid="disagreements"' in html
    assert "1 pair with raters 2 or more stars apart" in html
    assert "ann: 0 — <q>about a different aircraft</q>" in html
    assert "rita: 3</li>" in html


def test_training_progress_without_disagreements_says_so(client, corpus, trainer):
    client.force_login(trainer)

    assert "No pair has raters 2 or more stars apart." in client.get(URL).content.decode()
