"""Writes of the core domain: collections, answers, questions, and importing them from files."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from ratings.services import ratings_import
from trainer import formats
from trainer.formats import AnswerRecord, FormatError, JudgmentRecord, QuestionRecord
from trainer.models import (
    Answer,
    ApiToken,
    Collection,
    Membership,
    Question,
    Ranker,
    RankerKind,
    RankerVersion,
    Role,
    Split,
)

logger = logging.getLogger(__name__)

IMPORT_RATER_DEFAULT = "ground-truth"


def split_for(*, collection_slug: str, external_id: str, test_fraction: float) -> str:
    """Deterministic train/test assignment: a stable hash of slug + external id, so re-imports never move it."""
    digest = hashlib.sha256(f"{collection_slug}\x00{external_id}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    return Split.TEST if position < test_fraction else Split.TRAIN


@transaction.atomic
def collection_create(
    *, name: str, slug: str = "", description: str = "", created_by: User | None = None, **settings: object
) -> Collection:
    """Create a collection; its creator (if any) becomes its first trainer."""
    collection = Collection(name=name, slug=slug or slugify(name)[:100], description=description, **settings)
    collection.full_clean()
    collection.save()
    if created_by is not None:
        Membership.objects.create(user=created_by, collection=collection, role=Role.TRAINER)
    return collection


@transaction.atomic
def membership_set(*, collection: Collection, user: User, role: str) -> Membership:
    membership, _ = Membership.objects.update_or_create(
        user=user, collection=collection, defaults={"role": role}
    )
    return membership


@dataclass
class UpsertSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


def answers_upsert(*, collection: Collection, records: Sequence[AnswerRecord]) -> UpsertSummary:
    """Create or update answers by external id. Unchanged answers are not written."""
    summary = UpsertSummary()
    existing = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    to_create, to_update = [], []
    now = timezone.now()
    for record in records:
        answer = existing.get(record.external_id)
        if answer is None:
            to_create.append(
                Answer(
                    collection=collection,
                    external_id=record.external_id,
                    title=record.title,
                    body=record.body,
                    metadata=record.metadata,
                )
            )
        elif (answer.title, answer.body, answer.metadata) != (record.title, record.body, record.metadata):
            answer.title, answer.body, answer.metadata, answer.updated_at = (
                record.title,
                record.body,
                record.metadata,
                now,
            )
            to_update.append(answer)
        else:
            summary.unchanged += 1
    Answer.objects.bulk_create(to_create, batch_size=1000)
    Answer.objects.bulk_update(to_update, ["title", "body", "metadata", "updated_at"], batch_size=1000)
    summary.created, summary.updated = len(to_create), len(to_update)
    return summary


def questions_upsert(*, collection: Collection, records: Sequence[QuestionRecord]) -> UpsertSummary:
    """Create or update questions by external id.

    The split comes from the record when the file gives one; otherwise an existing question keeps its
    split and a new one is assigned by ``split_for``.
    """
    summary = UpsertSummary()
    existing = {q.external_id: q for q in Question.objects.filter(collection=collection)}
    to_create, to_update = [], []
    now = timezone.now()
    for record in records:
        question = existing.get(record.external_id)
        if question is None:
            split = record.split or split_for(
                collection_slug=collection.slug,
                external_id=record.external_id,
                test_fraction=collection.test_fraction,
            )
            to_create.append(
                Question(collection=collection, external_id=record.external_id, text=record.text, split=split)
            )
            continue
        split = record.split or question.split
        if (question.text, question.split) != (record.text, split):
            question.text, question.split, question.updated_at = record.text, split, now
            to_update.append(question)
        else:
            summary.unchanged += 1
    Question.objects.bulk_create(to_create, batch_size=1000)
    Question.objects.bulk_update(to_update, ["text", "split", "updated_at"], batch_size=1000)
    summary.created, summary.updated = len(to_create), len(to_update)
    return summary


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
    from trainer.tasks import index_build

    try:
        index_build.delay(collection_id=collection_id)
    except Exception:  # kombu raises several transport-specific errors; none may fail the import
        logger.warning(
            "could not queue the index build of collection %s; it will build on first use", collection_id
        )


@dataclass(frozen=True)
class ImportFiles:
    """The files of one import; any subset may be given."""

    rnr_documents: Path | None = None
    rnr_ground_truth: Path | None = None
    corpus: Path | None = None
    topics: Path | None = None
    qrels: Path | None = None
    ground_truth_jsonl: Path | None = None
    grade_map: str | None = None  # default: "rnr" for R&R ground truth, "identity" for qrels

    def paths(self) -> list[Path]:
        return [value for value in vars(self).values() if isinstance(value, Path)]


def parse_import_files(
    files: ImportFiles, *, progress: Callable[[str], None] = lambda step: None
) -> tuple[list[AnswerRecord], list[QuestionRecord], list[JudgmentRecord]]:
    """Parse every given file before anything is written, so a bad file imports nothing."""
    answers: list[AnswerRecord] = []
    questions: list[QuestionRecord] = []
    judgments: list[JudgmentRecord] = []
    if files.rnr_documents:
        progress(f"reading {files.rnr_documents.name}")
        answers += formats.parse_rnr_documents(files.rnr_documents)
    if files.corpus:
        progress(f"reading {files.corpus.name}")
        answers += formats.parse_trec_corpus(files.corpus)
    if files.topics:
        progress(f"reading {files.topics.name}")
        questions += formats.parse_trec_topics(files.topics)
    if files.rnr_ground_truth:
        progress(f"reading {files.rnr_ground_truth.name}")
        qs, js = formats.parse_rnr_ground_truth(
            files.rnr_ground_truth, grade_map=formats.grade_map_from_spec(files.grade_map or "rnr")
        )
        questions += qs
        judgments += js
    if files.qrels:
        progress(f"reading {files.qrels.name}")
        judgments += formats.parse_trec_qrels(
            files.qrels, grade_map=formats.grade_map_from_spec(files.grade_map or "identity")
        )
    if files.ground_truth_jsonl:
        progress(f"reading {files.ground_truth_jsonl.name}")
        qs, js = formats.parse_ground_truth_jsonl(files.ground_truth_jsonl)
        questions += qs
        judgments += js
    return answers, questions, judgments


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


# --- rankers and API tokens (issue 5) ---------------------------------------------------------


@transaction.atomic
def ranker_create(
    *, collection: Collection, name: str, kind: str, config: object = None, is_default: bool = False
) -> Ranker:
    """Create a ranker after checking its config (see ``trainer.rankers.config``).

    Raises ValidationError naming the field: ``name`` (empty, too long or taken in this collection),
    ``kind``, or the config key that is wrong. Making it the default unsets the previous default.
    """
    from trainer.rankers.config import validate_ranker_config

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
    return Ranker.objects.create(
        collection=collection, name=name, kind=kind, config=cleaned, is_default=is_default
    )


def _next_version_label(ranker: Ranker) -> str:
    taken = set(RankerVersion.objects.filter(ranker=ranker).values_list("label", flat=True))
    number = len(taken) + 1
    while f"v{number}" in taken:
        number += 1
    return f"v{number}"


def ranker_train(*, ranker: Ranker) -> RankerVersion:
    """Train a new version of a builtin ranker on the current labels of its TRAINING questions.

    Cross-validation decides whether the version reranks with the model or keeps BM25's order (see
    ``trainer.rankers.training``); both CV figures are recorded. Raises ValidationError for an http
    ranker (those train elsewhere and announce their versions).
    """
    from trainer.rankers.config import validate_ranker_config
    from trainer.rankers.index import load_index
    from trainer.rankers.training import model_file_write, train

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
        label = _next_version_label(ranker)
        model_file = (
            model_file_write(ranker_id=ranker.pk, label=label, result=result) if result.model_text else ""
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
    from evaluation.models import RunTrigger
    from evaluation.services import evaluation_start

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
    from trainer.celery import app
    from trainer.tasks import ranker_train as ranker_train_task

    if ranker.kind != RankerKind.BUILTIN:
        raise ValidationError(
            {"ranker": "Only builtin rankers train here; an http ranker announces its versions."}
        )
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=3)
    except Exception as exc:  # kombu raises OperationalError, OSError subclasses or library errors
        raise TrainingUnavailable(
            f"Training could not be queued: the task queue is not reachable ({exc.__class__.__name__}: {exc})."
        ) from exc
    transaction.on_commit(lambda: ranker_train_task.delay(ranker_id=ranker.pk))


@transaction.atomic
def api_token_create(
    *, collection: Collection, user: User, role: str = Role.RATER, name: str = ""
) -> tuple[ApiToken, str]:
    """Issue a token for a service acting as ``user`` in ``collection``. Returns the token and its key.

    The key is shown once: only its SHA-256 is stored. A token's role can't exceed its user's (a rater
    can't mint a trainer token; a superuser can mint either).
    """
    from trainer.permissions import collection_role

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
