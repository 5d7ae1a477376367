"""A single answer or question saved or deleted (not through the bulk imports, which call
``corpus.services.collection_changed`` themselves) moves its collection's change marker on."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from corpus.models import Answer, Question
from corpus.services import collection_changed


@receiver([post_save, post_delete], sender=Answer)
def answer_changed(sender, instance: Answer, **kwargs) -> None:
    collection_changed(collection_id=instance.collection_id, answers=True)


@receiver([post_save, post_delete], sender=Question)
def question_changed(sender, instance: Question, **kwargs) -> None:
    collection_changed(collection_id=instance.collection_id, questions=True)
