import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from corpus.models import Answer, Question, Split
from ratings.models import Label, Rating, RatingHistory
from tests.ratings.conftest import HTMX, checked_stars

pytestmark = pytest.mark.django_db


def url(corpus, question="q1", answer="d1"):
    return reverse("rate-answer", args=[corpus.collection.slug, corpus.q[question].pk, corpus.a[answer].pk])


def test_rate_answer_htmx_saves_and_returns_the_card(client, corpus, rater):
    client.force_login(rater)
    d1 = corpus.a["d1"].pk

    response = client.post(url(corpus), {f"stars-{d1}": "2"}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<article class="answer-card is-rated" id="answer-{d1}"')
    assert '<p class="save-state" data-state="saved" aria-live="polite">Saved: 2 good.</p>' in html
    assert checked_stars(html) == {d1: 2}
    assert "<html" not in html
    assert list(Rating.objects.values_list("rater", "question", "answer", "stars", "source")) == [
        (rater.pk, corpus.q["q1"].pk, d1, 2, "web")
    ]
    assert Label.objects.get().gain == 2


def test_rate_answer_accepts_plain_stars_field(client, corpus, rater):
    client.force_login(rater)

    assert client.post(url(corpus), {"stars": "0"}, **HTMX).status_code == 200
    assert Rating.objects.get().stars == 0


def test_rate_answer_rerating_updates_and_keeps_history(client, corpus, rater):
    client.force_login(rater)
    client.post(url(corpus), {"stars": "1"}, **HTMX)

    client.post(url(corpus), {"stars": "3"}, **HTMX)

    assert list(Rating.objects.values_list("stars", flat=True)) == [3]
    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars")) == [(1, 3)]


def test_rate_answer_plain_post_redirects_to_the_answer(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"stars": "3"})

    question_url = reverse("rate-question", args=["tiny", corpus.q["q1"].pk])
    assert (response.status_code, response["Location"]) == (302, f"{question_url}#answer-{corpus.a['d1'].pk}")
    assert Rating.objects.get().stars == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("4", "Stars must be from 0 to 3, not 4."),
        ("-1", "Stars must be from 0 to 3, not -1."),
        ("2.5", "Stars must be a whole number from 0 to 3, not '2.5'."),
        ("two", "Stars must be a whole number from 0 to 3, not 'two'."),
        ("", "Choose a rating from 0 (incorrect) to 3 (perfect)."),
    ],
)
def test_rate_answer_bad_stars_400_json_nothing_stored(client, corpus, rater, value, message):
    client.force_login(rater)

    response = client.post(url(corpus), {"stars": value}, **HTMX)

    assert response.status_code == 400
    assert response.json() == {"error": message, "field": "stars"}
    assert Rating.objects.count() == 0


def test_rate_answer_missing_stars_400(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {}, **HTMX)

    assert response.json() == {
        "error": "Choose a rating from 0 (incorrect) to 3 (perfect).",
        "field": "stars",
    }


def test_rate_answer_bad_stars_plain_post_400_page(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"stars": "7"})

    assert response.status_code == 400
    assert '<p class="error" role="alert">Stars must be from 0 to 3, not 7.</p>' in response.content.decode()


def test_rate_answer_unknown_answer_404_json(client, corpus, rater):
    client.force_login(rater)

    response = client.post(
        reverse("rate-answer", args=["tiny", corpus.q["q1"].pk, 999999]), {"stars": "2"}, **HTMX
    )

    assert response.status_code == 404
    assert response.json() == {"error": "Answer 999999 is not in the collection “tiny”.", "field": "answer"}


def test_rate_answer_unknown_question_404_json(client, corpus, rater):
    client.force_login(rater)

    response = client.post(
        reverse("rate-answer", args=["tiny", 999999, corpus.a["d1"].pk]), {"stars": "2"}, **HTMX
    )

    assert response.status_code == 404
    assert response.json() == {
        "error": "Question 999999 is not in the collection “tiny”.",
        "field": "question",
    }


def test_rate_answer_pair_from_another_collection_404_nothing_stored(client, corpus, rater, other_collection):
    foreign_answer = Answer.objects.create(collection=other_collection, external_id="x", title="x", body="x")
    foreign_question = Question.objects.create(
        collection=other_collection, external_id="x", text="x", split="train"
    )
    client.force_login(rater)

    by_answer = client.post(
        reverse("rate-answer", args=["tiny", corpus.q["q1"].pk, foreign_answer.pk]), {"stars": "2"}, **HTMX
    )
    by_question = client.post(
        reverse("rate-answer", args=["tiny", foreign_question.pk, corpus.a["d1"].pk]), {"stars": "2"}, **HTMX
    )
    other_url = reverse("rate-answer", args=["other", foreign_question.pk, corpus.a["d1"].pk])
    under_other = client.post(other_url, {"stars": "2"}, **HTMX)

    assert (by_answer.status_code, by_question.status_code, under_other.status_code) == (404, 404, 404)
    assert Rating.objects.count() == 0


