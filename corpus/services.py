"""Writes of the corpus: collections, memberships, answers and questions, and parsing import files."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify

from corpus.formats.grades import grade_map_from_spec
from corpus.formats.ground_truth_jsonl import parse_ground_truth_jsonl
from corpus.formats.quepid import parse_quepid_ratings
from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.formats.rnr import parse_rnr_documents, parse_rnr_ground_truth
from corpus.formats.rre import parse_rre_ratings
from corpus.formats.trec import parse_trec_corpus, parse_trec_qrels, parse_trec_topics
from corpus.models import Answer, Collection, Membership, Question, Role, Split
from jobs import collection_state_announce


def split_for(*, collection_slug: str, external_id: str, test_fraction: float) -> str:
    """Deterministic train/test assignment: a stable hash of slug + external id, so re-imports never move it."""
    digest = hashlib.sha256(f"{collection_slug}\x00{external_id}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    return Split.TEST if position < test_fraction else Split.TRAIN


@transaction.atomic
def collection_create(
    *, name: str, slug: str = "", description: str = "", created_by: User | None = None, **settings: object
) -> Collection:
    """Create a collection; its creator (if any) becomes its first trainer."""
    collection = Collection(name=name, slug=slug or slugify(name)[:100], description=description, **settings)
    # The table's check constraints repeat the fields' validators, which raise first and name the field;
    # Django would check each constraint again with a query of its own (5 a collection, 18 ms).
    collection.full_clean(validate_constraints=False)
    collection.save()
    if created_by is not None:
        Membership.objects.create(user=created_by, collection=collection, role=Role.TRAINER)
    return collection


@transaction.atomic
def membership_set(*, collection: Collection, user: User, role: str) -> Membership:
    membership, _ = Membership.objects.update_or_create(
        user=user, collection=collection, defaults={"role": role}
    )
    return membership


def collection_changed(*, collection_id: int, answers: bool = False, questions: bool = False) -> None:
    """Move the collection's change markers on (``answers_version``, ``questions_version``): every write
    of its answers or questions calls this, the bulk imports here once and a single save through
    ``corpus.signals``, so the rating queue sees a change by reading one row."""
    changes: dict[str, object] = {}
    if answers:
        changes["answers_version"] = F("answers_version") + 1
    if questions:
        changes["questions_version"] = F("questions_version") + 1
    if changes:
        Collection.objects.filter(pk=collection_id).update(**changes)
        collection_state_announce(collection_id=collection_id)


# External ids looked up per query: well under PostgreSQL's and SQLite's limits on a query's parameters.
LOOKUP_CHUNK = 5000


def _named(
    model: type[Answer] | type[Question], *, collection: Collection, external_ids: Sequence[str]
) -> dict:
    """The collection's rows of ``model`` with these external ids, by external id.

    Only the named rows are read (by the unique index on collection and external id), so adding 1,000
    answers to a collection of a million reads 1,000 rows, not a million (issue 37).
    """
    unique = list(dict.fromkeys(external_ids))
    found: dict = {}
    for start in range(0, len(unique), LOOKUP_CHUNK):
        chunk = unique[start : start + LOOKUP_CHUNK]
        found.update(
            (row.external_id, row)
            for row in model.objects.filter(collection=collection, external_id__in=chunk).order_by()
        )
    return found


def external_ids_to_ids(
    model: type[Answer] | type[Question], *, collection: Collection, external_ids: Sequence[str]
) -> dict[str, int]:
    """The ids of the collection's rows of ``model`` with these external ids (those that exist)."""
    unique = list(dict.fromkeys(external_ids))
    ids: dict[str, int] = {}
    for start in range(0, len(unique), LOOKUP_CHUNK):
        chunk = unique[start : start + LOOKUP_CHUNK]
        ids.update(
            model.objects.filter(collection=collection, external_id__in=chunk)
            .order_by()
            .values_list("external_id", "id")
        )
    return ids


@dataclass
class UpsertSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


def answers_upsert(*, collection: Collection, records: Sequence[AnswerRecord]) -> UpsertSummary:
    """Create or update answers by external id. Unchanged answers are not written."""
    summary = UpsertSummary()
    existing = _named(Answer, collection=collection, external_ids=[r.external_id for r in records])
    to_create, to_update = [], []
    now = timezone.now()
    for record in records:
        answer = existing.get(record.external_id)
        if answer is None:
            to_create.append(
                Answer(
                    collection=collection,
                    external_id=record.external_id,
                    title=record.title,
                    body=record.body,
                    metadata=record.metadata,
                )
            )
        elif (answer.title, answer.body, answer.metadata) != (record.title, record.body, record.metadata):
            answer.title, answer.body, answer.metadata, answer.updated_at = (
                record.title,
                record.body,
                record.metadata,
                now,
            )
            to_update.append(answer)
        else:
            summary.unchanged += 1
    Answer.objects.bulk_create(to_create, batch_size=1000)
    Answer.objects.bulk_update(to_update, ["title", "body", "metadata", "updated_at"], batch_size=1000)
    if to_create or to_update:
        collection_changed(collection_id=collection.pk, answers=True)
    summary.created, summary.updated = len(to_create), len(to_update)
    return summary


