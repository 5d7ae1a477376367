import re

import pytest
from django.urls import reverse

from ratings.services import rating_record

pytestmark = pytest.mark.django_db


def test_home_lists_collections_with_progress_and_start_button(client, corpus, rater, trainer):
    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    client.force_login(rater)

    html = client.get(reverse("home")).content.decode()

    assert "<strong>3 questions waiting</strong> for you." in html
    assert "All raters together have rated 1\n      of the 6 answers to rate." in html
    # What to rate and what the stars mean, in plain words: no formula, no definition of a pair.
    assert (
        "give each one stars:\n      <strong>0</strong> incorrect, <strong>1</strong> right topic, "
        "<strong>2</strong> good, <strong>3</strong> perfect.</p>"
    ) in html
    assert "A pair is" not in html and "max(" not in html
    assert (
        f'<a class="button primary start" href="{reverse("rate-next", args=["tiny"])}">Start rating</a>'
        in html
    )
    assert "Training progress" not in html
    assert "Judges" not in html


def test_home_trainer_sees_progress_link(client, corpus, trainer):
    client.force_login(trainer)

    html = client.get(reverse("home")).content.decode()

    assert f'<a href="{reverse("rating-progress", args=["tiny"])}">Training progress</a>' in html
    assert f'<a href="{reverse("judges", args=["tiny"])}">Judges</a>' in html


def test_home_only_own_collections(client, corpus, outsider):
    client.force_login(outsider)

    html = client.get(reverse("home")).content.decode()

    assert "Other" in html and "Tiny" not in html


def test_home_nothing_waiting_no_start_button(client, corpus, rater):
    a, q = corpus.a, corpus.q
    for question, answers in ((q["q1"], ("d1", "d2")), (q["q2"], ("d3", "d4")), (q["q3"], ("d5", "d2"))):
        for key in answers:
            rating_record(rater=rater, question=question, answer=a[key], stars=1)
    client.force_login(rater)

    html = client.get(reverse("home")).content.decode()

    assert "<strong>0 questions waiting</strong>" in html
    assert "Start rating" not in html


def test_home_anonymous_redirected_to_login(client):
    response = client.get(reverse("home"))

    assert (response.status_code, response["Location"]) == (302, "/login/?next=/")


def test_home_no_membership_message(client, make_user):
    client.force_login(make_user("nobody"))

    html = client.get(reverse("home")).content.decode()

    assert "You are not a member of any collection yet. Ask a trainer to add you." in html


def test_home_rater_sees_plain_words_without_pairs(client, corpus, rater):
    """No measure names a rater has not been told about, and no "pair" to define (issue 34, §4.8)."""
    client.force_login(rater)

    html = client.get(reverse("home")).content.decode()
    main = re.sub(r"<[^>]+>", " ", html[html.index('<main id="main"') :]).lower()  # the words shown

    for jargon in ("judged@", "overlap", "ndcg", "gain", "label", "pair", "max(", "grade"):
        assert jargon not in main, jargon
