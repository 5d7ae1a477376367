"""The API docs work offline: Swagger UI and ReDoc come from our static files, never from a CDN."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def offline(page, live_server) -> list[str]:
    """Abort every request that leaves the app's origin (as with no network); returns their URLs."""
    blocked: list[str] = []

    def route(route):
        if route.request.url.startswith(live_server.url + "/"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    return blocked


def test_api_docs_swagger_renders_operations_offline(page, live_server):
    blocked = offline(page, live_server)
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".opblock").first.wait_for()
    operations = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/rankers/" in [text.replace("\u200b", "") for text in operations]
    assert blocked == []


def test_api_redoc_renders_operations_offline(page, live_server):
    blocked = offline(page, live_server)
    page.goto(f"{live_server.url}/api/redoc/")
    page.locator("[data-section-id^='operation/']").first.wait_for()
    assert page.locator("[data-section-id^='operation/']").count() >= 10
    assert blocked == []
