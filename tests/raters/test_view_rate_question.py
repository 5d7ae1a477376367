import re

import pytest
from django.urls import reverse

from corpus.models import Answer, Question, Split
from raters.models import CandidateTable
from raters.next_task.refresh import candidates_refresh
from ratings.models import Rating, RatingHistory
from ratings.services import rating_record
from tests.ratings.conftest import checked_stars

pytestmark = pytest.mark.django_db


def url(corpus, key="q1"):
    return reverse("rate-question", args=[corpus.collection.slug, corpus.q[key].pk])


def card_ids(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'<article class="answer-card[^"]*" id="answer-(\d+)"', html)]


def test_rate_question_get_shows_question_answers_and_star_words(client, corpus, rater):
    client.force_login(rater)

    response = client.get(url(corpus))

    html = response.content.decode()
    assert response.status_code == 200
    assert corpus.q["q1"].text in html
    assert sorted(card_ids(html)) == sorted([corpus.a["d1"].pk, corpus.a["d2"].pk])
    for words in ("0 incorrect", "1 right topic", "2 good", "3 perfect"):
        assert html.count(f'<span class="star-words">{words}</span>') == 2
    assert (
        '<legend>How well does this answer the question?<span class="sr-only"> (Lift of a wing)</span></legend>'
        in html
    )
    assert (
        '<legend>How well does this answer the question?<span class="sr-only"> (Drag)</span></legend>' in html
    )
    assert "Chosen because 2 answers need more ratings" in html
    assert '<span id="task-progress-text">0 of 2</span>' in html


def test_rate_question_get_escapes_html_in_question_and_answers(client, corpus, rater):
    question = Question.objects.create(
        collection=corpus.collection,
        external_id="evil",
        text="<script>alert('q')</script> wing",
        split=Split.TRAIN,
    )
    Answer.objects.create(
        collection=corpus.collection,
        external_id="evil",
        title="<script>alert('t')</script>",
        body="<img src=x onerror=alert(1)> wing",
    )
    client.force_login(rater)

    html = client.get(reverse("rate-question", args=["tiny", question.pk])).content.decode()

    assert "<script>alert(" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt; wing" in html
    assert "&lt;script&gt;alert(&#x27;t&#x27;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt; wing" in html


def test_rate_question_reload_keeps_order_and_shows_saved_ratings(client, corpus, rater):
    client.force_login(rater)
    first = card_ids(client.get(url(corpus)).content.decode())
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d2"], stars=0)

    html = client.get(url(corpus)).content.decode()

    assert card_ids(html) == first
    assert checked_stars(html) == {corpus.a["d1"].pk: 2, corpus.a["d2"].pk: 0}
    assert '<span id="task-progress-text">2 of 2</span>' in html


def test_rate_question_plain_post_saves_every_rating_and_redirects(client, corpus, rater):
    client.force_login(rater)
    d1, d2 = corpus.a["d1"].pk, corpus.a["d2"].pk

    response = client.post(url(corpus), {f"stars-{d1}": "3", f"stars-{d2}": "1"}, follow=True)

    assert response.redirect_chain == [(url(corpus), 302)]
    assert "Saved 2 ratings." in response.content.decode()
    assert set(Rating.objects.values_list("answer_id", "stars")) == {(d1, 3), (d2, 1)}


def test_rate_question_plain_post_rerating_keeps_history(client, corpus, rater):
    client.force_login(rater)
    d1 = corpus.a["d1"].pk
    client.post(url(corpus), {f"stars-{d1}": "3"})

    client.post(url(corpus), {f"stars-{d1}": "1"})

    assert list(Rating.objects.values_list("stars", flat=True)) == [1]
    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars")) == [(3, 1)]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "Choose a rating from 0 (incorrect) to 3 (perfect) for at least one answer."),
        ({"stars-D1": "9"}, "Stars must be from 0 to 3, not 9."),
        ({"stars-D1": "lots"}, "Stars must be a whole number from 0 to 3, not &#x27;lots&#x27;."),
        ({"stars-D1": "2", "stars-abc": "2"}, "“abc” is not an answer id."),
    ],
)
def test_rate_question_plain_post_bad_input_400_nothing_stored(client, corpus, rater, fields, message):
    client.force_login(rater)
    data = {key.replace("D1", str(corpus.a["d1"].pk)): value for key, value in fields.items()}

    response = client.post(url(corpus), data)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert Rating.objects.count() == 0