def questions_upsert(*, collection: Collection, records: Sequence[QuestionRecord]) -> UpsertSummary:
    """Create or update questions by external id.

    The split comes from the record when the file gives one; otherwise an existing question keeps its
    split and a new one is assigned by ``split_for``.
    """
    summary = UpsertSummary()
    existing = _named(Question, collection=collection, external_ids=[r.external_id for r in records])
    to_create, to_update = [], []
    now = timezone.now()
    for record in records:
        question = existing.get(record.external_id)
        if question is None:
            split = record.split or split_for(
                collection_slug=collection.slug,
                external_id=record.external_id,
                test_fraction=collection.test_fraction,
            )
            to_create.append(
                Question(collection=collection, external_id=record.external_id, text=record.text, split=split)
            )
            continue
        split = record.split or question.split
        if (question.text, question.split) != (record.text, split):
            question.text, question.split, question.updated_at = record.text, split, now
            to_update.append(question)
        else:
            summary.unchanged += 1
    Question.objects.bulk_create(to_create, batch_size=1000)
    Question.objects.bulk_update(to_update, ["text", "split", "updated_at"], batch_size=1000)
    if to_create or to_update:
        collection_changed(collection_id=collection.pk, questions=True)
    summary.created, summary.updated = len(to_create), len(to_update)
    return summary


@dataclass(frozen=True)
class ImportFiles:
    """The files of one import; any subset may be given."""

    rnr_documents: Path | None = None
    rnr_ground_truth: Path | None = None
    corpus: Path | None = None
    topics: Path | None = None
    qrels: Path | None = None
    ground_truth_jsonl: Path | None = None
    quepid_csv: Path | None = None
    rre_json: Path | None = None
    # default: "rnr" for R&R ground truth, "identity" for qrels, Quepid and RRE (0–3 as they are)
    grade_map: str | None = None

    def paths(self) -> list[Path]:
        return [value for value in vars(self).values() if isinstance(value, Path)]


def parse_import_files(
    files: ImportFiles, *, progress: Callable[[str], None] = lambda step: None
) -> tuple[list[AnswerRecord], list[QuestionRecord], list[JudgmentRecord]]:
    """Parse every given file before anything is written, so a bad file imports nothing."""
    answers: list[AnswerRecord] = []
    questions: list[QuestionRecord] = []
    judgments: list[JudgmentRecord] = []
    if files.rnr_documents:
        progress(f"reading {files.rnr_documents.name}")
        answers += parse_rnr_documents(files.rnr_documents)
    if files.corpus:
        progress(f"reading {files.corpus.name}")
        answers += parse_trec_corpus(files.corpus)
    if files.topics:
        progress(f"reading {files.topics.name}")
        questions += parse_trec_topics(files.topics)
    if files.rnr_ground_truth:
        progress(f"reading {files.rnr_ground_truth.name}")
        qs, js = parse_rnr_ground_truth(
            files.rnr_ground_truth, grade_map=grade_map_from_spec(files.grade_map or "rnr")
        )
        questions += qs
        judgments += js
    if files.qrels:
        progress(f"reading {files.qrels.name}")
        judgments += parse_trec_qrels(
            files.qrels, grade_map=grade_map_from_spec(files.grade_map or "identity")
        )
    for path, parse in (
        (files.quepid_csv, parse_quepid_ratings),
        (files.rre_json, parse_rre_ratings),
    ):
        if path:
            progress(f"reading {path.name}")
            qs, js = parse(path, grade_map=grade_map_from_spec(files.grade_map or "identity"))
            questions += qs
            judgments += js
    if files.ground_truth_jsonl:
        progress(f"reading {files.ground_truth_jsonl.name}")
        qs, js = parse_ground_truth_jsonl(files.ground_truth_jsonl)
        questions += qs
        judgments += js
    # Two files may name the same question (a Quepid and an RRE file of the same queries): keep the first.
    unique: dict[str, QuestionRecord] = {}
    for record in questions:
        unique.setdefault(record.external_id, record)
    return answers, list(unique.values()), judgments
