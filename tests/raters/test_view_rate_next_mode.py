"""/c/<slug>/rate/?mode=...: the mode stays for the session, ?mode= leaves it, an empty mode falls back."""

import pytest
from django.urls import reverse

from ratings.services import rating_record
from tests.evaluation.decide_scenario import two_versions
from tests.raters.conftest import table_refreshed

pytestmark = pytest.mark.django_db

URL = reverse("rate-next", args=["tiny"])


@pytest.fixture
def scenario(corpus, collection, make_user):
    scenario = two_versions(collection, make_user, corpus)
    table_refreshed(collection)  # the evaluations' top k, as the table's job reads them
    return scenario


def test_rate_next_mode_decide_goes_to_the_deciding_question_and_stays(client, scenario, rater):
    client.force_login(rater)
    q2 = reverse("rate-question", args=["tiny", scenario.corpus.q["q2"].pk])

    assert client.get(f"{URL}?mode=decide")["Location"] == q2
    # Without the parameter the session keeps the mode (the page's "next question" link has none).
    assert client.get(URL)["Location"] == q2


def test_rate_page_in_a_mode_says_so_with_the_way_back(client, scenario, rater):
    client.force_login(rater)

    page = client.get(f"{URL}?mode=decide", follow=True).content.decode()
    back = client.get(f"{URL}?mode=", follow=True).content.decode()

    # The same pair as the pick's reason: the champion and the newest other version.
    assert (
        '<p class="small" data-testid="queue-mode">You are rating the answers that decide whether version v4 '
        "is better than version v3." in page
    )
    assert "decide whether version v4 is better than version v3" in page.split('id="task-reason"')[1]
    assert f'<a href="{URL}?mode=">Back to the usual order</a>' in page
    assert 'data-testid="queue-mode"' not in back


def test_rate_page_in_decide_mode_without_a_challenger_names_the_headline(client, scenario, rater):
    client.force_login(rater)
    page = client.get(f"{URL}?mode=decide&champion={scenario.v3.pk}&challenger=0", follow=True)

    assert (
        '<p class="small" data-testid="queue-mode">You are rating the answers that decide how sure we are of '
        "the ranker&#x27;s score." in page.content.decode()
    )


def test_rate_page_in_unsure_mode_says_so(client, scenario, rater):
    client.force_login(rater)

    page = client.get(f"{URL}?mode=unsure", follow=True).content.decode()

    assert (
        '<p class="small" data-testid="queue-mode">You are rating the training questions the ranker is least '
        "sure of." in page
    )


def test_rate_next_empty_mode_returns_to_the_usual_queue(client, scenario, rater):
    client.force_login(rater)
    client.get(f"{URL}?mode=decide")

    page = client.get(f"{URL}?mode=", follow=True).content.decode()

    # The usual queue's first rule (unrated answers in a test question's latest top 10), not "decides".
    assert "so we cannot tell how well the ranker did on it" in page
    assert "decide whether" not in page


def test_rate_next_mode_with_nothing_left_falls_back_to_the_usual_queue(client, scenario, rater):
    q2, a = scenario.corpus.q["q2"], scenario.corpus.a
    for key in ("d5", "d6"):
        rating_record(rater=rater, question=q2, answer=a[key], stars=0)
    client.force_login(rater)

    location = client.get(f"{URL}?mode=decide")["Location"]

    train = {reverse("rate-question", args=["tiny", scenario.corpus.q[k].pk]) for k in ("q1", "q3")}
    assert location in train
