"""Shared data for the rankers pages' tests (imported by their test modules).

``tiny`` has a builtin ranker (champion v1, plain BM25) and a trained v2 whose figures are written by
hand, so the pages' numbers can be checked exactly; ``assert_authz`` walks the four kinds of user.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from corpus.models import Collection
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create

COMPARISON = {
    "k": 10,
    "questions": 45,
    "challenger_ndcg": 0.41234,
    "champion_ndcg": 0.37111,
    "difference": 0.04123,
    "ci_low": 0.0121,
    "ci_high": 0.0704,
    "p_value": 0.0042,
    "improved": 20,
    "worsened": 8,
    "verdict": "better",
    "champion": "v1",
}

DETAILS = {
    "candidates": 100,
    "training_questions": 105,
    "learnable_questions": 98,
    "question_count": 105,
    "seconds": 12.34,
    "grid": [
        {"num_leaves": 3, "learning_rate": 0.1, "cv_ndcg": 0.5012},
        {"num_leaves": 7, "learning_rate": 0.05, "cv_ndcg": 0.5123},
    ],
    "params": {"num_leaves": 7, "learning_rate": 0.05},
    "cv_comparison": {
        "difference": 0.0822,
        "ci_low": 0.051,
        "ci_high": 0.1135,
        "p_value": 0.0005,
        "questions": 98,
    },
}


@dataclass
class Rankers:
    collection: Collection
    ranker: Ranker
    v1: RankerVersion
    v2: RankerVersion


@pytest.fixture
def rankers(collection) -> Rankers:
    """A builtin ranker of ``tiny``: v1 (plain BM25) is champion, v2 (LambdaMART) was trained and kept."""
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
    v1 = ranker.champion
    v2 = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="lambdamart",
        uses_model=True,
        label_count=1234,
        cv_ndcg_model=0.5123,
        cv_ndcg_bm25=0.4301,
        feature_importances={"bm25": 0.25, "title_coverage": 0.6, "doc_length": 0.15},
        details=DETAILS,
        comparison=COMPARISON,
    )
    return Rankers(collection=collection, ranker=ranker, v1=v1, v2=v2)


def assert_authz(
    client: Client, *, method: str, url: str, rater, outsider, trainer, ok: int, data: dict | None = None
) -> None:
    """Anonymous → login, trainer of another collection → 404, rater → 403, trainer → ``ok`` (each
    request with ``data``, if any)."""
    method_of = client.get if method == "get" else client.post

    def call(url: str):
        return method_of(url, data) if data is not None else method_of(url)

    client.logout()
    response = call(url)
    assert (response.status_code, response["Location"].split("?")[0]) == (302, "/login/")
    client.force_login(outsider)
    assert call(url).status_code == 404
    client.force_login(rater)
    assert call(url).status_code == 403
    client.force_login(trainer)
    assert call(url).status_code == ok
