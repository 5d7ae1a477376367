"""Which versions are the same model as an earlier one (``trainer.selectors.same_models``), read from what
each version stores: method, signals and weights, the content hashes in its model and rated-file names."""

from __future__ import annotations

import pytest

from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create
from trainer.selectors import same_model_as, same_models

pytestmark = pytest.mark.django_db

FUSION = {"params": {"signals": ["bm25", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)}}


def _version(ranker, label, method, details=None, model_file=""):
    return RankerVersion.objects.create(
        ranker=ranker, label=label, method=method, details=details or {}, model_file=model_file
    )


def _labels(same: dict[int, RankerVersion]) -> dict[str, str]:
    return {RankerVersion.objects.get(pk=pk).label: version.label for pk, version in same.items()}


def test_same_models_of_a_builtin_ranker(collection):
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")  # v1 fusion, bm25
    _version(ranker, "v2", "fusion", {**FUSION, "candidates": [], "training_questions": 190})
    _version(ranker, "v3", "bm25")
    _version(ranker, "v4", "fusion", {"params": {"signals": ["bm25", "cosine"], "weights": [0.3, 0.7]}})
    model = "models/ranker-1/v5-1a2b3c4d5e6f.txt"
    _version(ranker, "v5", "lambdamart", {"params": {"signals": ["rm3"]}}, model_file=model)
    _version(
        ranker,
        "v6",
        "lambdamart",
        {"params": {"signals": ["rm3"]}},
        model_file="models/ranker-1/v6-1a2b3c4d5e6f.txt",
    )
    _version(
        ranker,
        "v7",
        "lambdamart",
        {"params": {"signals": ["rm3"]}},
        model_file="models/ranker-1/v7-ffffffffffff.txt",
    )
    learned = {"signals": ["bm25", "cosine", "rm3", "propagation"], "weights": [0.1, 0.2, 0.3, 0.4]}
    _version(
        ranker,
        "v8",
        "learned-fusion",
        {"params": learned, "rated_file": "models/ranker-1/v8-aaaaaaaaaaaa-rated.npz"},
    )
    _version(
        ranker,
        "v9",
        "learned-fusion",
        {"params": learned, "rated_file": "models/ranker-1/v9-bbbbbbbbbbbb-rated.npz"},
    )
    _version(
        ranker,
        "v10",
        "learned-fusion",
        {"params": learned, "rated_file": "models/ranker-1/v10-aaaaaaaaaaaa-rated.npz"},
    )

    # v2: the untrained fusion again; v3: plain BM25 as the baseline; v6: v5's model file (same hash);
    # v10: v8's weights and rated questions. v4 (other weights), v7 (another model), v9 (other ratings) are new.
    assert _labels(same_models(ranker=ranker)) == {"v2": "v1", "v3": "bm25", "v6": "v5", "v10": "v8"}
    assert same_model_as(version=RankerVersion.objects.get(ranker=ranker, label="v2")).label == "v1"
    assert same_model_as(version=RankerVersion.objects.get(ranker=ranker, label="v4")) is None


@pytest.mark.parametrize("kind", ["engine", "http"])
def test_same_models_of_a_service_ranker_follow_its_announcements(collection, kind):
    ranker = Ranker.objects.create(collection=collection, name="Service", kind=kind)  # no service called
    _version(ranker, "v1", "")  # the service as it is
    _version(ranker, "v2", "engine", {"first_stage": "engine"})  # a training that kept its order
    _version(ranker, "deploy-7", "")  # a model the service announced: new
    _version(ranker, "v3", "engine", {"first_stage": "engine"})
    _version(ranker, "v4", "fusion", {"params": {"signals": ["engine", "cosine"], "weights": [0.5, 0.5]}})
    _version(ranker, "v5", "fusion", {"params": {"signals": ["engine", "cosine"], "weights": [0.5, 0.5]}})

    assert _labels(same_models(ranker=ranker)) == {"v2": "v1", "v3": "deploy-7", "v5": "v4"}
