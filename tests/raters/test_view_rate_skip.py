import pytest
from django.urls import reverse

from ratings.models import Skip
from tests.ratings.conftest import HTMX

pytestmark = pytest.mark.django_db


def url(corpus, key="q1"):
    return reverse("rate-skip", args=[corpus.collection.slug, corpus.q[key].pk])


def test_rate_skip_records_reason_and_goes_to_next(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"reason": "too technical for me"})

    assert (response.status_code, response["Location"]) == (302, reverse("rate-next", args=["tiny"]))
    assert list(Skip.objects.values_list("rater", "question", "reason")) == [
        (rater.pk, corpus.q["q1"].pk, "too technical for me")
    ]


def test_rate_skip_without_reason(client, corpus, rater):
    client.force_login(rater)

    client.post(url(corpus), {})

    assert list(Skip.objects.values_list("reason", flat=True)) == [""]


def test_rate_skip_htmx_redirect_header(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"reason": ""}, **HTMX)

    assert (response.status_code, response["HX-Redirect"]) == (204, reverse("rate-next", args=["tiny"]))


def test_rate_skip_question_then_not_offered(client, corpus, rater):
    client.force_login(rater)
    for key in ("q1", "q3"):
        client.post(url(corpus, key))

    response = client.get(reverse("rate-next", args=["tiny"]))

    assert response["Location"] == reverse("rate-question", args=["tiny", corpus.q["q2"].pk])


def test_rate_skip_reason_too_long_400_nothing_stored(client, corpus, rater):
    client.force_login(rater)

    response = client.post(url(corpus), {"reason": "x" * 501}, **HTMX)

    assert response.status_code == 400
    assert response.json() == {"error": "The reason can be at most 500 characters.", "field": "reason"}
    assert Skip.objects.count() == 0


def test_rate_skip_anonymous_and_non_member_refused(client, corpus, outsider):
    assert client.post(url(corpus))["Location"].startswith("/login/")
    client.force_login(outsider)
    assert client.post(url(corpus)).status_code == 404
    assert Skip.objects.count() == 0


@pytest.mark.parametrize("role", ["rater", "trainer"])
def test_rate_skip_members_may_skip(client, corpus, request, role):
    client.force_login(request.getfixturevalue(role))

    assert client.post(url(corpus)).status_code == 302
    assert Skip.objects.count() == 1
