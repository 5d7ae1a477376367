"""Reads of the training loop: readiness to train, trainings, versions and champion history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath

from django.db.models import Count, QuerySet
from django.urls import reverse
from django.utils import timezone

from corpus.models import Split
from evaluation import measures
from evaluation.numbers import count, figure, signed
from rankers.models import ChampionChange, Ranker, RankerKind, RankerVersion
from rankers.reranking import method_of
from ratings.models import UNLISTED_INCORRECT_LABEL, Label
from ratings.selectors import complete_question_ids, imports_judging
from trainer.models import ApiToken, Training, TrainingStatus
from trainer.ranker_display import Comparison

# Fewer labelled training questions than this give cross-validation nothing steady to choose from.
MIN_TRAINING_QUESTIONS = 10


@dataclass(frozen=True)
class Readiness:
    """Whether a ranker has enough training labels to train, and if not, what would fix it; and whether
    its labels can teach at all (``positive_only``)."""

    questions: int  # training questions with at least one answer rated 1 star or more
    needed: int
    rate_url: str
    # Every training label is 1 star or more and no training question was judged by an import whose answers
    # not listed are incorrect (the learner reads those as 0 stars): no answer is known to be bad.
    positive_only: bool = False
    unsure_url: str = ""  # the queue of the training questions' unrated top answers
    import_url: str = ""  # the import form
    k: int = 10
    # At least this many answers of those questions' top k are unrated: each has k places and only its
    # rated answers can fill them (a lower bound from the labels alone, no ranking needed).
    unrated_top: int = 0
    # When positive-only: the imports that judged training questions with the option off, as (name, the
    # manage page's row of it), oldest first: turning the option on is the second way out.
    off_imports: tuple[tuple[str, str], ...] = ()

    @property
    def ready(self) -> bool:
        return self.questions >= self.needed

    @property
    def positive_only_warning(self) -> str:
        """Why positive-only labels teach nothing, and the two ways out ("" when the labels can teach)."""
        if not self.positive_only:
            return ""
        return (
            "Every rated answer of the training questions is relevant (1 star or more) and no import says "
            "the answers it does not list are incorrect, so the learners cannot tell good answers from bad "
            f"ones: a training would learn nothing. Two ways out: {self.rate_unrated}, or {self.import_way_out}."
        )

    @property
    def import_way_out(self) -> str:
        """The second way out: turn the option on for the imports that have it off, or import so."""
        if self.off_imports:
            names = " and ".join(name for name, _ in self.off_imports)
            return f"turn on “{UNLISTED_INCORRECT_LABEL}” for {names}"
        return f"import the judgments as a ground truth with “{UNLISTED_INCORRECT_LABEL}” on"

    @property
    def rate_unrated(self) -> str:
        return (
            f"rate the unrated answers of the training questions' top {self.k} (at least "
            f"{count(self.unrated_top)}: the queue asks raters for them)"
        )

    @property
    def message(self) -> str:
        if self.ready:
            enough = f"{self.questions} training questions have a relevant rated answer: enough to train."
            return f"{enough} {self.positive_only_warning}" if self.positive_only else enough
        more = self.needed - self.questions
        return (
            f"Training needs at least {self.needed} training questions with a relevant rated answer "
            f"(1 star or more); there are {self.questions}. Rate {more} more training "
            f"question{'s' if more != 1 else ''}: {self.rate_url}"
        )


def training_readiness(*, ranker: Ranker) -> Readiness:
    """Count training questions with a relevant label, and tell positive-only labels (three small
    queries; two more when they are, for the imports with the option off). Test labels never count here."""
    collection = ranker.collection
    labels = Label.objects.filter(question__collection_id=collection.pk, question__split=Split.TRAIN)
    questions = labels.filter(gain__gte=1).values("question_id").distinct().count()
    positive_only = (
        questions > 0
        and not labels.filter(gain__lt=1).exists()
        and not complete_question_ids(collection=collection, split=Split.TRAIN)
    )
    manage = reverse("collection-manage", kwargs={"slug": collection.slug})
    off_imports = (
        tuple(
            (record.name, f"{manage}#import-{record.pk}")
            for record, _ in imports_judging(
                collection=collection,
                question_ids=labels.values_list("question_id", flat=True).distinct(),
                unlisted_incorrect=False,
            )
        )
        if positive_only
        else ()
    )
    k = collection.ndcg_k
    rated = labels.values("question_id").annotate(n=Count("id")).values_list("n", flat=True)
    unrated_top = sum(max(0, k - n) for n in rated) if positive_only else 0
    rate = reverse("rate-next", kwargs={"slug": collection.slug})
    return Readiness(
        questions=questions,
        needed=MIN_TRAINING_QUESTIONS,
        rate_url=f"{rate}?split=train",
        positive_only=positive_only,
        unsure_url=f"{rate}?mode=unsure",
        import_url=f"{manage}#import-heading",
        k=k,
        unrated_top=unrated_top,
        off_imports=off_imports,
    )


def auto_training_due(*, ranker: Ranker) -> bool:
    """Due when the ranker's last training (of any outcome) is older than ``auto_train_hours``, or when
    at least ``auto_train_labels`` training labels changed since it started. Never trained: due."""
    last = Training.objects.filter(ranker=ranker).order_by("-created_at").first()
    if last is None:
        return True
    if last.status in (TrainingStatus.QUEUED, TrainingStatus.RUNNING):
        return False
    if ranker.auto_train_hours and timezone.now() - last.created_at >= timedelta(
        hours=ranker.auto_train_hours
    ):
        return True
    if ranker.auto_train_labels:
        changed = Label.objects.filter(
            question__collection_id=ranker.collection_id,
            question__split=Split.TRAIN,
            updated_at__gt=last.created_at,
        ).count()
        return changed >= ranker.auto_train_labels
    return False


def active_training(*, ranker: Ranker) -> Training | None:
    return (
        Training.objects.filter(ranker=ranker, status__in=[TrainingStatus.QUEUED, TrainingStatus.RUNNING])
        .order_by("-created_at")
        .first()
    )


def latest_training(*, ranker: Ranker) -> Training | None:
    return (
        Training.objects.filter(ranker=ranker)
        .select_related("version")
        .order_by("-created_at", "-id")
        .first()
    )


def latest_succeeded_training(*, ranker: Ranker) -> Training | None:
    """The ranker's most recent training that made a version (what the Rankers page explains)."""
    return (
        Training.objects.filter(ranker=ranker, status=TrainingStatus.SUCCEEDED, version__isnull=False)
        .select_related("version")
        .order_by("-created_at", "-id")
        .first()
    )


