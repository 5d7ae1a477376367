"""A rater's note on a rating: the per-answer note endpoint, the plain form, the card keeping it, history."""

import pytest
from django.urls import reverse

from ratings.models import Rating, RatingHistory
from ratings.services import rating_record, rating_undo
from tests.ratings.conftest import HTMX

pytestmark = pytest.mark.django_db


def note_url(corpus, question="q1", answer="d1"):
    return reverse("rate-note", args=[corpus.collection.slug, corpus.q[question].pk, corpus.a[answer].pk])


def question_url(corpus, question="q1"):
    return reverse("rate-question", args=[corpus.collection.slug, corpus.q[question].pk])


def rate(corpus, rater, answer="d1", stars=2):
    return rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a[answer], stars=stars)


def test_rate_note_htmx_saves_and_returns_the_card_with_it(client, corpus, rater):
    rate(corpus, rater)
    client.force_login(rater)
    d1 = corpus.a["d1"].pk

    response = client.post(note_url(corpus), {f"note-{d1}": "  about a different aircraft "}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert f'name="note-{d1}" value="about a different aircraft"' in html
    assert '<p class="save-state" data-state="noted" aria-live="polite">Note saved.</p>' in html
    assert Rating.objects.get().note == "about a different aircraft"


def test_rate_note_plain_post_redirects_back_and_page_shows_it(client, corpus, rater):
    client.force_login(rater)
    client.get(question_url(corpus))  # the task (its answers) is remembered from the first visit
    rate(corpus, rater)
    d1 = corpus.a["d1"].pk

    response = client.post(note_url(corpus), {f"note-{d1}": "wrong wing type"}, follow=True)

    assert response.redirect_chain == [(f"{question_url(corpus)}#answer-{d1}", 302)]
    html = response.content.decode()
    assert "Note saved." in html
    assert f'name="note-{d1}" value="wrong wing type"' in html


def test_rate_note_before_rating_or_too_long_is_400_and_stores_nothing(client, corpus, rater):
    client.force_login(rater)
    d1 = corpus.a["d1"].pk

    unrated = client.post(note_url(corpus), {f"note-{d1}": "hmm"}, **HTMX)
    rate(corpus, rater)
    too_long = client.post(note_url(corpus), {f"note-{d1}": "x" * 501}, **HTMX)

    assert (unrated.status_code, unrated.json()) == (
        400,
        {"error": "Rate the answer before adding a note to the rating.", "field": "note"},
    )
    assert (too_long.status_code, too_long.json()) == (
        400,
        {"error": "The note can be at most 500 characters, not 501.", "field": "note"},
    )
    assert Rating.objects.get().note == ""


def test_rate_note_refused_to_non_members(client, corpus, rater, outsider):
    rate(corpus, rater)
    client.force_login(outsider)

    assert client.post(note_url(corpus), {"note": "mine"}).status_code == 404
    assert Rating.objects.get().note == ""


def test_rate_question_plain_form_saves_stars_and_notes_together(client, corpus, rater):
    client.force_login(rater)
    d1, d2 = corpus.a["d1"].pk, corpus.a["d2"].pk

    response = client.post(
        question_url(corpus),
        {f"stars-{d1}": "3", f"note-{d1}": "perfect for a glider", f"stars-{d2}": "1", f"note-{d2}": ""},
    )

    assert response.status_code == 302
    assert set(Rating.objects.values_list("answer_id", "stars", "note")) == {
        (d1, 3, "perfect for a glider"),
        (d2, 1, ""),
    }


def test_rate_question_plain_form_note_without_stars_is_400(client, corpus, rater):
    client.force_login(rater)
    d1, d2 = corpus.a["d1"].pk, corpus.a["d2"].pk

    response = client.post(question_url(corpus), {f"stars-{d1}": "3", f"note-{d2}": "not rated"})

    assert response.status_code == 400
    assert "Rate the answer before adding a note to the rating." in response.content.decode()
    assert Rating.objects.count() == 0


def test_rate_note_changes_kept_in_history_and_undone(corpus, rater, client):
    rate(corpus, rater, stars=2)
    client.force_login(rater)
    d1 = corpus.a["d1"].pk
    client.post(note_url(corpus), {f"note-{d1}": "first"}, **HTMX)
    client.post(note_url(corpus), {f"note-{d1}": "second"}, **HTMX)
    client.post(note_url(corpus), {f"note-{d1}": "second"}, **HTMX)  # unchanged: no history row

    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars", "previous_note")) == [
        (2, 2, ""),
        (2, 2, "first"),
    ]
    restored = rating_undo(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"])
    assert (restored.stars, restored.note) == (2, "first")


def test_rerating_keeps_the_note_and_undo_of_stars_restores_it(corpus, rater):
    from ratings.services import rating_note_set

    rate(corpus, rater, stars=2)
    rating_note_set(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], note="odd one")

    rerated = rate(corpus, rater, stars=0)

    assert (rerated.stars, rerated.note) == (0, "odd one")
    assert RatingHistory.objects.order_by("id").last().previous_note == "odd one"
    undone = rating_undo(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"])
    assert (undone.stars, undone.note) == (2, "odd one")


def test_rate_note_anonymous_redirected_to_login_and_trainer_may_note(client, corpus, trainer):
    response = client.post(note_url(corpus), {"note": "hmm"})
    assert response.status_code == 302 and "/login/" in response["Location"]

    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d1"], stars=1)
    client.force_login(trainer)
    assert client.post(note_url(corpus), {"note": "trainer's remark"}, **HTMX).status_code == 200
    assert Rating.objects.get(rater=trainer).note == "trainer's remark"


def test_rate_question_plain_form_note_alone_keeps_the_stars(client, corpus, rater):
    rate(corpus, rater, answer="d2", stars=1)
    client.force_login(rater)
    d1, d2 = corpus.a["d1"].pk, corpus.a["d2"].pk

    response = client.post(question_url(corpus), {f"stars-{d1}": "3", f"note-{d2}": "too short"})

    assert response.status_code == 302
    assert set(Rating.objects.values_list("answer_id", "stars", "note")) == {
        (d1, 3, ""),
        (d2, 1, "too short"),
    }


def test_rating_record_stars_and_note_in_one_save_is_one_undo_step(corpus, rater):
    q1, d1 = corpus.q["q1"], corpus.a["d1"]
    rating_record(rater=rater, question=q1, answer=d1, stars=2, note="first")
    rating_record(rater=rater, question=q1, answer=d1, stars=3, note="changed my mind")

    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars", "previous_note")) == [
        (2, 3, "first")
    ]
    undone = rating_undo(rater=rater, question=q1, answer=d1)
    assert (undone.stars, undone.note) == (2, "first")
    assert rating_undo(rater=rater, question=q1, answer=d1) is None  # the first save: the rating goes


def test_rating_record_same_stars_new_note_keeps_the_old_note_in_history(corpus, rater):
    q1, d1 = corpus.q["q1"], corpus.a["d1"]
    rating_record(rater=rater, question=q1, answer=d1, stars=2, note="first")
    rating_record(rater=rater, question=q1, answer=d1, stars=2, note="second")

    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars", "previous_note")) == [
        (2, 2, "first")
    ]
