"""Writes of rankers: creating them, numbering their versions, and changing their champion."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Collection
from rankers.config import validate_ranker_config
from rankers.embedding import model_unavailable_reason
from rankers.engine_config import MASK, keep_engine_secrets
from rankers.fusion import FUSION_SIGNALS, UNTRAINED_FUSION_WEIGHTS
from rankers.models import ChampionChange, PromotionPolicy, Ranker, RankerKind, RankerVersion


@transaction.atomic
def ranker_create(
    *, collection: Collection, name: str, kind: str, config: object = None, is_default: bool = False
) -> Ranker:
    """Create a ranker after checking its config (see ``rankers.config``).

    Raises ValidationError naming the field: ``name`` (empty, too long or taken in this collection),
    ``kind``, or the config key that is wrong. Making it the default unsets the previous default.
    """
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "A ranker needs a name."})
    if len(name) > 200:
        raise ValidationError({"name": "A ranker name is at most 200 characters."})
    if kind not in RankerKind.values:
        raise ValidationError({"kind": f"kind must be one of {', '.join(RankerKind.values)}, not {kind!r}."})
    cleaned = validate_ranker_config(kind=kind, config={} if config is None else config)
    if Ranker.objects.filter(collection=collection, name=name).exists():
        raise ValidationError({"name": f"This collection already has a ranker named {name!r}."})
    if is_default:
        Ranker.objects.select_for_update().filter(collection=collection, is_default=True).update(
            is_default=False
        )
    ranker = Ranker.objects.create(
        collection=collection, name=name, kind=kind, config=cleaned, is_default=is_default
    )
    if kind == RankerKind.BUILTIN:
        _builtin_first_versions(ranker)
    return ranker


BASELINE_LABEL = "bm25"


def _builtin_first_versions(ranker: Ranker) -> None:
    """A builtin ranker's champion from the start is the best ranker that needs no ratings.

    With the embedding model, v1 is the untrained fusion z(BM25) + z(cosine) and the champion: on
    every collection measured it ranks at least as well as BM25, and what raters are shown first
    decides what they can teach. Plain BM25 stays beside it as the version labelled ``bm25``, a
    baseline evaluations and comparisons can name (and the rating queue pools with the champion).
    Without the model, v1 is plain BM25 and its promotion reason says why.
    """
    unavailable = model_unavailable_reason()
    if unavailable:
        first = RankerVersion.objects.create(
            ranker=ranker,
            label="v1",
            method="bm25",
            notes="Plain BM25: the starting point, no ratings needed.",
        )
        version_promote(
            version=first,
            changed_by=None,
            reason=(
                "Version 1 (plain BM25), created with the ranker. It is the champion because the "
                f"semantic model is not available here ({unavailable}), so the untrained fusion of "
                "BM25 and semantic similarity cannot rank."
            ),
        )
        ranker.champion = first
        return
    fusion = RankerVersion.objects.create(
        ranker=ranker,
        label="v1",
        method="fusion",
        uses_model=True,
        notes=(
            "Untrained fusion z(BM25) + z(semantic similarity): the best ranker that needs no ratings. "
            "It ranks as BM25 until the answer embeddings are built."
        ),
        feature_importances={"bm25": 0.5, "cosine": 0.5},
        details={"params": {"signals": list(FUSION_SIGNALS), "weights": list(UNTRAINED_FUSION_WEIGHTS)}},
    )
    RankerVersion.objects.create(
        ranker=ranker,
        label=BASELINE_LABEL,
        method="bm25",
        notes="Plain BM25: the baseline, no ratings needed.",
    )
    version_promote(
        version=fusion,
        changed_by=None,
        reason=(
            "Version 1 (untrained fusion of BM25 and semantic similarity), created with the ranker: the "
            "best ranker that needs no ratings. Plain BM25 stays as the baseline version, labelled bm25."
        ),
    )
    ranker.champion = fusion


@transaction.atomic
def ranker_config_update(*, ranker: Ranker, config: object) -> Ranker:
    """Replace a ranker's config after checking it (ValidationError naming the config key).

    Secrets come back masked from every read (``redacted_config``), so a masked value ("********") in
    ``config`` keeps the stored one: a config read, edited and sent back loses no credential.
    """
    ranker = Ranker.objects.select_for_update().get(pk=ranker.pk)
    if isinstance(config, dict) and ranker.kind == RankerKind.ENGINE:
        config = keep_engine_secrets(config, ranker.config)
    elif isinstance(config, dict) and ranker.kind == RankerKind.HTTP:
        config = dict(config)
        for key in ("auth_header",):
            if config.get(key) == MASK:
                config[key] = ranker.config.get(key, "")
        if isinstance(config.get("headers"), dict):
            stored = ranker.config.get("headers", {})
            config["headers"] = {
                name: stored.get(name, "") if value == MASK else value
                for name, value in config["headers"].items()
            }
    ranker.config = validate_ranker_config(kind=ranker.kind, config=config)
    ranker.save(update_fields=["config"])
    return ranker


@transaction.atomic
def version_promote(
    *, version: RankerVersion, changed_by: User | None, reason: str, figures: dict | None = None
) -> ChampionChange:
    """Make ``version`` its ranker's champion and record who, why and on which figures.

    ``changed_by`` None means the promotion policy decided after a training. Promoting the champion
    again is refused (ValidationError), so the history holds only real changes.
    """
    ranker = Ranker.objects.select_for_update().get(pk=version.ranker_id)
    if ranker.champion_id == version.pk:
        raise ValidationError({"version": f"{version.label} is already the champion of {ranker.name}."})
    change = ChampionChange.objects.create(
        ranker=ranker,
        version=version,
        previous_id=ranker.champion_id,
        changed_by=changed_by,
        reason=reason,
        figures=figures or {},
    )
    ranker.champion = version
    ranker.save(update_fields=["champion"])
    return change


@transaction.atomic
def ranker_training_settings_set(
    *, ranker: Ranker, promotion_policy: str, auto_train_labels: int | None, auto_train_hours: int | None
) -> Ranker:
    """Set how a ranker's new versions are promoted and whether it trains by itself (off: None)."""
    if promotion_policy not in PromotionPolicy.values:
        raise ValidationError(
            {
                "promotion_policy": f"must be one of {', '.join(PromotionPolicy.values)}, not {promotion_policy!r}."
            }
        )
    for field, value in (("auto_train_labels", auto_train_labels), ("auto_train_hours", auto_train_hours)):
        if value is not None and value < 1:
            raise ValidationError({field: "must be at least 1, or empty to turn it off."})
    ranker.promotion_policy = promotion_policy
    ranker.auto_train_labels = auto_train_labels
    ranker.auto_train_hours = auto_train_hours
    ranker.save(update_fields=["promotion_policy", "auto_train_labels", "auto_train_hours"])
    return ranker


def next_version_label(ranker: Ranker) -> str:
    """The first free label v1, v2, … of the ranker's versions (the ``bm25`` baseline is not numbered)."""
    taken = set(RankerVersion.objects.filter(ranker=ranker).values_list("label", flat=True))
    number = sum(1 for label in taken if re.fullmatch(r"v\d+", label)) + 1
    while f"v{number}" in taken:
        number += 1
    return f"v{number}"
