"""Fixtures of the evaluation tests: a small rated collection, rankers, a local HTTP ranker, a broker queue."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kombu import Connection

import rankers.http
from config.celery import app as celery_app
from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Split
from corpus.services import answers_upsert, questions_upsert
from evaluation.models import EvaluationRun
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.services import rating_record
from tests.evaluation.helpers import evaluate_inline
from trainer.services import import_rater

ANSWERS = {
    "a1": ("Boundary layer", "the boundary layer of a flat plate in laminar flow"),
    "a2": ("Shock waves", "shock waves at supersonic speed around a wedge"),
    "a3": ("Heat transfer", "heat transfer to a flat plate in hypersonic flow"),
    "a4": ("Wing flutter", "flutter of a swept wing at transonic speed"),
    "a5": ("Turbulent layer", "turbulent boundary layer skin friction measurements"),
    "a6": ("Buckling", "buckling of thin cylindrical shells under pressure"),
    "a7": ("Nozzle flow", "flow in a supersonic nozzle and its shock"),
    "a8": ("Panel flutter", "panel flutter at supersonic speed"),
}
# Six test questions, two training questions.
QUESTIONS = {
    "q1": ("boundary layer flat plate", Split.TEST),
    "q2": ("supersonic shock waves", Split.TEST),
    "q3": ("heat transfer hypersonic", Split.TEST),
    "q4": ("flutter of wings", Split.TEST),
    "q5": ("buckling of shells", Split.TEST),
    "q6": ("helicopter rotor noise", Split.TEST),  # no known good answer
    "q7": ("turbulent skin friction", Split.TRAIN),
    "q8": ("nozzle shock", Split.TRAIN),
}
# (question, answer): stars
STARS = {
    ("q1", "a1"): 3,
    ("q1", "a5"): 2,
    ("q1", "a3"): 1,
    ("q2", "a2"): 3,
    ("q2", "a7"): 2,
    ("q2", "a8"): 0,
    ("q3", "a3"): 3,
    ("q3", "a1"): 0,
    ("q4", "a4"): 3,
    ("q4", "a8"): 2,
    ("q5", "a6"): 3,
    ("q6", "a4"): 0,
    ("q7", "a5"): 3,
    ("q8", "a7"): 3,
}


@pytest.fixture
def model_dir(settings, tmp_path, monkeypatch):
    """Ranker indexes and models under the test's own directory (also for a worker process started later)."""
    path = tmp_path / "models"
    settings.MODEL_DIR = path
    monkeypatch.setenv("MODEL_DIR", str(path))
    return path


@pytest.fixture
def fast_retries(monkeypatch):
    """The http ranker's backoff between attempts (0.1 s, 0.2 s, ...) made 1 ms, in this process."""
    monkeypatch.setattr(rankers.http, "BACKOFF_FIRST", 0.001)


def load_small_collection(collection: Collection, *, stars: dict | None = None) -> Collection:
    answers_upsert(
        collection=collection,
        records=[AnswerRecord(external_id=a, title=t, body=b) for a, (t, b) in ANSWERS.items()],
    )
    questions_upsert(
        collection=collection,
        records=[QuestionRecord(external_id=q, text=t, split=s) for q, (t, s) in QUESTIONS.items()],
    )
    rater = import_rater()
    answers = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    questions = {q.external_id: q for q in Question.objects.filter(collection=collection)}
    for (q, a), value in (STARS if stars is None else stars).items():
        rating_record(rater=rater, question=questions[q], answer=answers[a], stars=value)
    return collection


@pytest.fixture
def small(collection, model_dir) -> Collection:
    """The "tiny" collection with 8 answers, 6 test and 2 training questions, and labels."""
    return load_small_collection(collection)


@pytest.fixture
def builtin_ranker(small) -> Ranker:
    return Ranker.objects.create(collection=small, name="BM25", kind=RankerKind.BUILTIN, is_default=True)


@dataclass
class FakeRankerServer:
    """A real HTTP server on loopback speaking the ranker protocol, scripted per question id.

    ``rankings`` maps question id to answer ids; ``fail`` lists question ids answered with HTTP 500;
    ``fail_first`` answers the first N requests of every question with 500 (then it recovers);
    ``slow_first`` makes the first request of every question take that many seconds (a timeout);
    ``delay`` is added to every request.
    """

    rankings: dict[str, list[str]]
    fail: set[str] = field(default_factory=set)
    fail_first: int = 0
    delay: float = 0.0
    slow_first: float = 0.0
    requests: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/rank"

    def handle(self, body: dict) -> tuple[int, dict]:
        question_id = body["question"]["id"]
        self.requests.append(question_id)
        if self.slow_first and self.requests.count(question_id) == 1:
            threading.Event().wait(self.slow_first)
        if self.delay:
            threading.Event().wait(self.delay)
        if question_id in self.fail or self.requests.count(question_id) <= self.fail_first:
            return 500, {"error": "scripted failure"}
        ids = self.rankings.get(question_id, [])[: body["rows"]]
        return 200, {"answers": [{"id": a, "score": float(len(ids) - i)} for i, a in enumerate(ids)]}