def versions_of(*, ranker: Ranker) -> QuerySet[RankerVersion]:
    return RankerVersion.objects.filter(ranker=ranker).order_by("-created_at", "-id")


def _digest(relative: str) -> str:
    """The content hash in a model or rated-questions file's name ("v3-1a2b3c4d5e6f.txt",
    "v3-1a2b3c4d5e6f-rated.npz"; ``rankers.fitting``): equal names after the label, equal contents."""
    stem = PurePosixPath(relative).name.split(".")[0].removesuffix("-rated")
    return stem.rpartition("-")[2]


def _model_spec(version: RankerVersion, *, kind: str, service: int | None) -> tuple | None:
    """What decides how a version ranks, from what the version stores, or None when the app cannot tell.

    Two versions with the same spec rank every question alike: plain BM25; the untrained fusion (its
    signals and weights); a learned fusion (its weights and the ratings it propagates from); LambdaMART
    (its model file, named by its content's hash). A service ranker's version that keeps the service's
    own order is the service as it was when last announced (``service``: that version's id); a version
    the service announced is a new model of its own.
    """
    details: dict = version.details if isinstance(version.details, dict) else {}
    raw = details.get("params")
    params: dict = raw if isinstance(raw, dict) else {}
    signals = tuple(str(s) for s in params.get("signals") or ())
    weights = tuple(round(float(w), 9) for w in params.get("weights") or () if isinstance(w, int | float))
    rated = _digest(str(details["rated_file"])) if details.get("rated_file") else ""
    if kind != RankerKind.BUILTIN and version.method in ("", "engine"):
        return ("service", version.pk if version.method == "" else service)
    method = method_of(version)
    if method == "bm25":
        return ("bm25",)
    if method == "fusion":
        return ("fusion", signals, weights)
    if method == "learned-fusion":
        return ("learned-fusion", signals, weights, rated)
    if method == "lambdamart" and version.model_file:
        return ("lambdamart", signals, _digest(version.model_file), rated)
    return None


