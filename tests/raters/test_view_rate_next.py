import pytest
from django.urls import reverse

from ratings.services import rating_record

pytestmark = pytest.mark.django_db

URL = reverse("rate-next", args=["tiny"])


def test_rate_next_redirects_to_the_queue_question(client, corpus, rater):
    client.force_login(rater)

    response = client.get(URL)

    assert response.status_code == 302
    question_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    assert question_id in {corpus.q["q1"].pk, corpus.q["q3"].pk}


def test_rate_next_after_passes_over_current_question(client, corpus, rater):
    client.force_login(rater)
    first = client.get(URL)["Location"]
    first_id = first.rstrip("/").rsplit("/", 1)[1]

    second = client.get(f"{URL}?after={first_id}")["Location"]

    assert second != first


def test_rate_next_after_only_remaining_question_returns_it(client, corpus, rater):
    a, q = corpus.a, corpus.q
    for question, answers in ((q["q1"], ("d1", "d2")), (q["q3"], ("d5", "d2"))):
        for key in answers:
            rating_record(rater=rater, question=question, answer=a[key], stars=1)
    client.force_login(rater)

    response = client.get(f"{URL}?after={q['q2'].pk}")

    assert response["Location"] == reverse("rate-question", args=["tiny", q["q2"].pk])


def test_rate_next_task_kept_for_the_question_page(client, corpus, rater):
    client.force_login(rater)
    location = client.get(URL)["Location"]

    html = client.get(location).content.decode()

    assert "Chosen because 2 answers need more ratings (the target is 1 rater per answer)." in html


def test_rate_next_all_done_page(client, corpus, rater):
    a, q = corpus.a, corpus.q
    for question, answers in ((q["q1"], ("d1", "d2")), (q["q2"], ("d3", "d4")), (q["q3"], ("d5", "d2"))):
        for key in answers:
            rating_record(rater=rater, question=question, answer=a[key], stars=1)
    client.force_login(rater)

    response = client.get(URL)

    assert response.status_code == 200
    assert "<h1>All done</h1>" in response.content.decode()


def test_rate_next_anonymous_redirected_non_member_404(client, corpus, outsider):
    assert client.get(URL)["Location"] == f"/login/?next={URL}"
    client.force_login(outsider)
    assert client.get(URL).status_code == 404
