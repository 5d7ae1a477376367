"""403, 404 and 500 pages in the site's layout with a way back (config/errors.py, templates/4xx/500),
the favicon, and django-htmx's script included once."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import OperationalError
from django.db.backends.utils import CursorWrapper
from django.test import RequestFactory

from config import errors

HOME_LINK = '<li><a href="/">My collections</a></li>'


def names(response) -> list[str]:
    """Templates rendered for the response (with DEBUG=1 Django's technical page, unnamed, comes first)."""
    return [t.name for t in response.templates if t.name is not None]


@pytest.mark.parametrize("debug", [False, True])
def test_404_page_unknown_path_is_styled_with_way_back(client, trainer, settings, debug):
    settings.DEBUG = debug
    client.force_login(trainer)
    response = client.get("/no-such-page/", HTTP_REFERER="http://testserver/c/tiny/manage/")
    assert response.status_code == 404
    assert names(response)[:3] == ["404.html", "error_page.html", "base.html"]
    content = response.content.decode()
    assert "<title>Page not found · Rank Trainer</title>" in content
    assert "There is no page at <code>/no-such-page/</code>" in content
    assert '<li><a href="http://testserver/c/tiny/manage/">Go back</a></li>' in content
    assert HOME_LINK in content
    assert "Using the URLconf" not in content


def test_404_page_view_raising_http404_is_styled_under_debug(client, trainer, settings):
    settings.DEBUG = True
    client.force_login(trainer)
    response = client.get("/c/no-such-collection/manage/")
    assert response.status_code == 404
    assert names(response)[0] == "404.html"


def test_404_page_technical_when_debug_technical_404(client, settings):
    settings.DEBUG = True
    settings.DEBUG_TECHNICAL_404 = True
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "Using the URLconf defined in <code>config.urls</code>" in response.content.decode()


def test_404_page_back_link_never_points_outside(client, db):
    response = client.get("/no-such-page/", HTTP_REFERER="https://evil.example/")
    content = response.content.decode()
    assert "evil.example" not in content
    assert '<li><a href="/login/">Log in</a></li>' in content


def test_403_page_shows_reason_with_way_back(client, rater):
    client.force_login(rater)
    response = client.get("/c/tiny/manage/")
    assert response.status_code == 403
    assert names(response)[:3] == ["403.html", "error_page.html", "base.html"]
    content = response.content.decode()
    assert '<p class="error" role="alert">Only trainers of this collection can manage it.</p>' in content
    assert HOME_LINK in content


def test_500_page_is_styled_without_touching_the_database(db):
    request = RequestFactory().get("/c/tiny/")
    down = OperationalError("connection refused")
    with mock.patch.object(CursorWrapper, "execute", side_effect=down) as execute:
        response = errors.server_error(request)
    assert execute.call_count == 0
    assert response.status_code == 500
    content = response.content.decode()
    assert "<title>Server error · Rank Trainer</title>" in content
    assert "Something went wrong on our side" in content
    assert HOME_LINK in content


def test_error_handlers_are_ours():
    from config import urls

    assert (urls.handler403, urls.handler404, urls.handler500) == (
        "config.errors.permission_denied",
        "config.errors.page_not_found",
        "config.errors.server_error",
    )


def test_base_links_favicon(client, db):
    content = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in content


def test_favicon_ico_redirects_to_static_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"


@pytest.mark.parametrize("debug", [False, True])
def test_base_includes_htmx_once_and_never_django_htmx_debug_script(client, db, settings, debug):
    # The debug script swaps a 4xx body in place of the page (issue 34, §4.1): pages must fail the same
    # way with DEBUG on as off (tests/browser/test_rater_walk.py sees it in a browser).
    settings.DEBUG = debug
    content = client.get("/login/").content.decode()
    assert content.count("django_htmx/htmx-2.min.js") == 1
    assert content.count("django_htmx/django-htmx.js") == 0
