"""Writes that span the layers: imports that carry ratings, the demo, training and announcing versions,
API tokens."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from corpus.formats.common import FormatError
from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Role
from corpus.permissions import collection_access
from corpus.services import (
    ImportFiles,
    UpsertSummary,
    answers_upsert,
    collection_create,
    parse_import_files,
    questions_upsert,
)
from evaluation.certainty import VersionPair, certainty, comparison_json
from evaluation.models import RunTrigger
from evaluation.services import EvaluationUnavailable, evaluation_start, versions_compare
from evaluation.uncertainty.verdicts import REAL_IMPROVEMENT
from jobs import (
    BrokerUnreachable,
    JobUnavailable,
    broker_require,
    enqueue_after_commit,
    heartbeat_rows,
    job_claim,
    stale_jobs_take_over,
)
from rankers.backends import service_backend
from rankers.config import validate_ranker_config
from rankers.engine_config import rerank_settings
from rankers.fitting import model_file_write, rated_file_write
from rankers.index import load_index
from rankers.models import PromotionPolicy, Ranker, RankerKind, RankerVersion
from rankers.services import next_version_label, version_promote
from ratings.services import ratings_import
from trainer.engine_export import ExportError, version_export_build
from trainer.learner import BM25_STAGE, engine_stage, train
from trainer.models import ACTIVE_TRAINING, ApiToken, Training, TrainingPhase, TrainingStatus
from trainer.ranker_display import Predicted, comparison_text
from trainer.selectors import Readiness, auto_training_due, training_readiness

logger = logging.getLogger(__name__)

IMPORT_RATER_DEFAULT = "ground-truth"
TRAINING_MAX_ATTEMPTS = 3

Progress = Callable[[str, float], None]


def _no_progress(phase: str, fraction: float) -> None:
    pass


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


def ranker_train(
    *, ranker: Ranker, created_by: User | None = None, progress: Progress = _no_progress
) -> RankerVersion:
    """Learn a new version of a ranker from the current labels of its TRAINING questions.

    A builtin ranker reranks its BM25 candidates; an engine or http ranker reranks its service's top
    ``candidates`` answers (default 50, the same at ranking), and its first version is the service as
    it is (made and promoted here when it has no champion), so training has something to beat.
    Cross-validation chooses among the candidates (see ``trainer.learner``) and every candidate's
    figures are recorded on the version. The version is not evaluated or promoted here. An engine that
    fails raises its RankerError (the training fails with the engine's reason).
    """
    config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
    collection = ranker.collection
    # Training reads and computes for seconds; only the version row is written in a transaction.
    index = load_index(collection=collection)
    if ranker.kind == RankerKind.BUILTIN:
        first_stage, depth = BM25_STAGE, config["candidates"]
    else:
        service_version_ensure(ranker=ranker)
        first_stage, depth = engine_stage(service_backend(ranker, config)), rerank_settings(config)[0]
    result = train(
        collection=collection, index=index, candidates=depth, progress=progress, first_stage=first_stage
    )
    with transaction.atomic():
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()  # serialise label numbering
        label = next_version_label(ranker)
        signals = list((result.params or {}).get("signals", []))
        model_file = (
            model_file_write(
                ranker_id=ranker.pk,
                label=label,
                model_text=result.model_text,
                params=result.params,
                signals=signals,
            )
            if result.model_text
            else ""
        )
        if result.rated is not None:
            result.details["rated_file"] = rated_file_write(
                ranker_id=ranker.pk, label=label, rated=result.rated, answer_ids=index.ids
            )
        version = RankerVersion.objects.create(
            ranker=ranker,
            label=label,
            notes="Trained by Rank Trainer.",
            label_count=result.label_count,
            feature_importances=result.feature_importances,
            model_file=model_file,
            cv_ndcg_model=result.cv_ndcg_model,
            cv_ndcg_bm25=result.cv_ndcg_bm25,
            uses_model=result.uses_model,
            method=result.method,
            details={**result.details, "params": result.params, "question_count": result.question_count},
            created_by=created_by,
        )
    if ranker.kind == RankerKind.ENGINE:
        _export_fit(version, progress)
    return version


def _export_fit(version: RankerVersion, progress: Progress) -> None:
    """Fit the engine ranker's export model with the version (``trainer.engine_export``); when it cannot
    be fitted (a custom preset, too few learnable questions, the engine failing), the version keeps the
    reason, shown where the export would be: the reranker itself stands without it."""
    try:
        version_export_build(version=version, progress=lambda phase, fraction: progress("fit", fraction))
    except ExportError as exc:
        with transaction.atomic():
            locked = RankerVersion.objects.select_for_update().get(pk=version.pk)
            locked.details = {**locked.details, "export": {"error": str(exc)}}
            locked.save(update_fields=["details"])
        version.details = locked.details


@transaction.atomic
def ranker_version_announce(*, ranker: Ranker, label: str, notes: str = "", created_by: User | None = None):
    """Record that the ranker service deployed a new model, and start its evaluation.

    Returns ``(version, run)``. Raises ValidationError for an empty, too long or already used label,
    and ``evaluation.services.EvaluationUnavailable`` when the evaluation cannot be queued; then
    nothing is stored, so the service can simply announce again.
    """
    if ranker.kind not in {RankerKind.HTTP, RankerKind.ENGINE}:
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


class TrainingUnavailable(JobUnavailable):
    """Training cannot be queued: the Celery broker is unreachable."""

    @classmethod
    def explain(cls, unreachable: BrokerUnreachable) -> str:
        return f"Training could not be queued: the task queue is not reachable ({unreachable})."


class TrainingConflict(Exception):
    """The ranker is already training; ``training`` is that job."""

    def __init__(self, training: Training) -> None:
        self.training = training
        super().__init__(
            f"{training.ranker.name} is already training (training {training.pk}, {training.status} since "
            f"{timezone.localtime(training.started_at or training.created_at):%Y-%m-%d %H:%M})."
        )


class TrainingRefused(Exception):
    """Too few labelled training questions to learn from; the message says how many more are needed."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        super().__init__(readiness.message)


def service_version_ensure(*, ranker: Ranker) -> RankerVersion:
    """The champion of an engine or http ranker; when it has none, a first version that is the service
    as it is ("v1", or the next free label), made champion: what a trained reranker must beat."""
    with transaction.atomic():
        locked = Ranker.objects.select_for_update().get(pk=ranker.pk)
        if locked.champion_id is not None:
            return RankerVersion.objects.get(pk=locked.champion_id)
        version = RankerVersion.objects.create(
            ranker=locked,
            label=next_version_label(locked),
            notes="The engine as it is: its own ranking, before any reranker.",
            method="",
        )
        version_promote(
            version=version,
            changed_by=None,
            reason="The engine as it is: the first version, before a reranker learned from ratings.",
        )
        ranker.refresh_from_db()
        return version


def training_start(*, ranker: Ranker, created_by: User | None = None, trigger: str = "ui") -> Training:
    """Queue a training of a builtin ranker (Celery task ``trainer.training_run``) after the commit.

    Refuses with TrainingRefused when there are too few labelled training questions, TrainingConflict
    (naming the running job) when the ranker already trains, TrainingUnavailable when the broker is
    unreachable; nothing is stored in any of these cases.
    """
    readiness = training_readiness(ranker=ranker)
    if not readiness.ready:
        raise TrainingRefused(readiness)
    broker_require(TrainingUnavailable)
    with transaction.atomic():
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
        active = Training.objects.filter(ranker=ranker, status__in=ACTIVE_TRAINING).first()
        if active is not None:
            raise TrainingConflict(active)
        training = Training.objects.create(ranker=ranker, created_by=created_by, trigger=trigger)
        enqueue_after_commit("trainer.training_run", kwargs={"training_id": training.pk})
    return training


# Where each phase starts on the 0–1 progress bar; a phase reports its own fraction within its span.
PHASE_START = {
    TrainingPhase.COLLECT_LABELS: 0.0,
    TrainingPhase.COMPUTE_FEATURES: 0.05,
    TrainingPhase.CROSS_VALIDATE: 0.30,
    TrainingPhase.FIT: 0.75,
    TrainingPhase.EVALUATE: 0.80,
    TrainingPhase.DECIDE: 0.97,
    TrainingPhase.DONE: 1.0,
}
_PHASES = list(PHASE_START)


def _progress_write(training_id: int, phase: str, fraction: float) -> None:
    start = PHASE_START[TrainingPhase(phase)]
    following = _PHASES[_PHASES.index(TrainingPhase(phase)) + 1] if phase != TrainingPhase.DONE else phase
    end = PHASE_START[TrainingPhase(following)]
    value = round(min(1.0, start + (end - start) * min(max(fraction, 0.0), 1.0)), 4)
    Training.objects.filter(pk=training_id, status=TrainingStatus.RUNNING).update(
        phase=phase, progress=value, heartbeat_at=timezone.now()
    )


def training_claim(*, training_id: int, worker: str) -> bool:
    """QUEUED → RUNNING by one conditional UPDATE: of two workers given the same job, one wins."""
    return job_claim(
        Training, pk=training_id, worker=worker, phase=TrainingPhase.COLLECT_LABELS, progress=0.0
    )


def training_run(*, training_id: int, worker: str) -> Training | None:
    """Claim the job and run it: learn a version, evaluate it against the champion, apply the policy.

    Any error fails the job with the reason (a version already made is kept and can be promoted by
    hand). Returns the finished job, or None when another worker had claimed it.
    """
    if not training_claim(training_id=training_id, worker=worker):
        return None
    training = Training.objects.select_related("ranker__collection", "ranker__champion").get(pk=training_id)
    ranker = training.ranker
    mine = Training.objects.filter(pk=training_id, status=TrainingStatus.RUNNING, claimed_by=worker)
    try:
        # Beats on a timer: cross-validation can report no progress for minutes on a big collection.
        with heartbeat_rows(mine, stale_seconds=settings.TRAINING_STALE_SECONDS):
            version = ranker_train(
                ranker=ranker,
                created_by=training.created_by,
                progress=lambda phase, fraction: _progress_write(training_id, phase, fraction),
            )
            Training.objects.filter(pk=training_id).update(version=version)
            _progress_write(training_id, TrainingPhase.EVALUATE, 0.0)
            decision, reason = version_decide(version=version)
            _progress_write(training_id, TrainingPhase.DECIDE, 1.0)
    except Exception as exc:
        logger.exception("training %s of ranker %s failed", training_id, ranker.pk)
        Training.objects.filter(pk=training_id).update(
            status=TrainingStatus.FAILED,
            finished_at=timezone.now(),
            error=f"{exc.__class__.__name__}: {exc}"[:2000],
        )
        return Training.objects.get(pk=training_id)
    Training.objects.filter(pk=training_id).update(
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        finished_at=timezone.now(),
        decision=decision,
        decision_reason=reason,
    )
    if decision == "promoted":
        try:  # the new champion's first point on the history chart
            evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.TRAINING)
        except EvaluationUnavailable as exc:
            logger.warning(
                "promoted %s %s but could not queue its evaluation: %s", ranker, version.label, exc
            )
    return Training.objects.get(pk=training_id)


