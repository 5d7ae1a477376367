"""A rater's contribution card, which their dashboard loads with htmx: their ratings in all and in the last
seven days, the questions the queue keeps for them, and the link to the next one."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ratings.models import Rating
from ratings.services import rating_record

pytestmark = pytest.mark.django_db


def card(client, *, htmx: bool = True) -> str:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get(reverse("rate-contribution", args=["tiny"]), **headers)
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_contribution_counts_all_recent_and_waiting_with_the_next_question_link(client, corpus, rater):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=2)
    rating_record(rater=rater, question=corpus.q["q3"], answer=corpus.a["d5"], stars=3)
    Rating.objects.filter(question=corpus.q["q3"]).update(created_at=timezone.now() - timedelta(days=8))
    client.force_login(rater)

    html = card(client)

    assert "<html" not in html  # htmx gets the card alone, which no longer asks to be loaded again
    assert "hx-get" not in html
    assert (
        'data-testid="contribution">You have rated <strong>2</strong> answers in this collection, '
        '<strong>1</strong> of them in the last 7 days. <strong data-testid="questions-waiting">3 questions</strong> '
        "wait for you.</p>"
    ) in html
    assert (
        f'data-testid="rate-next-question" href="{reverse("rate-next", args=["tiny"])}">Rate the next question'
        in html
    )


def test_contribution_with_nothing_waiting_thanks_instead_of_linking(client, corpus, rater):
    a, q = corpus.a, corpus.q
    for question, answers in ((q["q1"], ("d1", "d2")), (q["q2"], ("d3", "d4")), (q["q3"], ("d5", "d2"))):
        for key in answers:
            rating_record(rater=rater, question=question, answer=a[key], stars=1)
    client.force_login(rater)

    html = card(client)

    assert '<strong data-testid="questions-waiting">0 questions</strong> wait for you.' in html
    assert 'data-testid="nothing-waiting">Nothing is waiting for you here. Thank you!' in html
    assert "rate-next-question" not in html


def test_contribution_without_htmx_is_a_page_of_its_own(client, corpus, rater):
    client.force_login(rater)

    html = card(client, htmx=False)

    assert '<h1 id="page-heading">Your contribution <span class="muted">Tiny</span></h1>' in html
    assert "Your contribution</h2>" not in html
    assert '<strong data-testid="questions-waiting">3 questions</strong> wait for you.' in html


def test_contribution_of_a_collection_one_is_not_in_is_404(client, corpus, outsider):
    client.force_login(outsider)

    assert client.get(reverse("rate-contribution", args=["tiny"])).status_code == 404
