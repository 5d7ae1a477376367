"""Playwright (sync API) driving Debian's chromium against pytest-django's live server (the ``browser``
fixture, one chromium for all browser tests in a row: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.core.cache import cache

from corpus.models import Answer, Collection, Question, Role, Split
from corpus.services import collection_create


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def nojs_page(browser) -> Iterator[object]:
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


# What the Content-Security-Policy (sent with DEBUG=0, as in the tests) refuses, as a page sees it: this
# script runs in every page of a context before the page's own scripts, and CSP cannot block it (the browser
# injects it). Chromium also logs each refusal on the console.
CSP_LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
"""
# The one refusal by design: ReDoc's attribution logo from its CDN (the docs load nothing from outside).
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def csp_refused(page, console: list[str]) -> list[str]:
    """What CSP refused on the page loaded now (CSP_LISTEN's events and the console lines collected in
    ``console``, which is emptied), ReDoc's logo left out."""
    refused = page.evaluate("window.__csp") + [m for m in console if "Content Security Policy" in m]
    console.clear()
    return [r for r in refused if REDOC_LOGO not in r]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@dataclass
class Scene:
    collection: Collection
    question: Question
    answers: list[Answer]


ANSWER_TEXTS = [
    ("Wing lift", "Lift of a swept wing grows with the angle of attack."),
    ("Wing drag", "Drag of a wing at supersonic speed."),
    ("Wing flutter", "Flutter of a thin wing in a wind tunnel."),
    ("Wing tips", "Vortices shed at the wing tips."),
]


@pytest.fixture
def scene(transactional_db) -> Scene:
    """One question whose four candidates all share a term with it; no ranker, so term overlap picks them."""
    collection = collection_create(name="Tiny", slug="tiny")
    answers = [
        Answer.objects.create(collection=collection, external_id=f"d{i}", title=title, body=body)
        for i, (title, body) in enumerate(ANSWER_TEXTS, start=1)
    ]
    question = Question.objects.create(
        collection=collection, external_id="q1", text="How does a wing behave?", split=Split.TRAIN
    )
    return Scene(collection, question, answers)


@pytest.fixture
def rater(scene, django_user_model):
    from corpus.services import membership_set

    user = django_user_model.objects.create_user(username="rita", password="pw-rita-123")
    membership_set(collection=scene.collection, user=user, role=Role.RATER)
    return user


def log_in(
    page, live_server, *, username: str = "rita", password: str = "pw-rita-123", next_path: str = "/"
) -> None:
    page.goto(f"{live_server.url}/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}{next_path}*")