def test_rate_answer_anonymous_htmx_401_json(client, corpus):
    response = client.post(url(corpus), {"stars": "2"}, **HTMX)

    assert response.status_code == 401
    assert response.json() == {"error": "You are logged out. Log in again to keep rating.", "field": None}
    assert Rating.objects.count() == 0


def test_rate_answer_anonymous_plain_redirected_to_login(client, corpus):
    response = client.post(url(corpus), {"stars": "2"})

    assert (response.status_code, response["Location"]) == (302, f"/login/?next={url(corpus)}")
    assert Rating.objects.count() == 0


def test_rate_answer_non_member_404_json_nothing_stored(client, corpus, outsider):
    client.force_login(outsider)

    response = client.post(url(corpus), {"stars": "2"}, **HTMX)

    assert response.status_code == 404
    assert response.json() == {
        "error": "There is no collection “tiny” that you are a member of.",
        "field": None,
    }
    assert Rating.objects.count() == 0


def test_rate_answer_unknown_collection_404(client, corpus, rater):
    client.force_login(rater)

    response = client.post(
        reverse("rate-answer", args=["nope", corpus.q["q1"].pk, corpus.a["d1"].pk]), {"stars": "2"}, **HTMX
    )

    assert response.status_code == 404


@pytest.mark.parametrize("role", ["rater", "trainer"])
def test_rate_answer_members_may_rate(client, corpus, request, role):
    user = request.getfixturevalue(role)
    client.force_login(user)

    assert client.post(url(corpus), {"stars": "2"}, **HTMX).status_code == 200
    assert list(Rating.objects.values_list("rater", flat=True)) == [user.pk]


def test_rate_answer_inactive_member_refused(client, corpus, rater):
    client.force_login(rater)
    rater.is_active = False
    rater.save()

    response = client.post(url(corpus), {"stars": "2"}, **HTMX)

    assert response.status_code == 401
    assert Rating.objects.count() == 0


def test_rate_answer_get_not_allowed(client, corpus, rater):
    client.force_login(rater)

    assert client.get(url(corpus)).status_code == 405


def test_rate_answer_missing_csrf_403_json_nothing_stored(corpus, rater):
    client = Client(enforce_csrf_checks=True)
    client.force_login(rater)

    response = client.post(url(corpus), {"stars": "2"}, **HTMX)

    assert response.status_code == 403
    assert response.json() == {
        "error": "This page's security token is missing or out of date, so nothing was saved. "
        "Reload the page and try again.",
        "field": "csrfmiddlewaretoken",
    }
    assert Rating.objects.count() == 0


def test_rate_answer_missing_csrf_plain_post_403_page(corpus, rater):
    client = Client(enforce_csrf_checks=True)
    client.force_login(rater)

    response = client.post(url(corpus), {"stars": "2"})

    assert response.status_code == 403
    assert "This page&#x27;s security token is missing or out of date" in response.content.decode()
    assert Rating.objects.count() == 0


def test_rate_answer_with_csrf_header_saves(corpus, rater):
    client = Client(enforce_csrf_checks=True)
    client.force_login(rater)
    page = client.get(reverse("rate-question", args=["tiny", corpus.q["q1"].pk]))
    token = page.context["csrf_token"]

    response = client.post(url(corpus), {"stars": "2"}, HTTP_X_CSRFTOKEN=str(token), **HTMX)

    assert response.status_code == 200
    assert Rating.objects.count() == 1


def test_rate_answer_htmx_card_escapes_answer_text(client, corpus, rater):
    evil = Answer.objects.create(
        collection=corpus.collection, external_id="evil", title="<b>bold</b>", body="<script>x()</script>"
    )
    question = Question.objects.create(
        collection=corpus.collection, external_id="e", text="e", split=Split.TRAIN
    )
    client.force_login(rater)

    html = client.post(
        reverse("rate-answer", args=["tiny", question.pk, evil.pk]), {"stars": "1"}, **HTMX
    ).content.decode()

    assert "<script>x()" not in html and "<b>bold" not in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "&lt;script&gt;x()&lt;/script&gt;" in html


def test_rate_answer_save_query_count(client, corpus, rater, django_assert_num_queries):
    client.force_login(rater)
    client.post(url(corpus, answer="d2"), {"stars": "1"}, **HTMX)

    # Session, user, answer (with its collection, the question check and the membership role); then on
    # PostgreSQL the service's one query string: pair lock, rating upsert with history, label recompute. The
    # ORM path elsewhere (SQLite): savepoint, rating read, insert, the judges' accounts (whether a judge's
    # rating counts in the label), label ratings read, label upsert, release.
    # The save is the hot path (one request per star clicked): keep it lean.
    with django_assert_num_queries(4 if connection.vendor == "postgresql" else 10):
        response = client.post(url(corpus), {"stars": "2"}, **HTMX)

    assert response.status_code == 200


def test_rate_answer_superuser_non_member_may_rate(client, corpus, make_user):
    admin = make_user("admin", is_superuser=True)
    client.force_login(admin)

    assert client.post(url(corpus), {"stars": "2"}, **HTMX).status_code == 200
    assert list(Rating.objects.values_list("rater", flat=True)) == [admin.pk]
