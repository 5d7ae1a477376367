"""Production questions: what users ask, as logged, matched to a collection's questions by normalised
text, and the frequent texts no question has imported as new questions (issue 36 §3: the test set follows
what users actually ask).

A text is compared **normalised** (``normalise_query``: case-folded, runs of white space as one space,
trimmed). An imported question's text is the commonest logged spelling of it (spaces collapsed; ties: the
first in code-point order), its id ``ubi-`` and the first 12 hex digits of the SHA-1 of the normalised text
(the same text always gets the same id), its split assigned by the collection's rule like any new question.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.formats.records import QuestionRecord
from corpus.models import Collection, Question
from corpus.services import questions_upsert
from ubi.models import UbiQuery

MAX_IMPORTED = 500


def normalise_query(text: str) -> str:
    """A query or question text as matched: case-folded, white space collapsed, trimmed."""
    return " ".join(text.casefold().split())


def logged_queries(*, application: str, start_date: dt.date | None = None, end_date: dt.date | None = None):
    """The application's query records, within [start_date, end_date] as UTC days (both included)."""
    queries = UbiQuery.objects.filter(application=application)
    if start_date:
        queries = queries.filter(timestamp__gte=dt.datetime.combine(start_date, dt.time(), tzinfo=dt.UTC))
    if end_date:
        end = dt.datetime.combine(end_date + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
        queries = queries.filter(timestamp__lt=end)
    return queries


def query_spellings(*, application: str) -> dict[str, Counter[str]]:
    """{normalised text: Counter of its logged spellings (spaces collapsed)}."""
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for text in (
        logged_queries(application=application)
        .order_by()
        .values_list("user_query", flat=True)
        .iterator(chunk_size=5000)
    ):
        spellings[normalise_query(text)][" ".join(text.split())] += 1
    return spellings


def production_question_id(text: str) -> str:
    return "ubi-" + hashlib.sha1(normalise_query(text).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class ImportedQuestions:
    created: list[Question]
    already: int  # texts some question of the collection already has


@transaction.atomic
def production_questions_import(
    *, collection: Collection, queries: list[str], application: str = ""
) -> ImportedQuestions:
    """New questions of the collection from logged query texts (compared normalised). ValidationError
    naming ``queries`` when one was never logged by the application (default: the collection's slug),
    when none is given or when there are more than MAX_IMPORTED; a text some question already has is
    counted, not added again."""
    wanted = list(dict.fromkeys(normalise_query(q) for q in queries if isinstance(q, str) and q.strip()))
    if not wanted:
        raise ValidationError({"queries": "Name at least one logged query text."})
    if len(wanted) > MAX_IMPORTED:
        raise ValidationError({"queries": f"At most {MAX_IMPORTED} queries at a time."})
    spellings = query_spellings(application=application or collection.slug)
    missing = [q for q in wanted if q not in spellings]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise ValidationError({"queries": f"Never asked in the production log: {shown}."})
    existing = {
        normalise_query(text)
        for text in Question.objects.filter(collection=collection).values_list("text", flat=True)
    }
    new = [q for q in wanted if q not in existing]
    records = [
        QuestionRecord(
            production_question_id(q), min(spellings[q].items(), key=lambda item: (-item[1], item[0]))[0]
        )
        for q in new
    ]
    questions_upsert(collection=collection, records=records)
    created = list(
        Question.objects.filter(
            collection=collection, external_id__in=[r.external_id for r in records]
        ).order_by("pk")
    )
    return ImportedQuestions(created, len(wanted) - len(new))