@pytest.fixture
def fake_ranker_server() -> Iterator[Callable[..., FakeRankerServer]]:
    servers: list[FakeRankerServer] = []

    def start(**kwargs) -> FakeRankerServer:
        fake = FakeRankerServer(**kwargs)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                status, payload = fake.handle(json.loads(self.rfile.read(length)))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            # The default listen backlog (5) refuses connections under a worker's 16 requests in flight.
            request_queue_size = 128

        fake.server = Server(("127.0.0.1", 0), Handler)
        fake.server.daemon_threads = True
        # shutdown() waits for serve_forever's next poll: 0.5 s a test by default.
        threading.Thread(
            target=fake.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        servers.append(fake)
        return fake

    yield start
    for fake in servers:
        fake.server.shutdown()
        fake.server.server_close()


def http_ranker(collection: Collection, url: str, *, name: str = "Service", **config) -> Ranker:
    return Ranker.objects.create(
        collection=collection, name=name, kind=RankerKind.HTTP, config={"url": url, "retries": 0, **config}
    )


@dataclass
class BrokerQueue:
    name: str

    def messages(self) -> list[dict]:
        """Drain the queue: the task name and kwargs of every message in it."""
        found = []
        with Connection(celery_app.conf.broker_url) as conn:
            queue = conn.SimpleQueue(self.name)
            while True:
                try:
                    message = queue.get(block=False)
                except queue.Empty:
                    break
                found.append({"task": message.headers["task"], "kwargs": message.decode()[1]})
                message.ack()
            queue.close()
        return found


@pytest.fixture
def broker_queue() -> Iterator[BrokerQueue]:
    """Tasks published during the test go to a queue of its own, which the test can read."""
    name = f"rt-eval-test-{uuid.uuid4().hex[:10]}"
    previous = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = name
    celery_app.amqp.__dict__.pop("queues", None)
    try:
        yield BrokerQueue(name)
    finally:
        celery_app.conf.task_default_queue = previous
        celery_app.amqp.__dict__.pop("queues", None)
        with Connection(celery_app.conf.broker_url) as conn:
            conn.SimpleQueue(name).queue.delete()


def broker_url_set(url: str) -> None:
    """Point the Celery app at another broker: forget (don't close: kombu shares them) its cached pools."""
    celery_app.conf.broker_url = url
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def dead_broker() -> Iterator[str]:
    """Point the Celery app at a port where nothing listens: an honest stand-in for Redis being down."""
    url = "redis://127.0.0.1:1/0"
    previous = celery_app.conf.broker_url
    broker_url_set(url)
    try:
        yield url
    finally:
        broker_url_set(previous)


# ----------------------------------------------------------------------------------------- change explained


@dataclass
class ChangeCase:
    """Two test questions, two runs of one http ranker (versions v1 and v2) and a rating made in between.

    Labels when A ran: t1 {x1: 3}, t2 {x3: 2}. A (v1) ranked t1 [x2, x1] and t2 [x4, x3]. Then x4 was
    rated 1 star for t2. B (v2) ranked t1 [x1, x2] and t2 [x3, x4].
    """

    collection: Collection
    ranker: Ranker
    server: FakeRankerServer
    run_a: EvaluationRun
    run_b: EvaluationRun


def rate(collection: Collection, question: str, answer: str, stars: int) -> None:
    rating_record(
        rater=import_rater(),
        question=Question.objects.get(collection=collection, external_id=question),
        answer=Answer.objects.get(collection=collection, external_id=answer),
        stars=stars,
    )


@pytest.fixture
def change_case(collection, fake_ranker_server) -> ChangeCase:
    answers_upsert(
        collection=collection,
        records=[
            AnswerRecord(external_id=f"x{i}", title=f"answer {i}", body=f"body {i}") for i in range(1, 5)
        ],
    )
    questions_upsert(
        collection=collection,
        records=[QuestionRecord(external_id=q, text=f"question {q}", split=Split.TEST) for q in ("t1", "t2")],
    )
    rate(collection, "t1", "x1", 3)
    rate(collection, "t2", "x3", 2)
    server = fake_ranker_server(rankings={"t1": ["x2", "x1"], "t2": ["x4", "x3"]})
    ranker = http_ranker(collection, server.url, name="Service")
    ranker.is_default = True
    ranker.save()
    RankerVersion.objects.create(ranker=ranker, label="v1")
    run_a = evaluate_inline(ranker)
    rate(collection, "t2", "x4", 1)
    server.rankings = {"t1": ["x1", "x2"], "t2": ["x3", "x4"]}
    RankerVersion.objects.create(ranker=ranker, label="v2")
    run_b = evaluate_inline(ranker)
    return ChangeCase(collection=collection, ranker=ranker, server=server, run_a=run_a, run_b=run_b)
