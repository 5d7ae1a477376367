"""Error pages in a browser: the styled 404 with a working way back, and no request of a page fails
(the favicon included)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser]


def failed_requests(page) -> list[str]:
    """Every response of 400 or more and every request that failed, except those the browser aborted
    because the page navigated away (the favicon of a page left at once): those say nothing of the
    server."""
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on(
        "requestfailed",
        lambda r: (
            None if r.failure == "net::ERR_ABORTED" else failures.append(f"failed {r.url}: {r.failure}")
        ),
    )
    return failures


def test_404_page_styled_with_way_back_to_collections(page, live_server, rater):
    log_in(page, live_server)
    failures = failed_requests(page)
    page.goto(f"{live_server.url}/no-such-page/")
    assert page.title() == "Page not found · Rank Trainer"
    assert page.get_by_role("heading", level=1).inner_text() == "Page not found"
    page.get_by_role("navigation", name="Way back").get_by_role("link", name="My collections").click()
    page.wait_for_url(f"{live_server.url}/")
    assert failures == [f"404 {live_server.url}/no-such-page/"]


def test_favicon_loads_without_errors(page, live_server, rater):
    failures = failed_requests(page)
    page.goto(f"{live_server.url}/login/")
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href == "/static/favicon.svg"
    status = page.evaluate("async (url) => (await fetch(url)).status", href)
    icon_type = page.evaluate("async () => (await fetch('/favicon.ico')).headers.get('content-type')")
    assert status == 200
    assert icon_type == "image/svg+xml"
    assert failures == []
