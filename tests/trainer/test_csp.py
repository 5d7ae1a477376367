"""The Content-Security-Policy header (config/csp.py): sent with DEBUG=0 on pages, API answers and
error pages; the API docs' relaxed styles; none with DEBUG=1. The browser test (tests/browser/test_csp.py)
shows the pages satisfy it."""

from __future__ import annotations

import re

import pytest

from config.csp import DOCS, POLICY, header_value
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

STRICT = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def test_policy_header_value_is_the_documented_one():
    assert header_value(POLICY) == STRICT
    assert (
        header_value(DOCS)
        == STRICT.replace("style-src 'self';", "style-src 'self' 'unsafe-inline';")
        + "; worker-src 'self' blob:"
    )


@pytest.mark.parametrize("path", ["/login/", "/no-such-page/", "/api/rankers/", "/healthz"])
def test_csp_sent_with_debug_off(client, settings, path):
    settings.DEBUG = False
    assert client.get(path)["Content-Security-Policy"] == STRICT


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_api_docs_allow_inline_styles_only(client, settings, path):
    settings.DEBUG = False
    assert client.get(path)["Content-Security-Policy"] == header_value(DOCS)


def test_no_csp_with_debug_on(client, settings):
    settings.DEBUG = True
    assert "Content-Security-Policy" not in client.get("/login/")


def test_templates_have_no_inline_script_handler_or_style():
    # What the policy would refuse: <script> without src (json_script data blocks are rendered by a
    # filter, not written in templates), on*="..." handlers, style="..." attributes, <style> elements.
    found = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text()
        for pattern in (r"<script(?![^>]*\bsrc=)[^>]*>", r"\son[a-z]+\s*=", r"\sstyle\s*=", r"<style[\s>]"):
            found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in re.finditer(pattern, text)]
    assert found == []
