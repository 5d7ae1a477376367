"""The training settings form of a builtin ranker: promotion policy and automatic training."""

from __future__ import annotations

from django.urls import reverse

from rankers.models import PromotionPolicy
from rankers.services import ranker_create
from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import assert_authz


def _url(ranker) -> str:
    return reverse("ranker-settings", args=[ranker.collection.slug, ranker.pk])


def _form(ranker, policy: str = "not-worse", labels: str = "50", hours: str = "24") -> dict[str, str]:
    prefix = f"r{ranker.pk}"
    return {
        f"{prefix}-promotion_policy": policy,
        f"{prefix}-auto_train_labels": labels,
        f"{prefix}-auto_train_hours": hours,
    }


def test_ranker_settings_authz(client, rankers, rater, outsider, trainer):
    url = _url(rankers.ranker)
    assert url == f"/c/tiny/rankers/{rankers.ranker.pk}/settings/"
    # An empty POST is invalid (no policy chosen): the trainer gets the page back with the error.
    assert_authz(client, method="post", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=400)
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.promotion_policy == PromotionPolicy.BETTER


def test_ranker_settings_saves_and_redirects(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers.ranker), _form(rankers.ranker))

    assert (response.status_code, response["Location"]) == (
        303,
        "/c/tiny/rankers/",
    )
    ranker = rankers.ranker
    ranker.refresh_from_db()
    assert (ranker.promotion_policy, ranker.auto_train_labels, ranker.auto_train_hours) == (
        "not-worse",
        50,
        24,
    )
    page = client.get(response["Location"])
    assert [str(m) for m in page.context["messages"]] == ["Training settings of Built-in saved."]
    body = page.content.decode()
    assert "<dd>Promote unless significantly worse (p &lt; 0.05)</dd>" in body
    assert "<dd>after 50 new training labels; every 24 hours</dd>" in body


def test_ranker_settings_offers_and_saves_the_settled_policy(client, rankers, trainer):
    client.force_login(trainer)
    form_page = client.get(reverse("rankers", args=["tiny"])).content.decode()
    assert 'value="settled"' in form_page

    response = client.post(_url(rankers.ranker), _form(rankers.ranker, policy="settled"))

    assert response.status_code == 303
    rankers.ranker.refresh_from_db()
    assert rankers.ranker.promotion_policy == PromotionPolicy.SETTLED
    body = client.get(response["Location"]).content.decode()
    assert (
        "<dd>Promote only if significantly better, also counting the unrated answers (settled)</dd>" in body
    )


def test_ranker_settings_empty_numbers_turn_automatic_training_off(client, rankers, trainer):
    rankers.ranker.auto_train_labels, rankers.ranker.auto_train_hours = 10, 6
    rankers.ranker.save()
    client.force_login(trainer)

    response = client.post(_url(rankers.ranker), _form(rankers.ranker, policy="manual", labels="", hours=""))

    assert response.status_code == 303
    ranker = rankers.ranker
    ranker.refresh_from_db()
    assert (ranker.promotion_policy, ranker.auto_train_labels, ranker.auto_train_hours) == (
        "manual",
        None,
        None,
    )


def test_ranker_settings_zero_labels_is_refused_with_the_field_error(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers.ranker), _form(rankers.ranker, labels="0"))

    assert response.status_code == 400
    body = response.content.decode()
    assert "Ensure this value is greater than or equal to 1." in body
    assert '<details class="settings" open>' in body
    ranker = rankers.ranker
    ranker.refresh_from_db()
    assert (ranker.promotion_policy, ranker.auto_train_labels) == ("better", None)


def test_ranker_settings_unknown_policy_is_refused(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers.ranker), _form(rankers.ranker, policy="always"))

    assert response.status_code == 400
    assert "Select a valid choice. always is not one of the available choices." in response.content.decode()


def test_ranker_settings_http_ranker_saves_them_too(client, collection, trainer):
    # An http ranker trains a reranker of its service's answers, with the same policy and schedule.
    service = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )
    client.force_login(trainer)

    assert client.post(_url(service), _form(service)).status_code == 303
    service.refresh_from_db()
    assert (service.promotion_policy, service.auto_train_labels, service.auto_train_hours) == (
        "not-worse",
        50,
        24,
    )
