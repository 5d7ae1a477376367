"""Playwright (sync API) driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.db import connections

from corpus.models import Answer, Collection, Question, Role, Split
from corpus.services import collection_create

# Playwright's sync API runs an event loop in this thread, which trips Django's async-safety check
# for the ORM calls the tests make between browser steps.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One chromium per test module. Not per session: a running sync Playwright owns this thread's event
    loop, so another test directory's Playwright could not start until this one stops."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # ORM calls made while Playwright's loop runs may have opened connections of their own.
        connections.close_all()


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