def version_decide(*, version: RankerVersion) -> tuple[str, str]:
    """Compare a new version with the champion on the test questions and apply the ranker's policy.

    Returns (decision, reason): "promoted", "kept" or "manual". The figures are kept on the version.
    """
    ranker = Ranker.objects.select_related("champion", "collection").get(pk=version.ranker_id)
    champion = ranker.champion
    if champion is None:
        version_promote(version=version, changed_by=None, reason="The ranker had no champion yet.")
        return "promoted", "The ranker had no champion yet."
    comparison = versions_compare(challenger=version, champion=champion)
    figures = {**comparison.as_json(), "champion": champion.label, "champion_id": champion.pk}
    if comparison.questions == 0:
        # Nothing to compare on (often the first training: the queue serves training questions first).
        version.comparison = figures
        version.save(update_fields=["comparison"])
        said = (
            f"{version.label} could not be compared with {champion.label}: no test question has a rated "
            f"answer yet."
        )
        if ranker.promotion_policy == PromotionPolicy.MANUAL:
            return "manual", f"{said} The policy is manual: a trainer decides."
        return "kept", (
            f"{said} Kept {champion.label}; rate test questions (the queue asks for them once an evaluation "
            f"has run), then train again or promote {version.label} by hand."
        )
    # The test below leaves unrated answers out (judged-only NDCG): it cannot tell what they are worth,
    # so the decision also says what counting them as predicted gives.
    counted = certainty(collection=ranker.collection, pair=VersionPair(champion, version))
    predicted = counted.comparison
    if predicted is not None:
        figures["predicted"] = comparison_json(predicted)
        shown = Predicted.of(figures["predicted"])
        predicted_said = f" {shown.clause(version.label)}" if shown else ""
    else:
        why = counted.unavailable or "no test question to count them on"
        predicted_said = f" The unrated answers could not be counted: {why}."
    version.comparison = figures
    version.save(update_fields=["comparison"])
    k = comparison.k
    figures_said = comparison_text(
        k=k,
        challenger=comparison.challenger_ndcg,
        champion=comparison.champion_ndcg,
        difference=comparison.difference,
        ci_low=comparison.ci_low,
        ci_high=comparison.ci_high,
        p_value=comparison.p_value,
    )
    said = f"{version.label} vs {champion.label} on {comparison.questions} test questions: {figures_said}"
    policy = ranker.promotion_policy
    if policy == PromotionPolicy.MANUAL:
        return "manual", f"{said}.{predicted_said} The policy is manual: a trainer decides."
    if policy == PromotionPolicy.BETTER:
        promote = comparison.verdict == "better"
        rule = "promoted only if significantly better (p < 0.05)"
    elif policy == PromotionPolicy.SETTLED:
        # Better by the test, and still better whatever the unrated answers turn out to be (at least
        # SETTLED_SHARE of the completions of their labels): no credit for ranking rated answers first.
        promote = (
            comparison.verdict == "better" and predicted is not None and predicted.verdict == REAL_IMPROVEMENT
        )
        rule = (
            "promoted only if significantly better (p < 0.05) and settled as a real improvement "
            "counting the unrated answers"
        )
    else:
        promote = comparison.verdict != "worse"
        rule = "promoted unless significantly worse (p < 0.05)"
    if not promote:
        return (
            "kept",
            f"{said}: {comparison.verdict}.{predicted_said} Kept {champion.label}; a new version is {rule}.",
        )
    reason = f"{said}: {comparison.verdict}.{predicted_said} Promoted by the policy: {rule}."
    version_promote(version=version, changed_by=None, reason=reason, figures=figures)
    return "promoted", reason


