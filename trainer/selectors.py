"""Reads of the training loop: readiness to train, trainings, versions and champion history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from corpus.models import Split
from rankers.models import ChampionChange, Ranker, RankerVersion
from ratings.models import Label
from trainer.models import ApiToken, Training, TrainingStatus

# Fewer labelled training questions than this give cross-validation nothing steady to choose from.
MIN_TRAINING_QUESTIONS = 10


@dataclass(frozen=True)
class Readiness:
    """Whether a ranker has enough training labels to train, and if not, what would fix it."""

    questions: int  # training questions with at least one answer rated 1 star or more
    needed: int
    rate_url: str

    @property
    def ready(self) -> bool:
        return self.questions >= self.needed

    @property
    def message(self) -> str:
        if self.ready:
            return f"{self.questions} training questions have a relevant rated answer: enough to train."
        more = self.needed - self.questions
        return (
            f"Training needs at least {self.needed} training questions with a relevant rated answer "
            f"(1 star or more); there are {self.questions}. Rate {more} more training "
            f"question{'s' if more != 1 else ''}: {self.rate_url}"
        )


def training_readiness(*, ranker: Ranker) -> Readiness:
    """Count training questions with a relevant label (one query). Test labels never count here."""
    questions = (
        Label.objects.filter(
            question__collection_id=ranker.collection_id, question__split=Split.TRAIN, gain__gte=1
        )
        .values("question_id")
        .distinct()
        .count()
    )
    url = reverse("rate-next", kwargs={"slug": ranker.collection.slug}) + "?split=train"
    return Readiness(questions=questions, needed=MIN_TRAINING_QUESTIONS, rate_url=url)


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


def versions_of(*, ranker: Ranker) -> QuerySet[RankerVersion]:
    return RankerVersion.objects.filter(ranker=ranker).order_by("-created_at", "-id")


def champion_changes(*, ranker: Ranker) -> QuerySet[ChampionChange]:
    return (
        ChampionChange.objects.filter(ranker=ranker)
        .select_related("version", "previous", "changed_by")
        .order_by("-created_at", "-id")
    )


def tokens_of(*, user) -> QuerySet[ApiToken]:
    """The user's own API tokens, newest first, revoked and expired ones included."""
    return ApiToken.objects.filter(user=user).select_related("collection").order_by("-created_at", "-id")
