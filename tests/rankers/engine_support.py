"""The stand-in search engine of the engine-ranker tests (imported by their modules).

``DOCS`` is small enough to score by hand with the server's scorer (idf × tf / (tf + 1) per distinct
question term, idf = ln(1 + N / df), N = 4): for "boundary layer", a1 has each term twice (title and
text) and a3 once, both terms in 2 of the 4 documents, so

    a1: 2 × ln(3) × 2/3 = 1.464816      a3: 2 × ln(3) × 1/2 = 1.098612
"""

from __future__ import annotations

import pytest

from tests.servers import engine_running

DOCS = {
    "a1": {"title": "Boundary layer", "text": "The boundary layer of a flat plate."},
    "a2": {"title": "Shock waves", "text": "Shock waves in supersonic flow."},
    "a3": {"title": "Heat transfer", "text": "Heat transfer at hypersonic speed in the boundary layer."},
    "a4": {"title": "Naïve ☃ flow", "text": "A unicode answer."},
}
BOUNDARY_LAYER = [("a1", 1.464816), ("a3", 1.098612)]
# Everything that breaks a request pasted together as text: quotes, a backslash, JSON and URL syntax,
# non-ASCII (accented, a snowman, an emoji outside the BMP) and a control character.
NASTY = 'boundary "layer" \\ {x} & #frag ?a=b+c %20 naïve ☃ 😀 \t end'


@pytest.fixture(name="engine")
def engine_fixture():
    with engine_running(DOCS) as server:
        yield server


def es_config(url: str, **extra) -> dict:
    return {"preset": "elasticsearch", "url": f"{url}/answers/_search", "retries": 0, **extra}


def solr_config(url: str, **extra) -> dict:
    return {"preset": "solr", "url": f"{url}/solr/answers/select", "retries": 0, **extra}