def trainings_resume(*, worker: str = "", since: datetime | None = None) -> list[int]:
    """Take over trainings whose worker is gone; returns the ids to queue again.

    Gone means: its heartbeat is older than TRAINING_STALE_SECONDS, or (on a worker's start) it was
    claimed by this worker's node name before this process started. Such a job goes back to QUEUED,
    or FAILED with the reason after TRAINING_MAX_ATTEMPTS claims, so none stays running forever.
    A QUEUED job nobody claimed for that long (its message lost) is queued again.
    """
    return stale_jobs_take_over(
        Training,
        stale_seconds=settings.TRAINING_STALE_SECONDS,
        max_attempts=TRAINING_MAX_ATTEMPTS,
        give_up=f"The worker running this training stopped {TRAINING_MAX_ATTEMPTS} times; giving up. "
        "Check the worker's log, then train again.",
        requeue={"phase": TrainingPhase.QUEUED, "progress": 0.0},
        worker=worker,
        since=since,
    )


def auto_trainings_start() -> list[Training]:
    """Start trainings that rankers asked for: after N new training labels, or every so many hours."""
    started = []
    for ranker in Ranker.objects.filter(kind=RankerKind.BUILTIN).filter(
        Q(auto_train_labels__isnull=False) | Q(auto_train_hours__isnull=False)
    ):
        if auto_training_due(ranker=ranker):
            try:
                started.append(training_start(ranker=ranker, trigger="auto"))
            except (TrainingRefused, TrainingConflict, TrainingUnavailable) as exc:
                logger.info("automatic training of ranker %s not started: %s", ranker.pk, exc)
    return started


