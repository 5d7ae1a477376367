"""A reference judge: serve the OpenAI chat-completions protocol, grading from a collection's labels.

    GET  /v1/models              {"object": "list", "data": [{"id": "reference-judge", ...}]}
    POST /v1/chat/completions    {"model", "messages": [{"role": "user", "content": "..."}], ...}
    200                          {"choices": [{"message": {"role": "assistant", "content": "2"}}], "usage": {...}}

It finds the pair in the prompt (the collection's question text that occurs last, then that question's
labelled answer whose text occurs last; an answer it doesn't find is graded 0) and answers the pair's
label, or with ``--noise P`` a grade one step off with probability P (fixed per pair and ``--seed``), in
the ``--reply`` format. Labels are read once at start; requests never touch the database. Anyone can
try judges with it, without an API key; tests and benchmarks use its fault options:

``--api-key K`` answers 401 to requests without ``Authorization: Bearer K``; ``--latency-ms N`` sleeps
before answering; ``--rate-limit-first N`` answers the first N completions with 429 and
``Retry-After: --retry-after``; ``--fail-first N`` answers the next N with 500; ``--malformed`` answers
text that says no grade; ``--out-of-range`` answers grade 7; ``--garbage`` answers a body that is not JSON.

**Certainty.** A request with ``"logprobs": true`` gets ``choices[0].logprobs.content``, one entry per
token of the reply (``{"token", "logprob", "bytes", "top_logprobs"}``, the latter cut to the request's
``top_logprobs``, 0 by default, as OpenAI does). Every token but the grade has logprob 0; the grade's
token has probability ``SURE`` (0.9) when it is the label, the next grade towards the middle getting
the rest, and ``NOISED`` (0.6) when ``--noise`` moved it, the label getting the rest. With
``--confidence`` JSON replies also say ``"confidence"``: the same probability.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from corpus.models import Collection
from ratings.models import Label

MODEL = "reference-judge"
MAX_BODY_BYTES = 2_000_000
PREFIX = 200  # characters of an answer's text looked for in the prompt
SURE = 0.9  # the grade's probability when it is the label
NOISED = 0.6  # ... when --noise moved it off the label
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


class Faults:
    def __init__(self, **options: Any) -> None:
        self.latency = options["latency_ms"] / 1000
        self.retry_after = options["retry_after"]
        self.malformed = options["malformed"]
        self.out_of_range = options["out_of_range"]
        self.garbage = options["garbage"]
        self._limited = options["rate_limit_first"]
        self._failures = options["fail_first"]
        self._lock = threading.Lock()

    def next_fault(self) -> str:
        """ "429", "500" or "" for this completion request (the first N of each)."""
        with self._lock:
            if self._limited > 0:
                self._limited -= 1
                return "429"
            if self._failures > 0:
                self._failures -= 1
                return "500"
            return ""


class Grades:
    """The collection's labels by question text and answer text."""

    def __init__(self, collection: Collection, noise: float, seed: int) -> None:
        self.noise, self.seed = noise, seed
        self.questions: dict[str, list[tuple[str, int]]] = {}
        rows = Label.objects.filter(question__collection=collection).values_list(
            "question__text", "answer__title", "answer__body", "gain"
        )
        for question, title, body, gain in rows:
            text = f"{title}\n{body}".strip()[:PREFIX]
            self.questions.setdefault(question, []).append((text, gain))
        # Longest first: a question that contains another one's text wins when both occur.
        self.ordered = sorted(self.questions, key=len, reverse=True)
        self.count = sum(len(v) for v in self.questions.values())

    def grade(self, prompt: str) -> int:
        return self.grade_and_label(prompt)[0]

    def grade_and_label(self, prompt: str) -> tuple[int, int]:
        """(the grade answered, the pair's label): they differ when --noise moved the grade."""
        question = max(self.ordered, key=lambda q: prompt.rfind(q), default=None)
        if question is None or prompt.rfind(question) < 0:
            return 0, 0
        found = [(prompt.rfind(text), gain, text) for text, gain in self.questions[question]]
        found = [item for item in found if item[0] >= 0]
        if not found:
            return 0, 0
        _, gain, text = max(found)
        return self._noisy(gain, question, text), gain

    def _noisy(self, gain: int, question: str, answer: str) -> int:
        if not self.noise:
            return gain
        digest = hashlib.sha256(f"{self.seed}\0{question}\0{answer}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        if draw >= self.noise:
            return gain
        step = 1 if digest[8] % 2 else -1
        shifted = gain + step
        return shifted if 0 <= shifted <= 3 else gain - step


def grade_probabilities(grade: int, label: int) -> dict[int, float]:
    """{grade: probability} at the grade's token (module docstring), the answered grade first."""
    if grade != label:
        return {grade: NOISED, label: 1 - NOISED}
    return {grade: SURE, (grade + 1 if grade < 2 else grade - 1): 1 - SURE}


def token_logprobs(content: str, grade: int, label: int, top: int) -> list[dict]:
    """``choices[0].logprobs.content`` for the reply (module docstring)."""
    probabilities = grade_probabilities(grade, label)
    tokens = []
    seen_grade = False
    for match in _TOKEN.finditer(content):
        token = match.group()
        if (
            token == str(grade)
            and not seen_grade
            and (content.strip() == token or _after_grade(content, match))
        ):
            seen_grade = True
            alternatives = [(str(g), math.log(p)) for g, p in probabilities.items()]
        else:
            alternatives = [(token, 0.0)]
        tokens.append(
            {
                "token": token,
                "logprob": alternatives[0][1],
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives[:top]
                ],
            }
        )
    return tokens