def test_rate_question_plain_post_one_bad_answer_stores_none(client, corpus, rater, other_collection):
    foreign = Answer.objects.create(collection=other_collection, external_id="x", title="x", body="x")
    client.force_login(rater)

    response = client.post(url(corpus), {f"stars-{corpus.a['d1'].pk}": "2", f"stars-{foreign.pk}": "2"})

    assert response.status_code == 404
    assert f"Answer {foreign.pk} is not in the collection “tiny”." in response.content.decode()
    assert Rating.objects.count() == 0


def test_rate_question_unknown_question_404(client, corpus, rater):
    client.force_login(rater)

    response = client.get(reverse("rate-question", args=["tiny", 999999]))

    assert response.status_code == 404
    assert "Question 999999 is not in the collection “tiny”." in response.content.decode()


def test_rate_question_question_of_another_collection_404(client, corpus, rater, other_collection):
    foreign = Question.objects.create(
        collection=other_collection, external_id="x", text="x", split=Split.TRAIN
    )
    client.force_login(rater)

    assert client.get(reverse("rate-question", args=["tiny", foreign.pk])).status_code == 404


def test_rate_question_anonymous_redirected_to_login(client, corpus):
    response = client.get(url(corpus))

    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={url(corpus)}"


def test_rate_question_non_member_404_nothing_stored(client, corpus, outsider):
    client.force_login(outsider)

    assert client.get(url(corpus)).status_code == 404
    assert client.post(url(corpus), {f"stars-{corpus.a['d1'].pk}": "2"}).status_code == 404
    assert Rating.objects.count() == 0


@pytest.mark.parametrize("role", ["rater", "trainer"])
def test_rate_question_member_roles_may_rate(client, corpus, request, role):
    client.force_login(request.getfixturevalue(role))

    response = client.post(url(corpus), {f"stars-{corpus.a['d1'].pk}": "2"})

    assert response.status_code == 302
    assert Rating.objects.count() == 1


def test_rate_question_plain_post_then_next_saves_first_then_moves_on(client, corpus, rater):
    """Without JavaScript "Next question" is a button of the form: the choices on the page are saved."""
    client.force_login(rater)
    d1 = corpus.a["d1"].pk

    response = client.post(url(corpus), {f"stars-{d1}": "2", "then": "next"})

    next_url = reverse("rate-next", args=[corpus.collection.slug]) + f"?after={corpus.q['q1'].pk}"
    assert response.status_code == 302
    assert response["Location"] == next_url
    assert list(Rating.objects.values_list("answer_id", "stars")) == [(d1, 2)]
    page = client.get(next_url, follow=True)
    assert "Saved 1 rating of the previous question." in page.content.decode()


def test_rate_question_plain_post_then_next_without_choices_moves_on(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"then": "next"})

    assert response.status_code == 302
    assert response["Location"] == (
        reverse("rate-next", args=[corpus.collection.slug]) + f"?after={corpus.q['q1'].pk}"
    )
    assert Rating.objects.count() == 0


def test_rate_question_plain_post_then_next_bad_stars_400_nothing_stored(client, corpus, rater):
    client.force_login(rater)
    d1, d2 = corpus.a["d1"].pk, corpus.a["d2"].pk

    response = client.post(url(corpus), {f"stars-{d1}": "2", f"stars-{d2}": "7", "then": "next"})

    assert response.status_code == 400
    assert Rating.objects.count() == 0


def test_rate_question_says_the_previous_table_serves_while_it_is_refreshed(
    client, corpus, rater, builtin_ranker
):
    client.force_login(rater)
    # No table yet: the term-overlap fallback serves, and the page says so.
    assert "The queue is being prepared: while the ranker finds" in client.get(url(corpus)).content.decode()
    candidates_refresh(table_id=CandidateTable.objects.get(collection=corpus.collection).pk, worker="w1")
    assert 'id="table-note"' not in client.get(url(corpus)).content.decode()
    Answer.objects.create(collection=corpus.collection, external_id="new", title="Wing", body="lift")

    html = client.get(url(corpus)).content.decode()

    assert (
        '<p class="message" id="table-note" role="status">The collection changed (a new version, an import or new embeddings): '
        "until the candidate answers are found again in the background, the queue offers those found before "
        "the change.</p>" in html
    )
