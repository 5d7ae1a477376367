"""Online tests' shared setup: a builtin ranker with a champion and a challenger, and an interleaved test's
UBI log written as ranker_server writes it (queries with each hit's team, click events)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from corpus.models import Collection
from rankers.models import OnlineTest, Ranker, RankerKind, RankerVersion
from rankers.online_tests import online_test_start
from ubi.records import event_check, query_check
from ubi.services import ubi_records_import

START = datetime(2026, 11, 29, 1, 0, tzinfo=UTC)


def online_ranker(
    collection: Collection, *, name: str = "Online"
) -> tuple[Ranker, RankerVersion, RankerVersion]:
    """A builtin ranker whose champion is v1, with a challenger v2 (both plain BM25: the log decides)."""
    ranker = Ranker.objects.create(collection=collection, name=name, kind=RankerKind.BUILTIN)
    champion = RankerVersion.objects.create(ranker=ranker, label="v1", method="bm25")
    challenger = RankerVersion.objects.create(ranker=ranker, label="v2", method="bm25")
    ranker.champion = champion
    ranker.save(update_fields=["champion"])
    return ranker, champion, challenger


def online_log(
    test: OnlineTest,
    outcomes: list[int | None],
    *,
    first: int = 0,
    start: datetime = START,
    client_id: str = "",
) -> None:
    """One interleaved query per outcome, served ["a", "b"] with teams [champion, challenger]: +1 a click
    on "b" (the challenger wins), −1 on "a", 0 on both (a tie), None no click. Query n (from ``first``) is
    served at ``start`` + n seconds."""
    queries, events = [], []
    for n, outcome in enumerate(outcomes, start=first):
        query_id = f"t{test.pk}-q{n}"
        at = (start + timedelta(seconds=n)).isoformat()
        queries.append(
            query_check(
                {
                    "query_id": query_id,
                    "client_id": client_id,
                    "timestamp": at,
                    "user_query": "boundary layer",
                    "query_response_hit_ids": ["a", "b"],
                    "query_attributes": {
                        "online_test": test.pk,
                        "champion": test.champion.label,
                        "challenger": test.challenger.label,
                        "teams": [-1, 1],
                    },
                }
            )
        )
        clicked = {1: ["b"], -1: ["a"], 0: ["a", "b"], None: []}[outcome]
        for hit in clicked:
            events.append(
                event_check(
                    {
                        "action_name": "click",
                        "query_id": query_id,
                        "client_id": client_id,
                        "timestamp": at,
                        "event_attributes": {
                            "position": {"ordinal": 1 if hit == "a" else 2},
                            "object": {"object_id": hit},
                        },
                    }
                )
            )
    ubi_records_import(queries=queries, events=events)


def online_test_logged(challenger: RankerVersion, outcomes: list[int | None], **kwargs) -> OnlineTest:
    test = online_test_start(challenger=challenger, started_by=None, **kwargs)
    online_log(test, outcomes)
    return test
