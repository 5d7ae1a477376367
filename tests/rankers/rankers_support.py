"""Shared test data and helpers for the ranker and API tests (imported by their test modules).

``learnable_collection`` is built so a reranker can beat BM25: for each question "<a> <b>" the one
relevant answer has both terms in its *title*, while four distractors repeat them in a short body, so
BM25 (which sees title + body together) ranks the distractors first and title coverage finds the
relevant one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Collection, Split
from corpus.services import collection_create
from rankers.builtin import clear_ranker_caches
from tests.servers import RankerServer, SharedServers, options_key, start_ranker_server
from trainer.services import collection_import

FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt labore"


@pytest.fixture
def model_dir(settings, tmp_path, monkeypatch) -> Path:
    """MODEL_DIR in a temporary directory (also for subprocesses started from the test), empty cache."""
    path = tmp_path / "models"
    settings.MODEL_DIR = path
    monkeypatch.setenv("MODEL_DIR", str(path))
    clear_ranker_caches()
    yield path
    clear_ranker_caches()


def word(prefix: str, n: int) -> str:
    # Letters only, so stemming leaves them alone and no two questions share a term.
    letters = "".join(chr(ord("a") + int(d)) for d in f"{n:03d}")
    return f"{prefix}{letters}"


@dataclass
class Learnable:
    collection: Collection
    train_ids: list[str] = field(default_factory=list)
    test_ids: list[str] = field(default_factory=list)


def learnable_records(questions: int = 40, test_every: int = 4):
    answers, question_records, judgments = [], [], []
    for n in range(questions):
        a, b = word("zorp", n), word("quix", n)
        qid = f"q{n}"
        split = Split.TEST if n % test_every == 0 else Split.TRAIN
        question_records.append(QuestionRecord(qid, f"{a} {b}", split))
        relevant = f"r{n}"
        answers.append(AnswerRecord(relevant, f"{a} {b}", f"{a} {b} {FILLER} {FILLER}"))
        judgments.append(JudgmentRecord(qid, relevant, 3))
        for d in range(4):
            distractor = f"d{n}-{d}"
            answers.append(AnswerRecord(distractor, "misc", f"{a} {a} {a} {b} {b} {b} {FILLER[: 10 * d]}"))
            if d == 0:
                judgments.append(JudgmentRecord(qid, distractor, 0))
    return answers, question_records, judgments


def learnable_collection(slug: str = "learnable", questions: int = 40) -> Learnable:
    collection = collection_create(name=slug.title(), slug=slug)
    answers, question_records, judgments = learnable_records(questions)
    collection_import(collection=collection, answers=answers, questions=question_records, judgments=judgments)
    return Learnable(
        collection=collection,
        train_ids=[q.external_id for q in question_records if q.split == Split.TRAIN],
        test_ids=[q.external_id for q in question_records if q.split == Split.TEST],
    )


TINY_ANSWERS = [
    AnswerRecord("a1", "Boundary layer flow", "The boundary layer of a flat plate in laminar flow."),
    AnswerRecord("a2", "Shock waves", "Shock waves in supersonic flow behind a blunt body."),
    AnswerRecord("a3", "Heat transfer", "Heat transfer to a cone at hypersonic speed."),
    AnswerRecord("a4", "Layered boundaries", "Boundary conditions of layered plates."),
]


def tiny_answers(collection: Collection) -> None:
    collection_import(collection=collection, answers=TINY_ANSWERS)


@dataclass
class Served:
    slug: str
    model_dir: Path
    log_dir: Path

    def start(self, *args: str) -> RankerServer:
        return start_ranker_server(self.slug, self.log_dir, *args, model_dir=self.model_dir)

    def shared(self, request: pytest.FixtureRequest, *args: str) -> RankerServer:
        """The server started with these options, shared while the tests under tests/rankers follow one
        another (across modules: each module's collection has the same answers, which the server reads
        at start); not to be stopped by its user. Only for options that keep no state (not --fail-first)
        and a server that loads no model (its MODEL_DIR is the first caller's)."""
        return _shared.get(request, (self.slug, options_key(args)), lambda: self.start(*args))


_shared = SharedServers(Path(__file__).parent)


@pytest.fixture(scope="module")
def served(django_db_setup, django_db_blocker, tmp_path_factory) -> Served:
    """A committed collection "served" with the tiny answers, for ranker_server subprocesses to read."""
    with django_db_blocker.unblock():
        collection = collection_create(name="Served", slug="served")
        tiny_answers(collection)
    try:
        yield Served(
            slug="served",
            model_dir=tmp_path_factory.mktemp("models"),
            log_dir=tmp_path_factory.mktemp("logs"),
        )
    finally:
        with django_db_blocker.unblock():
            collection.delete()
