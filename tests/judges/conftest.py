"""A committed collection with people's ratings, and the reference judge server in real subprocesses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Role, Split
from corpus.services import answers_upsert, collection_create, membership_set, questions_upsert
from ratings.services import rating_record
from tests.servers import JudgeServer, SharedServers, options_key, start_judge_server

ANSWERS = [
    AnswerRecord("a1", "Boundary layer", "The boundary layer of a flat plate thickens downstream."),
    AnswerRecord("a2", "Shock waves", "Shock waves form in supersonic flow around a wedge."),
    AnswerRecord("a3", "Heat transfer", "Heat transfer at hypersonic speed heats the nose cone."),
    AnswerRecord("a4", "Wing lift", "Wing lift grows with the angle of attack until stall."),
    AnswerRecord("a5", "Pasta", "Cooking pasta in salted boiling water."),
    AnswerRecord("a6", "Buckling", "Buckling of thin cylindrical shells under axial load."),
]
QUESTIONS = [
    QuestionRecord("q1", "how does the boundary layer of a flat plate grow", Split.TRAIN),
    QuestionRecord("q2", "what happens in supersonic flow around a wedge", Split.TRAIN),
    QuestionRecord("q3", "how hot does a nose cone get at hypersonic speed", Split.TEST),
    QuestionRecord("q4", "when do thin cylindrical shells buckle", Split.TEST),
]
# People's stars: (question, answer) -> stars.
HUMAN = {
    ("q1", "a1"): 3,
    ("q1", "a2"): 0,
    ("q2", "a2"): 3,
    ("q2", "a4"): 1,
    ("q3", "a3"): 3,
    ("q3", "a5"): 0,
    ("q4", "a6"): 2,
    ("q4", "a1"): 0,
}


@dataclass
class Judged:
    collection: Collection
    trainer: object
    human: object

    def q(self, external_id: str) -> Question:
        return Question.objects.get(collection=self.collection, external_id=external_id)

    def a(self, external_id: str) -> Answer:
        return Answer.objects.get(collection=self.collection, external_id=external_id)


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="module")
def judged_committed(django_db_setup, django_db_blocker) -> Iterator[tuple[int, int, int]]:
    """The "judged" collection, committed so that judge_server subprocesses can read its labels."""
    users = get_user_model().objects
    with django_db_blocker.unblock():
        # No password: nobody logs in as them, and a module fixture hashes with PBKDF2 (0.44 s a user,
        # 18 a run), outside the tests' fast_password_hashing.
        collection = collection_create(name="Judged", slug="judged")
        answers_upsert(collection=collection, records=ANSWERS)
        questions_upsert(collection=collection, records=QUESTIONS)
        trainer = users.create_user(username="judged-trainer", password=None)
        human = users.create_user(username="judged-human", password=None)
        membership_set(collection=collection, user=trainer, role=Role.TRAINER)
        membership_set(collection=collection, user=human, role=Role.RATER)
        for (q, a), stars in HUMAN.items():
            rating_record(
                rater=human,
                question=Question.objects.get(collection=collection, external_id=q),
                answer=Answer.objects.get(collection=collection, external_id=a),
                stars=stars,
            )
    try:
        yield collection.pk, trainer.pk, human.pk
    finally:
        with django_db_blocker.unblock():
            from judges.models import Judge

            for judge in Judge.objects.filter(collection_id=collection.pk):
                judge.account.user.delete()
            collection.delete()
            users.filter(pk__in=[trainer.pk, human.pk]).delete()


@pytest.fixture
def judged(judged_committed, db) -> Judged:
    collection_id, trainer_id, human_id = judged_committed
    users = get_user_model().objects
    return Judged(Collection.objects.get(pk=collection_id), users.get(pk=trainer_id), users.get(pk=human_id))


# Options whose counters requests use up: a server started with one is the calling test's own.
STATEFUL_OPTIONS = frozenset({"--rate-limit-first", "--fail-first"})
# The others' servers are shared: one process for the same options (in any order) while the tests under
# tests/judges follow one another, across modules. Labels are read once at start and the "judged"
# collection each module commits has the same questions, answers and labels, which the server grades by
# their text: it answers every module as a server of its own would.
_shared = SharedServers(Path(__file__).parent)


@pytest.fixture(scope="module")
def judge_server_factory(judged_committed, tmp_path_factory, request) -> Iterator[Callable[..., JudgeServer]]:
    """Reference judge servers for the "judged" collection, given the options: a new one with a fault
    counter (STATEFUL_OPTIONS), stopped at the module's end; else the one started with the same options."""
    started: list[JudgeServer] = []
    log_dir = tmp_path_factory.mktemp("judge-logs")

    def start(*args: str) -> JudgeServer:
        if STATEFUL_OPTIONS.intersection(args):
            server = start_judge_server("judged", log_dir, *args)
            started.append(server)
            return server
        return _shared.get(
            request, ("judged", options_key(args)), lambda: start_judge_server("judged", log_dir, *args)
        )

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def judge_server(judge_server_factory) -> JudgeServer:
    """A plain reference judge: exact labels, one digit, no key."""
    return judge_server_factory()
