"""Services for rankers, versions and API tokens."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from corpus.models import Role
from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from rankers import embedding
from rankers.backends import RankerError, get_backend
from rankers.embedding import EmbeddingUnavailable
from rankers.models import ChampionChange, Ranker, RankerVersion
from rankers.services import next_version_label, ranker_create
from trainer.models import ApiToken
from trainer.services import api_token_create, api_token_revoke, ranker_version_announce

pytestmark = pytest.mark.django_db


def test_ranker_create_http_stores_cleaned_config(collection):
    ranker = ranker_create(
        collection=collection, name=" Service ", kind="http", config={"url": "http://r.test/"}
    )

    assert (ranker.name, ranker.kind, ranker.config) == (
        "Service",
        "http",
        {"url": "http://r.test/", "timeout": 10.0, "retries": 2},
    )


def test_ranker_create_default_moves_the_default(collection):
    first = ranker_create(collection=collection, name="A", kind="builtin", is_default=True)
    second = ranker_create(collection=collection, name="B", kind="builtin", is_default=True)

    first.refresh_from_db()
    assert (first.is_default, second.is_default) == (False, True)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "", "kind": "builtin"}, "name"),
        ({"name": "x" * 201, "kind": "builtin"}, "name"),
        ({"name": "A", "kind": "solr"}, "kind"),
        ({"name": "A", "kind": "http", "config": {}}, "url"),
        ({"name": "A", "kind": "builtin", "config": {"candidates": 1}}, "candidates"),
    ],
)
def test_ranker_create_invalid_names_the_field_and_stores_nothing(collection, kwargs, field):
    with pytest.raises(ValidationError) as info:
        ranker_create(collection=collection, **kwargs)

    assert field in info.value.message_dict
    assert Ranker.objects.count() == 0


def test_ranker_create_duplicate_name_is_refused(collection):
    ranker_create(collection=collection, name="A", kind="builtin")

    with pytest.raises(ValidationError) as info:
        ranker_create(collection=collection, name="A", kind="builtin")

    assert "already has a ranker named 'A'" in info.value.message_dict["name"][0]


def test_ranker_create_builtin_first_champion_is_the_untrained_fusion(collection):
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")

    versions = list(ranker.versions.order_by("id").values_list("label", "method", "uses_model"))
    assert versions == [("v1", "fusion", True), ("bm25", "bm25", False)]
    assert (ranker.champion.label, ranker.champion.details["params"]) == (
        "v1",
        {"signals": ["bm25", "cosine"], "weights": [0.5, 0.5]},
    )
    change = ChampionChange.objects.get(ranker=ranker)
    assert change.reason.startswith("Version 1 (untrained fusion of BM25 and semantic similarity)")
    assert next_version_label(ranker) == "v2"


def test_ranker_create_builtin_without_the_model_champion_is_bm25_and_says_why(collection, monkeypatch):
    def missing(**kwargs):
        raise EmbeddingUnavailable("The embedding model package is not installed")

    monkeypatch.setattr(embedding, "load_encoder", missing)

    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")

    assert list(ranker.versions.values_list("label", "method")) == [("v1", "bm25")]
    assert ranker.champion.label == "v1"
    assert ChampionChange.objects.get(ranker=ranker).reason == (
        "Version 1 (plain BM25), created with the ranker. It is the champion because the semantic model "
        "is not available here (The embedding model package is not installed), so the untrained fusion "
        "of BM25 and semantic similarity cannot rank."
    )


def test_get_backend_unusable_stored_config_is_a_ranker_error(collection):
    ranker = Ranker.objects.create(collection=collection, name="Broken", kind="http", config={})

    with pytest.raises(RankerError, match="unusable config"):
        get_backend(ranker)


def test_get_backend_version_of_another_ranker_is_refused(collection):
    a = ranker_create(collection=collection, name="A", kind="builtin")
    b = ranker_create(collection=collection, name="B", kind="builtin")
    version = RankerVersion.objects.get(ranker=b, label="v1")  # created with the ranker

    with pytest.raises(RankerError, match="belongs to another ranker"):
        get_backend(a, version)


def test_ranker_version_announce_creates_version_and_pending_evaluation(collection, trainer):
    ranker = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )

    version, run = ranker_version_announce(
        ranker=ranker, label=" 2024-06-01 ", notes="new features", created_by=trainer
    )

    assert (version.label, version.notes, version.uses_model) == ("2024-06-01", "new features", False)
    assert (run.ranker_version, run.trigger, run.status, run.created_by) == (
        version,
        RunTrigger.VERSION,
        RunStatus.PENDING,
        trainer,
    )


@pytest.mark.parametrize(("label", "message"), [("", "needs a label"), ("x" * 101, "at most 100")])
def test_ranker_version_announce_invalid_label(collection, label, message):
    ranker = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )

    with pytest.raises(ValidationError) as info:
        ranker_version_announce(ranker=ranker, label=label)

    assert message in info.value.message_dict["label"][0]
    assert RankerVersion.objects.count() == EvaluationRun.objects.count() == 0


def test_ranker_version_announce_same_label_twice_is_refused(collection):
    ranker = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )
    ranker_version_announce(ranker=ranker, label="v7")

    with pytest.raises(ValidationError) as info:
        ranker_version_announce(ranker=ranker, label="v7")

    assert "already announced" in info.value.message_dict["label"][0]


def test_api_token_create_stores_only_a_hash(collection, trainer):
    token, key = api_token_create(
        collection=collection, user=trainer, role=Role.TRAINER, name="ranker service"
    )

    assert len(key) == 40
    assert token.key_prefix == key[:8]
    assert token.key_hash == ApiToken.hash_key(key) != key
    assert (token.role, token.user, token.collection, token.name) == (
        Role.TRAINER,
        trainer,
        collection,
        "ranker service",
    )


def test_api_token_create_rater_cannot_hold_trainer_token(collection, rater):
    with pytest.raises(ValidationError) as info:
        api_token_create(collection=collection, user=rater, role=Role.TRAINER)

    assert "cannot hold a trainer token" in info.value.message_dict["role"][0]


def test_api_token_create_non_member_is_refused(collection, outsider):
    with pytest.raises(ValidationError) as info:
        api_token_create(collection=collection, user=outsider, role=Role.RATER)

    assert "not a member of tiny" in info.value.message_dict["user"][0]


def test_api_token_revoke(collection, rater):
    token, _ = api_token_create(collection=collection, user=rater)

    assert api_token_revoke(token=token).revoked is True
