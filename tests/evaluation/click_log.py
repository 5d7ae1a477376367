"""A small hand-built UBI log of the "clicky" collection, for the implicit judgments' tests (evaluation,
judges, API): the expected figures are worked out by hand in ``test_selectors_clicks.py``."""

from __future__ import annotations

import datetime as dt
import uuid

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Split
from corpus.services import answers_upsert, collection_create, questions_upsert
from ratings.services import rating_record
from ubi.models import UbiEvent, UbiQuery

SLUG = "clicky"
DAY = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)
OLD_DAY = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)

# query_id: (application, user_query, hits)
QUERIES = {
    "Q1": (SLUG, "Laptop  BAG", ["a1", "a2", "a3"]),
    "Q2": (SLUG, "laptop bag", ["a2", "a1"]),
    "Q3": (SLUG, "usb cable", ["a3", "a1"]),
    "Q4": (SLUG, "cheap phones", ["a1"]),
    "Q5": (SLUG, "cheap phones", ["a1"]),
    "Q9": ("elsewhere", "laptop bag", ["a1"]),
}
# (query_id, action, ordinal, object_id, timestamp)
EVENTS = [
    ("Q1", "impression", 1, "a1", DAY),
    ("Q1", "impression", 2, "a2", DAY),
    ("Q1", "impression", 3, "a3", DAY),
    ("Q1", "click", 1, "a1", DAY),
    ("Q1", "click", 21, "a1", DAY),  # below max_rank 20: left out
    ("Q1", "click", 3, "a3", OLD_DAY),  # before the date range
    ("Q2", "impression", 1, "a2", DAY),
    ("Q2", "impression", 2, "a1", DAY),
    ("Q2", "Click", 1, "a2", DAY),  # action names compare case-insensitively
    ("Q2", "click", 2, "a1", DAY),
    ("Q3", "impression", 1, "a3", DAY),
    ("Q3", "impression", 2, "a1", DAY),
    ("Q3", "hover", 1, "a3", DAY),
    ("Q3", "click", 3, "a2", DAY),  # a click with no impression event
    ("Q3", "impression", 4, "zz", DAY),  # not an answer of the collection
    ("Q4", "impression", 1, "a1", DAY),
    ("Q4", "click", 1, "a1", DAY),
    ("Q5", "impression", 1, "a1", DAY),
    ("Q9", "click", 1, "a1", DAY),  # another application
]


def clicky_collection() -> Collection:
    collection = collection_create(name="Clicky", slug=SLUG)
    answers_upsert(
        collection=collection,
        records=[
            AnswerRecord("a1", "Leather laptop bag", "A leather bag for a 15-inch laptop."),
            AnswerRecord("a2", "Laptop sleeve", "A padded sleeve."),
            AnswerRecord("a3", "USB-C cable", "A two-metre cable."),
        ],
    )
    questions_upsert(
        collection=collection,
        records=[
            QuestionRecord("q1", "Laptop bag", Split.TEST),
            QuestionRecord("q2", "USB cable", Split.TRAIN),
        ],
    )
    for query_id, (application, text, hits) in QUERIES.items():
        UbiQuery.objects.create(
            query_id=query_id,
            application=application,
            user_query=text,
            query_response_hit_ids=hits,
            timestamp=DAY,
        )
    for query_id, action, ordinal, object_id, timestamp in EVENTS:
        UbiEvent.objects.create(
            event_id=uuid.uuid4(),
            application=QUERIES[query_id][0],
            action_name=action,
            query_id=query_id,
            timestamp=timestamp,
            event_attributes={"position": {"ordinal": ordinal}, "object": {"object_id": object_id}},
            ordinal=ordinal,
            object_id=object_id,
        )
    return collection


# People's stars of the clicky pairs (q2·a2 has no COEC stars: a click without impression).
PEOPLE = {("q1", "a1"): 3, ("q1", "a2"): 1, ("q1", "a3"): 2, ("q2", "a1"): 0, ("q2", "a3"): 3}


def rate_clicky(collection: Collection, rater) -> None:
    """``rater`` (a rater of the collection) gives PEOPLE's stars."""
    for (q, a), stars in PEOPLE.items():
        rating_record(
            rater=rater,
            question=Question.objects.get(collection=collection, external_id=q),
            answer=Answer.objects.get(collection=collection, external_id=a),
            stars=stars,
        )
