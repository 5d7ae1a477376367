"""Writes that span the layers: imports that carry ratings, the demo, training and announcing versions,
API tokens."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from celery import current_app
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.formats import AnswerRecord, FormatError, JudgmentRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Role
from corpus.permissions import collection_role
from corpus.services import (
    ImportFiles,
    UpsertSummary,
    answers_upsert,
    collection_create,
    parse_import_files,
    questions_upsert,
)
from evaluation.models import RunTrigger
from evaluation.services import evaluation_start
from rankers.config import validate_ranker_config
from rankers.fitting import model_file_write
from rankers.index import load_index
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.services import next_version_label
from ratings.services import ratings_import
from trainer.models import ApiToken
from trainer.training import train

logger = logging.getLogger(__name__)

IMPORT_RATER_DEFAULT = "ground-truth"


def import_rater(*, username: str = IMPORT_RATER_DEFAULT) -> User:
    """The named user that imported ground truth is rated by (it cannot log in)."""
    user, created = get_user_model().objects.get_or_create(username=username, defaults={"is_active": True})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


@dataclass
class ImportSummary:
    answers: UpsertSummary = field(default_factory=UpsertSummary)
    questions: UpsertSummary = field(default_factory=UpsertSummary)
    ratings_created: int = 0
    ratings_updated: int = 0
    ratings_unchanged: int = 0

    def __str__(self) -> str:
        def part(name: str, s: UpsertSummary) -> str:
            return f"{name}: {s.created} new, {s.updated} updated, {s.unchanged} unchanged"

        return "; ".join(
            [
                part("answers", self.answers),
                part("questions", self.questions),
                f"ratings: {self.ratings_created} new, {self.ratings_updated} updated, "
                f"{self.ratings_unchanged} unchanged",
            ]
        )


@transaction.atomic
def collection_import(
    *,
    collection: Collection,
    answers: Sequence[AnswerRecord] = (),
    questions: Sequence[QuestionRecord] = (),
    judgments: Sequence[JudgmentRecord] = (),
    rater_username: str = IMPORT_RATER_DEFAULT,
    progress: Callable[[str], None] = lambda step: None,
) -> ImportSummary:
    """Import parsed records into the collection, all or nothing.

    Judgments become ratings by the named import rater (source "import"), so they flow into labels like
    human ratings do. A judgment naming an unknown question or answer raises FormatError with its file
    and line, and the transaction leaves the database as it was.
    """
    summary = ImportSummary()
    progress(f"writing {len(answers)} answers")
    summary.answers = answers_upsert(collection=collection, records=answers)
    if summary.answers.created or summary.answers.updated:
        transaction.on_commit(lambda: _index_build_soon(collection_id=collection.pk))
    progress(f"writing {len(questions)} questions")
    summary.questions = questions_upsert(collection=collection, records=questions)
    progress(f"writing {len(judgments)} ratings")
    if judgments:
        answer_ids = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        question_ids = dict(Question.objects.filter(collection=collection).values_list("external_id", "id"))
        rows: dict[tuple[int, int], int] = {}
        for j in judgments:
            if j.question_id not in question_ids:
                raise FormatError(
                    j.file, j.line, f"question id {j.question_id} not in collection {collection.slug}"
                )
            if j.answer_id not in answer_ids:
                raise FormatError(
                    j.file, j.line, f"answer id {j.answer_id} not in collection {collection.slug}"
                )
            rows[(question_ids[j.question_id], answer_ids[j.answer_id])] = j.stars
        result = ratings_import(
            rater=import_rater(username=rater_username), judgments=[(q, a, s) for (q, a), s in rows.items()]
        )
        summary.ratings_created, summary.ratings_updated, summary.ratings_unchanged = (
            result.created,
            result.updated,
            result.unchanged,
        )
    return summary


def _index_build_soon(*, collection_id: int) -> None:
    """Ask a worker to rebuild the BM25 index now, so the first ranking after an import isn't the one
    that waits for it. Best effort: with the broker down the index is still built on first use."""
    try:
        current_app.send_task("rankers.index_build", kwargs={"collection_id": collection_id})
    except Exception:  # kombu raises several transport-specific errors; none may fail the import
        logger.warning(
            "could not queue the index build of collection %s; it will build on first use", collection_id
        )


DEMO_DATA_DIR = Path(__file__).resolve().parent / "demo_data"


@transaction.atomic
def demo_collection_load(*, slug: str = "cranfield") -> Collection | None:
    """Load the Cranfield demo collection unless it exists. Returns it when it was created now."""
    if Collection.objects.filter(slug=slug).exists():
        return None
    collection = collection_create(
        name="Cranfield (demo)",
        slug=slug,
        description="Cranfield 1400 aeronautics abstracts and 150 questions, as IBM Watson Retrieve and Rank's "
        "tutorial shipped them. Grades 0–4 mapped to stars = max(grade − 1, 0).",
    )
    answers, questions, judgments = parse_import_files(
        ImportFiles(
            rnr_documents=DEMO_DATA_DIR / "cranfield-data.json",
            rnr_ground_truth=DEMO_DATA_DIR / "cranfield-gt.csv",
        )
    )
    collection_import(collection=collection, answers=answers, questions=questions, judgments=judgments)
    return collection


def ranker_train(*, ranker: Ranker) -> RankerVersion:
    """Train a new version of a builtin ranker on the current labels of its TRAINING questions.

    Cross-validation decides whether the version reranks with the model or keeps BM25's order (see
    ``trainer.training``); both CV figures are recorded. Raises ValidationError for an http
    ranker (those train elsewhere and announce their versions).
    """
    if ranker.kind != RankerKind.BUILTIN:
        raise ValidationError(
            {"ranker": "Only builtin rankers train here; an http ranker announces its versions."}
        )
    config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
    collection = ranker.collection
    # Training reads and computes for seconds; only the version row is written in a transaction.
    result = train(
        collection=collection, index=load_index(collection=collection), candidates=config["candidates"]
    )
    with transaction.atomic():
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()  # serialise label numbering
        label = next_version_label(ranker)
        model_file = (
            model_file_write(
                ranker_id=ranker.pk, label=label, model_text=result.model_text, params=result.params
            )
            if result.model_text
            else ""
        )
        return RankerVersion.objects.create(
            ranker=ranker,
            label=label,
            notes="Trained by Rank Trainer.",
            label_count=result.label_count,
            feature_importances=result.feature_importances,
            model_file=model_file,
            cv_ndcg_model=result.cv_ndcg_model,
            cv_ndcg_bm25=result.cv_ndcg_bm25,
            uses_model=result.uses_model,
            details={**result.details, "params": result.params, "question_count": result.question_count},
        )


@transaction.atomic
def ranker_version_announce(*, ranker: Ranker, label: str, notes: str = "", created_by: User | None = None):
    """Record that the ranker service deployed a new model, and start its evaluation.

    Returns ``(version, run)``. Raises ValidationError for an empty, too long or already used label,
    and ``evaluation.services.EvaluationUnavailable`` when the evaluation cannot be queued; then
    nothing is stored, so the service can simply announce again.
    """
    if ranker.kind != RankerKind.HTTP:
        raise ValidationError({"ranker": "Builtin rankers get versions by training here, not by announcing."})
    label = (label or "").strip()
    if not label:
        raise ValidationError({"label": "A version needs a label, e.g. the model's build id."})
    if len(label) > 100:
        raise ValidationError({"label": "A version label is at most 100 characters."})
    Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
    if RankerVersion.objects.filter(ranker=ranker, label=label).exists():
        raise ValidationError({"label": f"Version {label!r} of this ranker was already announced."})
    version = RankerVersion.objects.create(ranker=ranker, label=label, notes=notes or "")
    run = evaluation_start(
        ranker=ranker, ranker_version=version, trigger=RunTrigger.VERSION, created_by=created_by
    )
    return version, run


class TrainingUnavailable(Exception):
    """Training cannot be queued: the Celery broker is unreachable."""


def ranker_train_start(*, ranker: Ranker) -> None:
    """Queue training of a builtin ranker (Celery task ``trainer.ranker_train``) after the commit.

    Raises TrainingUnavailable, before anything is queued, when the broker can't be reached.
    """
    if ranker.kind != RankerKind.BUILTIN:
        raise ValidationError(
            {"ranker": "Only builtin rankers train here; an http ranker announces its versions."}
        )
    try:
        with current_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=3)
    except Exception as exc:  # kombu raises OperationalError, OSError subclasses or library errors
        raise TrainingUnavailable(
            f"Training could not be queued: the task queue is not reachable ({exc.__class__.__name__}: {exc})."
        ) from exc
    transaction.on_commit(
        lambda: current_app.send_task("trainer.ranker_train", kwargs={"ranker_id": ranker.pk})
    )


@transaction.atomic
def api_token_create(
    *, collection: Collection, user: User, role: str = Role.RATER, name: str = ""
) -> tuple[ApiToken, str]:
    """Issue a token for a service acting as ``user`` in ``collection``. Returns the token and its key.

    The key is shown once: only its SHA-256 is stored. A token's role can't exceed its user's (a rater
    can't mint a trainer token; a superuser can mint either).
    """
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}, not {role!r}."})
    user_role = collection_role(user=user, collection=collection)
    if user_role is None:
        raise ValidationError({"user": f"{user} is not a member of {collection.slug}."})
    if role == Role.TRAINER and user_role != Role.TRAINER:
        raise ValidationError(
            {"role": f"{user} is a rater in {collection.slug}, so cannot hold a trainer token."}
        )
    key = ApiToken.generate_key()
    token = ApiToken.objects.create(
        name=(name or f"{user} {role} token")[:200],
        collection=collection,
        role=role,
        user=user,
        key_prefix=key[:8],
        key_hash=ApiToken.hash_key(key),
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    token.revoked = True
    token.save(update_fields=["revoked"])
    return token
