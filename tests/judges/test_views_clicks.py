"""The "Clicks beside ratings" page of a collection's judges: trainers only, figures of the hand-built log
(``tests/evaluation/click_log.py``; worked by hand in ``tests/judges/test_clicks.py``), its parameters."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from corpus.models import Role
from corpus.services import membership_set
from judges.services import judge_create
from tests.evaluation.click_log import clicky_collection, rate_clicky
from ubi.production_questions import production_question_id

URL = "/c/clicky/judges/clicks/"


@pytest.fixture
def clicky(db):
    collection = clicky_collection()
    users = get_user_model().objects
    trainer = users.create_user(username="clicky-trainer", password=None)
    rater = users.create_user(username="clicky-rater", password=None)
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    membership_set(collection=collection, user=rater, role=Role.RATER)
    rate_clicky(collection, rater)
    return collection, trainer, rater


@pytest.mark.parametrize(
    ("who", "status"), [("anonymous", 302), ("rater", 403), ("other", 404), ("trainer", 200)]
)
def test_clicks_page_access(clicky, outsider, who, status):
    collection, trainer, rater = clicky
    client = Client()
    if who != "anonymous":
        client.force_login({"rater": rater, "other": outsider, "trainer": trainer}[who])

    assert client.get(URL).status_code == status


def test_clicks_page_shows_agreement_for_the_date_range(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    response = client.get(URL, {"max_rank": 20, "start_date": "2026-11-28", "end_date": "2026-11-28"})

    assert response.status_code == 200
    people = next(c for c in response.context["c"].comparisons if (c.method, c.grader) == ("coec", "people"))
    assert (people.pairs, people.far) == (5, 2)
    body = response.content.decode()
    assert "<td>people</td><td>5</td>\n      <td>0.186</td><td>40%</td><td>0.252</td><td>2</td>" in body
    assert '<label for="query-1">cheap phones</label></td><td>2</td>' in body
    assert response.context["j"].events == 16


def test_clicks_page_bad_range_names_the_field_and_uses_defaults(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    response = client.get(URL, {"start_date": "2026-11-29", "end_date": "2026-11-28"})

    assert response.status_code == 200
    assert response.context["form"].errors == {"end_date": ["The range ends before it starts."]}
    assert response.context["j"].events == 17  # every day


def test_clicks_questions_import_adds_the_chosen_queries(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    response = client.post(URL + "questions/", {"query": ["cheap phones", "laptop bag"]}, follow=True)

    assert response.redirect_chain == [(URL, 303)]
    assert "Added 1 question from the production log (1 already were questions)." in response.content.decode()
    added = collection.questions.get(external_id=production_question_id("cheap phones"))
    assert added.text == "cheap phones"
    assert response.context["j"].unmatched == []


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("rater", 403), ("other", 404)])
def test_clicks_questions_import_refused_adds_nothing(clicky, outsider, who, status):
    collection, trainer, rater = clicky
    client = Client()
    if who != "anonymous":
        client.force_login({"rater": rater, "other": outsider}[who])

    response = client.post(URL + "questions/", {"query": ["cheap phones"]})

    assert response.status_code == status
    assert collection.questions.count() == 2


def test_clicks_questions_import_of_a_text_never_logged_says_so(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    response = client.post(URL + "questions/", {"query": ["free lunch"]}, follow=True)

    assert "Never asked in the production log: &#x27;free lunch&#x27;." in response.content.decode()
    assert collection.questions.count() == 2


def test_clicks_judge_page_offers_its_one_selection(clicky):
    collection, trainer, rater = clicky
    judge = judge_create(collection=collection, name="Clicks", kind="clicks")
    client = Client()
    client.force_login(trainer)

    response = client.get(f"/c/clicky/judges/{judge.pk}/")

    assert response.context["judging_form"]["selection"].value() == "clicked"
    assert "Clicks (production log)" in response.content.decode()


def test_clicks_page_says_what_to_do_next_before_the_figures(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    body = client.get(URL, {"start_date": "2026-11-28", "end_date": "2026-11-28"}).content.decode()

    nxt = body.split('data-testid="clicks-next">')[1].split("</section>")[0]
    assert body.index('data-testid="clicks-next"') < body.index('id="log-heading"')
    assert " ".join(nxt.split('data-testid="clicks-headline">')[1].split("</p>")[0].split()) == (
        "On the 4 pairs people rated too, cascade-corrected click rate stars match people's on 50% (weighted κ 0.188)."
    )
    assert '<a href="#far-heading">2 pairs where clicks and people are 2+ stars apart</a>' in nxt
    assert '<a href="#unmatched-heading">' in nxt


def test_clicks_page_without_clicks_says_how_to_log_them(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    body = client.get(URL, {"start_date": "2030-01-01"}).content.decode()

    nxt = body.split('data-testid="clicks-next">')[1].split("</section>")[0]
    assert "No clicks in the log of <code>clicky</code> yet for these settings." in " ".join(nxt.split())
    assert "clicks-headline" not in nxt


def test_clicks_page_rank_field_has_a_plain_name(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    body = client.get(URL).content.decode()

    assert '<label for="id_max_rank">Deepest rank counted:</label>' in body and ">maxRank:<" not in body


def test_clicks_page_far_pairs_rate_link_sits_in_the_first_cell(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    body = client.get(URL, {"start_date": "2026-11-28", "end_date": "2026-11-28"}).content.decode()

    rows = body.split('data-testid="clicks-far">')[1].split("</tbody>")[0].split("<tr>")[2:]
    assert len(rows) == 2
    for row in rows:
        first = row.split("</td>")[0]
        assert re.search(r'<a class="row-action" href="/c/clicky/rate/\d+/">Rate</a>$', first)


def test_clicks_questions_import_with_nothing_ticked_says_to_tick_one(clicky):
    collection, trainer, rater = clicky
    client = Client()
    client.force_login(trainer)

    response = client.post(URL + "questions/", {})

    assert (response.status_code, response["Location"]) == (303, URL + "#unmatched-heading")
    assert "Tick at least one query to add it as a question." in client.get(URL).content.decode()
    assert collection.questions.count() == 2
