"""The admin links back to the app; trainers and raters (not staff) are sent to the app with a message."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from corpus.models import Role
from corpus.services import collection_create, membership_set

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_admin_non_staff_trainer_is_sent_to_the_app_with_a_message(client, trainer):
    client.force_login(trainer)
    response = client.get("/admin/", follow=True)
    assert response.redirect_chain[-1] == (reverse("home"), 302)
    assert (
        '<li class="message info">The admin is for staff accounts only. Everything trainers and raters do is '
        "here in Rank Trainer: dashboards, rating, rankers and collection settings are all under My "
        "collections.</li>"
    ) in text(response)


def test_admin_login_page_of_non_staff_rater_redirects_to_the_app(client, rater):
    client.force_login(rater)
    response = client.get("/admin/login/?next=/admin/")
    assert (response.status_code, response["Location"]) == (302, reverse("home"))


def test_admin_login_with_non_staff_account_says_where_to_log_in(client, trainer):
    response = client.post("/admin/login/", {"username": "tom", "password": "pw-tom", "next": "/admin/"})
    assert response.status_code == 200
    body = text(response)
    assert (
        "This account is not a staff account, so it cannot use the admin. Trainers and raters log in to "
        "Rank Trainer at /login/ instead."
    ) in body
    assert '<a href="/login/">log in to Rank Trainer</a>' in body


def test_admin_login_with_wrong_password_keeps_the_generic_error(client, trainer):
    body = text(client.post("/admin/login/", {"username": "tom", "password": "wrong", "next": "/admin/"}))
    assert "not a staff account" not in body
    assert "Please enter the correct username and password for a staff account." in body


def test_admin_staff_sees_header_and_links_back_to_the_app_and_dashboards(client, make_user, collection):
    other = collection_create(name="Aero", slug="aero")
    collection_create(name="Not mine", slug="not-mine")
    staff = make_user("sam", collection=collection, role=Role.TRAINER, is_staff=True)

    membership_set(collection=other, user=staff, role=Role.RATER)
    client.force_login(staff)
    response = client.get("/admin/")
    assert response.status_code == 200
    body = text(response)
    assert '<div id="site-name"><a href="/admin/">Rank Trainer administration</a></div>' in body
    links = re.search(r'data-testid="app-links">(.*?)</nav>', body).group(1)
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', links) == [
        ("/", "← Back to Rank Trainer"),
        (reverse("evaluation:dashboard", args=["aero"]), "Aero dashboard"),
        (reverse("evaluation:dashboard", args=["tiny"]), "Tiny dashboard"),
    ]
    # Django's "View site" link goes to My collections too.
    assert '<a href="/">View site</a>' in body


def test_admin_link_shown_only_to_staff_the_admin_shows_something(client, make_user, collection):
    staff = make_user("sam", collection=collection, role=Role.TRAINER, is_staff=True)
    client.force_login(staff)
    home = reverse("home")

    assert '<a href="/admin/">Admin</a>' not in text(client.get(home))  # no permission: an empty admin
    staff.user_permissions.add(Permission.objects.get(codename="view_groundtruthimport"))
    assert '<a href="/admin/">Admin</a>' in text(client.get(home))
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    assert '<a href="/admin/">Admin</a>' in text(client.get(home))