def _after_grade(content: str, match: re.Match) -> bool:
    before = content[: match.start()].lower()
    return before.rstrip(" \"':").endswith("grade")


def reply_content(grade: int, reply: str, confidence: float | None = None) -> str:
    if reply == "json":
        payload: dict[str, object] = {"reasoning": "Graded from the collection's labels.", "grade": grade}
        if confidence is not None:
            payload["confidence"] = confidence
        return json.dumps(payload)
    if reply == "reasoning":
        return f"The reference judge looked the pair up in the collection's labels.\nGrade: {grade}"
    return str(grade)


class Server(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


def make_handler(
    *, grades: Grades, faults: Faults, api_key: str, reply: str, verbose: bool, confidence: bool = False
) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        server_version = "RankTrainerJudgeServer/1"

        def _send(self, status: int, payload: Any = None, raw: bytes | None = None, headers=None) -> None:
            body = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "text/html")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, kind: str, headers=None) -> None:
            self._send(status, {"error": {"message": message, "type": kind}}, headers=headers)

        def _authorised(self) -> bool:
            if api_key and self.headers.get("Authorization", "") != f"Bearer {api_key}":
                self._error(HTTPStatus.UNAUTHORIZED, "Incorrect API key provided.", "invalid_request_error")
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") == "/v1/models":
                if self._authorised():
                    self._send(HTTPStatus.OK, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._error(HTTPStatus.NOT_FOUND, "GET /v1/models; POST /v1/chat/completions", "not_found")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._error(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request body too large", "invalid_request_error"
                )
                return
            body = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(HTTPStatus.NOT_FOUND, "POST /v1/chat/completions", "not_found")
                return
            if not self._authorised():
                return
            if faults.latency:
                time.sleep(faults.latency)
            fault = faults.next_fault()
            if fault == "429":
                self._error(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    "Rate limit reached (--rate-limit-first).",
                    "rate_limit_exceeded",
                    headers={"Retry-After": f"{faults.retry_after:g}"},
                )
                return
            if fault == "500":
                self._error(
                    HTTPStatus.INTERNAL_SERVER_ERROR, "Injected failure (--fail-first).", "server_error"
                )
                return
            if faults.garbage:
                self._send(HTTPStatus.OK, raw=b"<html>injected garbage (--garbage)</html>")
                return
            try:
                payload = json.loads(body)
                messages = payload["messages"]
                prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
            except (ValueError, KeyError, TypeError, AttributeError):
                self._error(
                    HTTPStatus.BAD_REQUEST, '"messages" must be a list of messages', "invalid_request_error"
                )
                return
            grade, label = grades.grade_and_label(prompt)
            if faults.malformed:
                content = "This answer seems somewhat relevant, I think."
            elif faults.out_of_range:
                grade = label = 7
                content = reply_content(7, reply)
            else:
                sure = grade_probabilities(grade, label)[grade] if confidence else None
                content = reply_content(grade, reply, sure)
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
            if payload.get("logprobs") is True:
                top = payload.get("top_logprobs") or 0
                if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 20:
                    self._error(
                        HTTPStatus.BAD_REQUEST, '"top_logprobs" must be from 0 to 20', "invalid_request_error"
                    )
                    return
                choice["logprobs"] = {"content": token_logprobs(content, grade, label, top)}
            self._send(
                HTTPStatus.OK,
                {
                    "id": "chatcmpl-reference",
                    "object": "chat.completion",
                    "model": payload.get("model") or MODEL,
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": len(prompt.split()),
                        "completion_tokens": len(content.split()),
                        "total_tokens": len(prompt.split()) + len(content.split()),
                    },
                },
            )

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            if verbose:
                super().log_message(format, *args)

    return Handler


class Command(BaseCommand):
    help = "Serve a reference judge over the OpenAI chat-completions protocol, grading from a collection's labels."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="slug of the collection whose labels grade")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8078, help="0 picks a free port (printed at start)")
        parser.add_argument("--reply", choices=["digit", "json", "reasoning"], default="digit")
        parser.add_argument("--noise", type=float, default=0.0, help="probability of a grade one step off")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--api-key", default="", help="require this bearer key (else any, or none)")
        parser.add_argument(
            "--confidence", action="store_true", help='JSON replies also say "confidence" (0-1)'
        )
        faults = parser.add_argument_group("fault injection (tests and benchmarks only)")
        faults.add_argument("--latency-ms", type=int, default=0)
        faults.add_argument("--rate-limit-first", type=int, default=0, help="answer the first N with 429")
        faults.add_argument("--retry-after", type=float, default=1.0, help="seconds in the 429's Retry-After")
        faults.add_argument("--fail-first", type=int, default=0, help="answer the next N with 500")
        faults.add_argument("--malformed", action="store_true", help="answer text with no grade in it")
        faults.add_argument("--out-of-range", action="store_true", help="answer grade 7")
        faults.add_argument("--garbage", action="store_true", help="answer a body that is not JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        for name in ("latency_ms", "rate_limit_first", "fail_first"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must be 0 or more")
        if not 0 <= options["noise"] <= 1:
            raise CommandError("--noise must be from 0 to 1")
        grades = Grades(collection, options["noise"], options["seed"])
        connections.close_all()  # requests never use the database
        handler = make_handler(
            grades=grades,
            faults=Faults(**options),
            api_key=options["api_key"],
            reply=options["reply"],
            verbose=options["verbosity"] >= 2,
            confidence=options["confidence"],
        )
        server = Server((options["host"], options["port"]), handler)
        host, port = options["host"], server.server_address[1]
        self.stdout.write(
            f"judge_server: {collection.slug} ({grades.count} labels) on http://{host}:{port}/v1"
        )
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
