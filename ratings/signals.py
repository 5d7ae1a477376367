"""A judge's user account goes with its judge account.

A judge rates as a user of its own (``JudgeAccount.user``), never a person. Deleting a collection (from
the admin: it cascades through the ORM) deletes its judge accounts but would leave those users behind,
inactive and attached to nothing; this deletes them too.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete
from django.dispatch import receiver

from ratings.models import JudgeAccount


@receiver(post_delete, sender=JudgeAccount, dispatch_uid="ratings.judge_account_user_delete")
def judge_account_user_delete(sender, instance: JudgeAccount, **kwargs) -> None:
    # A filter, not instance.user: deleting the user is what deleted this account in judges.services.
    get_user_model().objects.filter(pk=instance.user_id).delete()
