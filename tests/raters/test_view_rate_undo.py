import pytest
from django.urls import reverse

from ratings.models import Label, Rating
from ratings.services import rating_record
from tests.ratings.conftest import HTMX

pytestmark = pytest.mark.django_db


def url(corpus, answer="d1"):
    return reverse("rate-undo", args=[corpus.collection.slug, corpus.q["q1"].pk, corpus.a[answer].pk])


def test_rate_undo_htmx_restores_previous_stars(client, corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]
    rating_record(rater=rater, question=q, answer=a, stars=1)
    rating_record(rater=rater, question=q, answer=a, stars=3)
    client.force_login(rater)

    response = client.post(url(corpus), **HTMX)

    assert response.status_code == 200
    assert (
        'data-state="undone" aria-live="polite">Undone: back to 1 right topic.</p>'
        in response.content.decode()
    )
    assert Rating.objects.get().stars == 1
    assert Label.objects.get().gain == 1


def test_rate_undo_htmx_first_rating_removed(client, corpus, rater):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    client.force_login(rater)

    response = client.post(url(corpus), **HTMX)

    assert 'data-state="undone" aria-live="polite">Undone: not rated.</p>' in response.content.decode()
    assert Rating.objects.count() == 0
    assert Label.objects.count() == 0


def test_rate_undo_only_touches_own_rating(client, corpus, rater, trainer):
    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    client.force_login(rater)

    client.post(url(corpus), **HTMX)

    assert list(Rating.objects.values_list("rater", "stars")) == [(trainer.pk, 2)]


def test_rate_undo_plain_post_redirects_with_message(client, corpus, rater):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    client.force_login(rater)

    response = client.post(url(corpus), follow=True)

    assert "Undone: not rated." in response.content.decode()
    assert Rating.objects.count() == 0


def test_rate_undo_anonymous_and_non_member_refused(client, corpus, rater, outsider):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)

    assert client.post(url(corpus), **HTMX).status_code == 401
    client.force_login(outsider)
    assert client.post(url(corpus), **HTMX).status_code == 404
    assert Rating.objects.count() == 1


def test_rate_undo_trainer_may_undo_own(client, corpus, trainer):
    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    client.force_login(trainer)

    assert client.post(url(corpus), **HTMX).status_code == 200
    assert Rating.objects.count() == 0