@transaction.atomic
def api_token_create(
    *,
    collection: Collection,
    user: User,
    role: str = Role.RATER,
    name: str = "",
    days: int | None = None,
) -> tuple[ApiToken, str]:
    """Issue a token for a service acting as ``user`` in ``collection``. Returns the token and its key.

    The key is shown once: only its SHA-256 is stored. A token's role can't exceed its user's (a rater
    can't mint a trainer token; a superuser can mint either). It expires after ``days`` (default
    API_TOKEN_DAYS; 0 means never).
    """
    days = settings.API_TOKEN_DAYS if days is None else days
    if days < 0:
        raise ValidationError({"days": "days must be 0 (never expires) or more."})
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}, not {role!r}."})
    user_access = collection_access(user=user, collection=collection)
    if not user_access.may_see:
        raise ValidationError({"user": f"{user} is not a member of {collection.slug}."})
    if role == Role.TRAINER and not user_access.may_manage:
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
        expires_at=timezone.now() + timedelta(days=days) if days else None,
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    token.revoked = True
    token.save(update_fields=["revoked"])
    return token


def api_token_revoke_own(*, user: User, token_id: int) -> ApiToken | None:
    """Revoke one of ``user``'s own tokens; None when they have no such token (someone else's included)."""
    token = ApiToken.objects.filter(pk=token_id, user=user).first()
    return None if token is None else api_token_revoke(token=token)