def same_models(*, ranker: Ranker) -> dict[int, RankerVersion]:
    """{version id: the ranker's earliest version that is the same model} for every version that repeats
    an earlier one (a training that kept what needed no ratings makes the untrained fusion again)."""
    first_of: dict[tuple, RankerVersion] = {}
    same: dict[int, RankerVersion] = {}
    service: int | None = None
    versions = RankerVersion.objects.filter(ranker=ranker).only(
        "id", "label", "method", "uses_model", "model_file", "details", "created_at"
    )
    for version in versions.order_by("created_at", "id"):
        spec = _model_spec(version, kind=ranker.kind, service=service)
        if ranker.kind != RankerKind.BUILTIN and version.method == "":
            service = version.pk
        if spec is None or (spec[0] == "service" and spec[1] is None):
            continue
        if spec in first_of:
            same[version.pk] = first_of[spec]
        else:
            first_of[spec] = version
    return same


def same_model_as(*, version: RankerVersion) -> RankerVersion | None:
    """The earlier version of its ranker that ``version`` is the same model as, if any."""
    return same_models(ranker=version.ranker).get(version.pk)


@dataclass(frozen=True)
class PromotionCheck:
    """Whether promoting a version by hand replaces the champion with one measured better, and if not,
    the sentence a trainer confirms (its figures are the stored comparison the training's message shows)."""

    version: RankerVersion
    champion: RankerVersion | None
    comparison: Comparison | None
    measured_better: bool

    @property
    def needs_confirmation(self) -> bool:
        return self.champion is not None and self.champion.pk != self.version.pk and not self.measured_better

    @property
    def sentence(self) -> str:
        """v2 scored 0.436 vs the champion's 0.436 in NDCG@10 on rated answers (+0.000): it is not measured
        better. …"""
        label, comparison, champion = self.version.label, self.comparison, self.champion
        if champion is None:
            return f"The ranker has no champion: {label} becomes the first."
        if comparison is None:
            return f"{label} has not been compared with the champion, {champion.label}: it is not measured better."
        if not comparison.questions:
            return (
                f"{label} could not be compared with {comparison.champion or 'the champion'}: no test question "
                "had a rated answer. It is not measured better."
            )
        figures = (
            f"{figure(comparison.challenger_ndcg)} vs the champion's {figure(comparison.champion_ndcg)} in "
            f"{measures.name(measures.NDCG_RATED, comparison.k)} ({signed(comparison.difference)})"
        )
        verdict = f"{comparison.verdict or 'compared'} on {count(comparison.questions)} test questions"
        if not _against(comparison, champion):
            return (
                f"{label} was compared with {comparison.champion or 'an earlier champion'}, the champion then: "
                f"{figures}, {verdict}. It has not been compared with the champion now, {champion.label}: it "
                "is not measured better."
            )
        if self.measured_better:
            return f"{label} scored {figures}: {verdict}."
        return f"{label} scored {figures}: it is not measured better ({verdict})."


def _against(comparison: Comparison, champion: RankerVersion) -> bool:
    """Whether the comparison was made against this champion (older comparisons kept only its label)."""
    if comparison.champion_id is not None:
        return comparison.champion_id == champion.pk
    return comparison.champion == champion.label


def promotion_check(*, version: RankerVersion) -> PromotionCheck:
    """Is ``version`` measured better than its ranker's champion now? Only its stored comparison with that
    same champion, with the verdict "better", says so (``RankerVersion.comparison``)."""
    ranker = Ranker.objects.select_related("champion", "collection").get(pk=version.ranker_id)
    comparison = Comparison.of(version.comparison, k=ranker.collection.ndcg_k)
    champion = ranker.champion
    better = (
        champion is not None
        and comparison is not None
        and bool(comparison.questions)
        and comparison.verdict == "better"
        and _against(comparison, champion)
    )
    return PromotionCheck(version=version, champion=champion, comparison=comparison, measured_better=better)


def champion_changes(*, ranker: Ranker) -> QuerySet[ChampionChange]:
    return (
        ChampionChange.objects.filter(ranker=ranker)
        .select_related("version", "previous", "changed_by")
        .order_by("-created_at", "-id")
    )


def tokens_of(*, user) -> QuerySet[ApiToken]:
    """The user's own API tokens, newest first, revoked and expired ones included."""
    return ApiToken.objects.filter(user=user).select_related("collection").order_by("-created_at", "-id")
