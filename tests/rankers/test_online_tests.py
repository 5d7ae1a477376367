"""online_test_start / online_test_stop: one running test per collection, fields checked by name, an
exported model refused with the way to compare it instead; share_bucket deterministic."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from rankers.models import OnlineTestState, Ranker, RankerKind, RankerVersion
from rankers.online_tests import CANNOT_INTERLEAVE, online_test_start, online_test_stop, running_online_test
from rankers.serving.online import share_bucket

pytestmark = pytest.mark.django_db


@pytest.fixture
def ranker(collection):
    ranker = Ranker.objects.create(collection=collection, name="B", kind=RankerKind.BUILTIN)
    ranker.champion = RankerVersion.objects.create(ranker=ranker, label="v1", method="bm25")
    ranker.save(update_fields=["champion"])
    return ranker


@pytest.fixture
def challenger(ranker):
    return RankerVersion.objects.create(ranker=ranker, label="v2", method="bm25")


def _errors(call) -> dict:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value.message_dict


def test_online_test_start_runs_the_challenger_against_the_champion(ranker, challenger, trainer):
    test = online_test_start(challenger=challenger, started_by=trainer, share=30, max_queries=5000)

    assert (test.champion.label, test.challenger.label, test.share, test.max_queries) == (
        "v1",
        "v2",
        30,
        5000,
    )
    assert (test.state, test.started_by, test.stop_on_verdict) == (OnlineTestState.RUNNING, trainer, True)
    assert running_online_test(collection=ranker.collection) == test


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"share": 101}, "share", "share is a whole percent from 0 to 100, not 101."),
        ({"share": "50"}, "share", "share is a whole percent from 0 to 100, not '50'."),
        ({"max_queries": 0}, "max_queries", "max_queries is a whole number, 1 or more, not 0."),
        ({"serving": "cloud"}, "serving", "serving is one of ranker_server, engine, not 'cloud'."),
        ({"serving": "engine"}, "serving", CANNOT_INTERLEAVE),
    ],
)
def test_online_test_start_wrong_field_is_named(challenger, kwargs, field, message):
    assert _errors(lambda: online_test_start(challenger=challenger, started_by=None, **kwargs)) == {
        field: [message]
    }


def test_online_test_start_of_the_champion_is_refused(ranker):
    assert _errors(lambda: online_test_start(challenger=ranker.champion, started_by=None)) == {
        "challenger": ["v1 is the champion: test another version."]
    }


def test_online_test_start_second_test_of_a_collection_is_refused(ranker, challenger):
    online_test_start(challenger=challenger, started_by=None)
    third = RankerVersion.objects.create(ranker=ranker, label="v3", method="bm25")

    assert _errors(lambda: online_test_start(challenger=third, started_by=None)) == {
        "challenger": ["Tiny already tests v2 against v1 online: stop that test first (one at a time)."]
    }


def test_online_test_stop_stops_once_and_frees_the_collection(ranker, challenger, trainer):
    test = online_test_start(challenger=challenger, started_by=trainer)

    stopped = online_test_stop(test=test, stopped_by=trainer)

    assert (stopped.state, stopped.stopped_by, stopped.stop_reason) == ("stopped", trainer, "Stopped by tom.")
    assert stopped.stopped_at is not None and running_online_test(collection=ranker.collection) is None
    assert _errors(lambda: online_test_stop(test=test, stopped_by=trainer)) == {
        "state": ["This online test is stopped already."]
    }
    assert online_test_start(challenger=challenger, started_by=None).pk != test.pk


def test_share_bucket_is_deterministic_and_spreads_queries_evenly():
    buckets = [share_bucket(7, f"q{n}") for n in range(10_000)]

    # SHA-256("share" 0x1f "7" 0x1f "q0")[:4] big-endian mod 100, ...: the same in any process.
    assert buckets[:5] == [54, 4, 78, 54, 31]
    assert sum(b < 30 for b in buckets) == 2954  # a share of 30% interleaves 29.5% of 10,000 queries
