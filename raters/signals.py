"""A change that leaves a collection's candidate table out of date queues its refresh at once, after the
commit (``refresh.candidate_table_changed``), instead of waiting up to a minute for beat's sweep: the
collection's answers or questions and embeddings builds say so through ``jobs.collection_state_changed``
(sent from below, where those writes are); a ranker saved (the default, its config or champion), a new
version and an evaluation that succeeded are seen here, as saves of their rows."""

from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from evaluation.models import EvaluationRun, RunStatus
from jobs import collection_state_announce, collection_state_changed
from rankers.models import Ranker, RankerVersion
from raters.next_task.refresh import candidate_table_changed


@receiver(collection_state_changed, dispatch_uid="raters.candidate_table_changed")
def collection_changed(sender, collection_id: int, **kwargs) -> None:
    candidate_table_changed(collection_id=collection_id)


@receiver(post_save, sender=Ranker, dispatch_uid="raters.ranker_saved")
def ranker_saved(sender, instance: Ranker, **kwargs) -> None:
    collection_state_announce(collection_id=instance.collection_id)


@receiver(post_save, sender=RankerVersion, dispatch_uid="raters.version_saved")
def version_saved(sender, instance: RankerVersion, created: bool, **kwargs) -> None:
    if created:
        collection_state_announce(collection_id=instance.ranker.collection_id)


@receiver(post_save, sender=EvaluationRun, dispatch_uid="raters.evaluation_saved")
def evaluation_saved(sender, instance: EvaluationRun, **kwargs) -> None:
    if instance.status == RunStatus.SUCCEEDED:
        collection_state_announce(collection_id=instance.collection_id)
