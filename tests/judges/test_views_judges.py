"""The judges pages: list and add, a judge's page (trust, Test connection, runs), agreement; access."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from judges.models import Judge, Judging
from judges.services import judge_create, judging_run

PAGES = ["", "{id}/", "{id}/agreement/"]
POSTS = ["new/", "{id}/edit/", "{id}/trust/", "{id}/test/", "{id}/judgings/"]


@pytest.fixture
def trainer_client(judged) -> Client:
    client = Client()
    client.force_login(judged.trainer)
    return client


@pytest.fixture
def builtin(judged):
    return judge_create(
        collection=judged.collection, name="Builtin", kind="builtin", api_key="sk-never-shown"
    )


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(
    ("who", "status"), [("anonymous", 302), ("rater", 403), ("other", 404), ("trainer", 200)]
)
def test_judges_pages_access(judged, builtin, outsider, page, who, status):
    client = Client()
    if who != "anonymous":
        client.force_login({"rater": judged.human, "other": outsider, "trainer": judged.trainer}[who])

    response = client.get(f"/c/judged/judges/{page.format(id=builtin.pk)}")

    assert response.status_code == status
    if status == 200:
        assert "sk-never-shown" not in response.content.decode()


@pytest.mark.parametrize("post", POSTS)
@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("rater", 403), ("other", 404)])
def test_judges_posts_refused_change_nothing(judged, builtin, outsider, post, who, status):
    client = Client()
    if who != "anonymous":
        client.force_login({"rater": judged.human, "other": outsider}[who])

    response = client.post(
        f"/c/judged/judges/{post.format(id=builtin.pk)}",
        {"name": "X", "kind": "builtin", "counts": "on", "selection": "test-top", "limit": 5},
    )

    assert response.status_code == status
    assert list(Judge.objects.values_list("name", flat=True)) == ["Builtin"]
    assert not Judging.objects.exists()
    builtin.account.refresh_from_db()
    assert builtin.account.counts is False


def test_add_judge_then_its_page(trainer_client, judged):
    response = trainer_client.post(
        "/c/judged/judges/new/",
        {
            "name": "Mine",
            "kind": "builtin",
            "temperature": 0,
            "concurrency": 2,
            "requests_per_minute": 0,
            "timeout_seconds": 30,
            "reply_format": "digit",
            "few_shot": 0,
            "prompt_template": "Q: {question} A: {answer}",
        },
    )

    judge = Judge.objects.get(name="Mine")
    assert response.status_code == 303 and response["Location"] == f"/c/judged/judges/{judge.pk}/"
    assert "Judge Mine added" in trainer_client.get(response["Location"]).content.decode()


def test_add_judge_template_without_placeholders_says_so(trainer_client, judged):
    response = trainer_client.post(
        "/c/judged/judges/new/",
        {
            "name": "Bad",
            "kind": "builtin",
            "temperature": 0,
            "concurrency": 2,
            "requests_per_minute": 0,
            "timeout_seconds": 30,
            "reply_format": "digit",
            "few_shot": 0,
            "prompt_template": "Grade it.",
        },
    )

    assert response.status_code == 400
    assert "The prompt template must contain {question}." in response.content.decode()
    assert not Judge.objects.filter(name="Bad").exists()


def test_test_connection_shows_the_raw_reply(trainer_client, judged, judge_server):
    judge = judge_create(
        collection=judged.collection, name="Ref", kind="openai-chat", base_url=judge_server.url, model="m"
    )

    response = trainer_client.post(f"/c/judged/judges/{judge.pk}/test/", follow=True)

    body = response.content.decode()
    assert 'data-testid="test-outcome"' in body
    assert "<strong>Grade:</strong> 3" in body and '<pre class="reply">3</pre>' in body


def test_trust_toggle_says_what_changed(trainer_client, judged, builtin):
    response = trainer_client.post(f"/c/judged/judges/{builtin.pk}/trust/", {"counts": "on"}, follow=True)

    builtin.account.refresh_from_db()
    assert builtin.account.counts is True and builtin.account.human_wins is False
    assert "now count toward labels (the judge is one more rater)" in response.content.decode()


def test_start_run_and_see_progress_then_agreement(trainer_client, judged, builtin):
    response = trainer_client.post(
        f"/c/judged/judges/{builtin.pk}/judgings/",
        {"selection": "questions", "limit": 50, "question_ids": "q1, q2", "budget_tokens": 0},
        follow=True,
    )
    judging = Judging.objects.get()
    assert f"Judging {judging.total} pairs with Builtin." in response.content.decode()
    judging_run(judging_id=judging.pk, worker="test")

    progress = trainer_client.get(f"/c/judged/judges/{builtin.pk}/judgings/{judging.pk}/progress/")
    agreement = trainer_client.get(f"/c/judged/judges/{builtin.pk}/agreement/")

    assert f"{judging.total} of {judging.total} judged" in progress.content.decode()
    assert "hx-get" not in progress.content.decode()  # finished: no more polling
    body = agreement.content.decode()
    assert "On the 4 pairs both the judge and people rated" in body
    assert "Thomas et al., SIGIR 2024" in body and "Clarke and" in body
    assert 'data-testid="agreement-empty"' not in body


def test_agreement_with_no_pair_rated_by_both_says_what_to_judge(trainer_client, judged, builtin):
    body = trainer_client.get(f"/c/judged/judges/{builtin.pk}/agreement/").content.decode()

    assert "On the 0 pairs both the judge and people rated" in body
    assert 'data-testid="agreement-empty">No pair has been rated by both yet' in body
    assert f'href="/c/judged/judges/{builtin.pk}/#runs"' in body


def test_start_run_nothing_to_judge_says_so(trainer_client, judged, builtin):
    response = trainer_client.post(
        f"/c/judged/judges/{builtin.pk}/judgings/",
        {"selection": "questions", "limit": 50, "question_ids": "nope", "budget_tokens": 0},
        follow=True,
    )

    assert "No question &#x27;nope&#x27; in this collection." in response.content.decode()
    assert not Judging.objects.exists()


def test_rankers_page_links_to_judges(trainer_client, judged):
    assert 'href="/c/judged/judges/"' in trainer_client.get("/c/judged/rankers/").content.decode()


def test_start_run_on_test_top_before_any_evaluation_says_where_to_run_one(trainer_client, judged, builtin):
    response = trainer_client.post(
        f"/c/judged/judges/{builtin.pk}/judgings/",
        {"selection": "test-top", "limit": 50, "question_ids": "", "budget_tokens": 0},
        follow=True,
    )

    assert not Judging.objects.exists()
    assert (
        '<li class="message error">No evaluation yet, so the test questions&#x27; top 10 is not known: run one first '
        "(Run evaluation on the collection&#x27;s dashboard)." in response.content.decode()
    )


def test_add_judge_form_says_what_a_clicks_judge_model_is(trainer_client, judged):
    html = trainer_client.get("/c/judged/judges/").content.decode()

    assert re.search(r'<input type="text" name="model"[^>]*aria-describedby="id_model_helptext"', html)
    assert (
        '<span class="helptext" id="id_model_helptext">OpenAI chat completions: the model\'s name. Clicks: '
        "dbn (the cascade click model, the default), coec (clicks over expected clicks) or pbm (the position-based "
        "click model).</span>"
    ) in html
