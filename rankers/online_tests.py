"""Online tests of a challenger against the champion (issue 36 §2): starting and stopping them, and the
running test ``ranker_server`` reads. The verdict from the clicks is ``evaluation.selectors.online``'s.

A test is interleaved by ``ranker_server``: a version exported into the engine ranks inside the engine,
where the app cannot mix two rankings, so starting one for it is refused (``serving="engine"``) with the
way to compare it instead (the UBI logs of each version's period, ``docs/ubi.md``).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from corpus.models import Collection
from rankers.models import OnlineTest, OnlineTestState, RankerVersion

SERVED_BY_RANKER_SERVER = "ranker_server"
SERVED_BY_ENGINE = "engine"
SERVING_CHOICES = (SERVED_BY_RANKER_SERVER, SERVED_BY_ENGINE)
CANNOT_INTERLEAVE = (
    "A version exported into the engine ranks inside the engine: the app cannot interleave its results "
    "with the champion's. Compare them from the logs instead: serve each version in turn and compare the "
    "click-through of their periods in the UBI log (manage.py ubi_export, docs/ubi.md), or serve both "
    "through ranker_server to test them online."
)


def running_online_test(*, collection: Collection) -> OnlineTest | None:
    """The collection's running test, with its versions and ranker."""
    return (
        OnlineTest.objects.select_related("champion", "challenger", "challenger__ranker")
        .filter(collection=collection, state=OnlineTestState.RUNNING)
        .first()
    )


@transaction.atomic
def online_test_start(
    *,
    challenger: RankerVersion,
    started_by: User | None,
    share: int = 100,
    max_queries: int | None = None,
    stop_on_verdict: bool = True,
    serving: str = SERVED_BY_RANKER_SERVER,
) -> OnlineTest:
    """Start testing ``challenger`` against its ranker's champion on ``share`` % of the live queries.

    ValidationError naming the field: ``share`` (not 0-100), ``max_queries`` (less than 1), ``serving``
    (not a choice, or ``engine``: the app cannot interleave inside the engine), ``challenger`` (it is the
    champion, its ranker has none, or the collection runs a test already: one at a time).
    """
    if isinstance(share, bool) or not isinstance(share, int) or not 0 <= share <= 100:
        raise ValidationError({"share": f"share is a whole percent from 0 to 100, not {share!r}."})
    if max_queries is not None and (
        isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1
    ):
        raise ValidationError(
            {"max_queries": f"max_queries is a whole number, 1 or more, not {max_queries!r}."}
        )
    if serving not in SERVING_CHOICES:
        raise ValidationError(
            {"serving": f"serving is one of {', '.join(SERVING_CHOICES)}, not {serving!r}."}
        )
    if serving == SERVED_BY_ENGINE:
        raise ValidationError({"serving": CANNOT_INTERLEAVE})
    ranker = challenger.ranker
    if ranker.champion_id is None:
        raise ValidationError(
            {"challenger": f"{ranker.name} has no champion to test {challenger.label} against."}
        )
    if ranker.champion_id == challenger.pk:
        raise ValidationError({"challenger": f"{challenger.label} is the champion: test another version."})
    running = running_online_test(collection=ranker.collection)
    if running is not None:
        raise ValidationError(
            {
                "challenger": f"{ranker.collection.name} already tests {running.challenger.label} against "
                f"{running.champion.label} online: stop that test first (one at a time)."
            }
        )
    try:
        with transaction.atomic():
            return OnlineTest.objects.create(
                collection=ranker.collection,
                champion_id=ranker.champion_id,
                challenger=challenger,
                share=share,
                max_queries=max_queries,
                stop_on_verdict=stop_on_verdict,
                started_by=started_by,
            )
    except IntegrityError as exc:  # another start won the race
        raise ValidationError(
            {"challenger": "another online test started meanwhile: one at a time."}
        ) from exc


def online_test_stop(*, test: OnlineTest, stopped_by: User | None, reason: str = "") -> OnlineTest:
    """Stop a running test (``ranker_server`` stops interleaving at its next look, within
    ``ONLINE_TEST_POLL_MS``); ValidationError naming ``state`` if it is stopped already."""
    updated = OnlineTest.objects.filter(pk=test.pk, state=OnlineTestState.RUNNING).update(
        state=OnlineTestState.STOPPED,
        stopped_by=stopped_by,
        stopped_at=timezone.now(),
        stop_reason=reason or (f"Stopped by {stopped_by.username}." if stopped_by else "Stopped."),
    )
    if not updated:
        raise ValidationError({"state": "This online test is stopped already."})
    test.refresh_from_db()
    return test
