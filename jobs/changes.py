"""A collection changed in what derived state is built from (its answers or questions, an embeddings
build): ``collection_state_changed``, sent once the change is committed, so that what keeps derived state
(the rating queue's candidate table, ``raters.signals``) queues its refresh at once instead of waiting
for beat's sweep. Here at the bottom, so an app sends it without importing the apps above that listen."""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

# Sent with ``collection_id`` (sender None) after the commit of a change of the collection's state.
collection_state_changed = Signal()


def collection_state_announce(*, collection_id: int) -> None:
    """Send ``collection_state_changed`` for the collection once the current transaction commits (at once
    outside one; never when it rolls back). A receiver's error is logged, never raised into the writer."""

    def send() -> None:
        for receiver, result in collection_state_changed.send_robust(
            sender=None, collection_id=collection_id
        ):
            if isinstance(result, Exception):
                logger.error(
                    "collection %s: %r failed on its change", collection_id, receiver, exc_info=result
                )

    transaction.on_commit(send, robust=True)
