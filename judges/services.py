"""Writes of judges and judging runs, and the run itself.

A judging run fixes its pairs when it starts, then a worker claims it (QUEUED → RUNNING by a
conditional UPDATE) and judges each pair the judge has not rated yet: one pair per call, never with the
ranker's rank or score, up to the judge's concurrency in flight and its requests per minute. Each
judgment is saved as the judge's rating with the raw reply (``ratings.services.judge_ratings_record``,
in batches of up to the judge's concurrency, at least every half second), so a run that fails or is
cancelled keeps everything it judged (one that loses its worker keeps all but its last batch), and
resuming it judges only the rest. Transient failures (unreachable, timeouts, 429, 5xx) are retried with backoff by
the client; a reply that does not parse or says a grade outside 0–3 fails that pair (listed on the run);
a wrong key or a refused address fails the run with the reason.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from corpus.models import Answer, Collection, Question, Split
from evaluation.broker import BrokerUnreachable, broker_check
from evaluation.heartbeat import stale_jobs_take_over
from judges import builtin
from judges.certainty import grade_probability, json_confidence, threshold_distance
from judges.client import RETRIES, ChatClient, JudgeError, JudgeRefused, JudgeUnavailable
from judges.models import (
    ACTIVE_JUDGING,
    Judge,
    JudgeKind,
    Judging,
    JudgingStatus,
    ReplyFormat,
    Selection,
)
from judges.prompts import Example, GradeOutOfRange, ReplyUnparsable, parse_reply, prompt, template_errors
from judges.selectors import human_labelled_pairs, select_pairs
from ratings.models import JudgeAccount
from ratings.services import judge_ratings_record, judge_trust_set

logger = logging.getLogger(__name__)

JUDGING_MAX_ATTEMPTS = 3
MAX_PAIRS = 5000
PAIR_ERRORS_KEPT = 20
# A run whose first replies all fail to parse stops: the template or reply format is wrong.
EARLY_FAILURES = 10
# Judgments are saved in batches (up to the judge's concurrency, or every FLUSH_SECONDS), and the run's
# counts and a cancel request are written and read every REPORT_SECONDS: per judgment, the database work
# would otherwise cap throughput well below what the judge serves at high concurrency.
FLUSH_SECONDS = 0.5
REPORT_SECONDS = 0.5

EDITABLE = (
    "name",
    "kind",
    "base_url",
    "model",
    "temperature",
    "concurrency",
    "requests_per_minute",
    "timeout_seconds",
    "prompt_template",
    "reply_format",
    "few_shot",
    "logprobs",
)


class JudgingConflict(Exception):
    def __init__(self, judging: Judging) -> None:
        super().__init__(
            f"Judge {judging.judge.name!r} is already judging (run {judging.pk}, {judging.status})."
        )
        self.judging = judging


class JudgingUnavailable(Exception):
    """The task queue is unreachable; nothing was stored."""


def redact(text: str, judge: Judge) -> str:
    """``text`` without the judge's API key, whatever said it."""
    return text.replace(judge.api_key, "[key]") if judge.api_key else text


def _validate(judge: Judge) -> None:
    errors: dict[str, str] = {}
    if not judge.name.strip():
        errors["name"] = "A judge needs a name."
    elif (
        Judge.objects.filter(collection_id=judge.collection_id, name=judge.name.strip())
        .exclude(pk=judge.pk)
        .exists()
    ):
        errors["name"] = f"This collection already has a judge named {judge.name.strip()!r}."
    if judge.kind not in JudgeKind.values:
        errors["kind"] = f"Kind must be one of {', '.join(JudgeKind.values)}, not {judge.kind!r}."
    if judge.kind == JudgeKind.OPENAI_CHAT:
        if not judge.base_url.startswith(("http://", "https://")):
            errors["base_url"] = (
                "An openai-chat judge needs its base URL (http:// or https://), e.g. http://host/v1."
            )
        else:
            from rankers.outbound import OutboundRefused, check_url

            try:
                check_url(judge.base_url)
            except OutboundRefused as exc:
                errors["base_url"] = str(exc)
        if not judge.model.strip():
            errors["model"] = "An openai-chat judge needs a model name."
    problems = template_errors(judge.prompt_template)
    if problems:
        errors["prompt_template"] = " ".join(problems)
    if judge.reply_format not in ReplyFormat.values:
        errors["reply_format"] = f"Reply format must be one of {', '.join(ReplyFormat.values)}."
    if not 0 <= judge.temperature <= 2:
        errors["temperature"] = "Temperature must be from 0 to 2."
    if not 1 <= judge.concurrency <= 64:
        errors["concurrency"] = "Concurrency must be from 1 to 64."
    if judge.requests_per_minute < 0:
        errors["requests_per_minute"] = "Requests per minute must be 0 (no limit) or more."
    if not 1 <= judge.timeout_seconds <= 600:
        errors["timeout_seconds"] = "The timeout must be from 1 to 600 seconds."
    if judge.few_shot > 12:
        errors["few_shot"] = "At most 12 worked examples."
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def judge_create(*, collection: Collection, name: str, api_key: str = "", **fields: Any) -> Judge:
    """A new judge of the collection with its own rater account (inactive: it can't log in)."""
    unknown = set(fields) - set(EDITABLE)
    if unknown:
        raise ValidationError({f: "Not a judge setting." for f in sorted(unknown)})
    judge = Judge(collection=collection, name=(name or "").strip(), api_key=api_key or "", **fields)
    _validate(judge)
    user = User.objects.create_user(
        username=f"judge-{collection.pk}-{secrets.token_hex(4)}", first_name=judge.name[:150], is_active=False
    )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    judge.account = JudgeAccount.objects.create(user=user, collection=collection)
    judge.save()
    return judge


@transaction.atomic
def judge_update(*, judge: Judge, api_key: str | None = None, **fields: Any) -> Judge:
    """Change settings; ``api_key`` None keeps the key, "" removes it, anything else replaces it."""
    unknown = set(fields) - set(EDITABLE)
    if unknown:
        raise ValidationError({f: "Not a judge setting." for f in sorted(unknown)})
    for name, value in fields.items():
        setattr(judge, name, value.strip() if name == "name" and isinstance(value, str) else value)
    if api_key is not None:
        judge.api_key = api_key
    _validate(judge)
    judge.save()
    User.objects.filter(pk=judge.account.user_id).update(first_name=judge.name[:150])
    return judge


def judge_trust(*, judge: Judge, counts: bool, human_wins: bool = True) -> int:
    """Whether the judge's ratings count toward labels; recomputes the labels of its pairs."""
    return judge_trust_set(account=judge.account, counts=counts, human_wins=human_wins)


@transaction.atomic
def judge_delete(*, judge: Judge) -> None:
    """Remove the judge, its runs and its ratings (and so its part of any label)."""
    from ratings.models import Rating
    from ratings.services import labels_recompute

    if judge.judgings.filter(status__in=ACTIVE_JUDGING).exists():
        raise ValidationError({"judge": "Cancel the judge's running judging first."})
    pairs = list(
        Rating.objects.filter(rater_id=judge.account.user_id).values_list("question_id", "answer_id")
    )
    user = judge.account.user
    user.delete()  # cascades to the account, the judge, its runs and its ratings
    labels_recompute(pairs=pairs)


# --- grading one pair --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairText:
    question_id: int
    answer_id: int
    question: str
    answer_external_id: str
    answer: str


@dataclass(frozen=True)
class Judgment:
    stars: int
    reply: str
    prompt: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    certainty: float | None = None  # ``judges.certainty``


class Grader:
    """Grades one pair at a time (thread-safe); ``close`` when done."""

    def __init__(
        self, judge: Judge, on_retry: Callable[[], None] | None = None, retries: int | None = None
    ) -> None:
        self.judge = judge
        self.on_retry = on_retry
        self.client: ChatClient | None = None
        self.examples: list[Example] = []
        if judge.kind == JudgeKind.BUILTIN:
            # Training questions' labels only: the judge grades test questions' pairs for the evaluation,
            # so propagating or calibrating from their labels would carry people's test grades into it.
            labelled = [
                (p.question_id, p.question, p.answer_external_id, p.stars)
                for p in human_labelled_pairs(collection=judge.collection, split=Split.TRAIN)
            ]
            self.scorer = builtin.scorer_for(collection=judge.collection, labelled=labelled)
            self.thresholds, self.labels_used = builtin.calibrate_on(scorer=self.scorer, labelled=labelled)
            Judge.objects.filter(pk=judge.pk).update(
                calibration={
                    "thresholds": list(self.thresholds),
                    "labels": self.labels_used,
                    "signal": "bm25-ratio" if self.scorer.neighbours is None else "propagation-mean",
                    "fallback": self.scorer.fallback,
                }
            )
        else:
            self.examples = few_shot_examples(judge=judge)
            self.client = ChatClient(
                base_url=judge.base_url,
                model=judge.model,
                api_key=judge.api_key,
                temperature=judge.temperature,
                timeout=judge.timeout_seconds,
                concurrency=judge.concurrency,
                requests_per_minute=judge.requests_per_minute,
                retries=RETRIES if retries is None else retries,
                logprobs=judge.logprobs,
            )

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def grade(self, pair: PairText) -> Judgment:
        if self.client is None:
            score = self.scorer.score(pair.question, pair.answer_external_id, pair.question_id)
            description = self.scorer.describe(pair.question, pair.answer_external_id, pair.question_id)
            return Judgment(
                builtin.grade(score, self.thresholds),
                builtin.reply_text(description, score, self.thresholds, self.labels_used),
                certainty=threshold_distance(score, self.thresholds),
            )
        message = prompt(
            template=self.judge.prompt_template,
            reply_format=self.judge.reply_format,
            question=pair.question,
            answer=pair.answer,
            examples=[e for e in self.examples if e.question != pair.question],
        )
        reply = self.client.complete(message, on_retry=self.on_retry)
        try:
            stars, _ = parse_reply(reply.content, self.judge.reply_format)
        except (ReplyUnparsable, GradeOutOfRange) as exc:
            raise PairFailed(str(exc), reply.prompt_tokens, reply.completion_tokens, reply.attempts) from None
        return Judgment(
            stars,
            reply.content,
            message,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.attempts,
            certainty=self.certainty(stars, reply.content, reply.token_logprobs),
        )

    def certainty(self, stars: int, content: str, token_logprobs: list | None) -> float | None:
        """The JSON reply's own confidence, else the grade's probability from token log-probabilities,
        else None (``judges.certainty``)."""
        if self.judge.reply_format == ReplyFormat.JSON:
            said = json_confidence(content)
            if said is not None:
                return said
        if token_logprobs is None:
            return None
        return grade_probability(token_logprobs, stars, self.judge.reply_format)


class PairFailed(Exception):
    """This pair's reply could not be used (the run goes on); carries the tokens it cost."""

    def __init__(self, message: str, prompt_tokens: int = 0, completion_tokens: int = 0, requests: int = 1):
        super().__init__(message)
        self.prompt_tokens, self.completion_tokens, self.requests = prompt_tokens, completion_tokens, requests


def few_shot_examples(*, judge: Judge) -> list[Example]:
    """Up to ``judge.few_shot`` worked examples from people's labels on training questions, grades
    3, 2, 1, 0 in turn (the lowest pair ids first, so the choice is stable)."""
    if not judge.few_shot:
        return []
    by_grade: dict[int, list[Example]] = {3: [], 2: [], 1: [], 0: []}
    for pair in human_labelled_pairs(collection=judge.collection, split=Split.TRAIN):
        by_grade[pair.stars].append(Example(pair.question, pair.answer, pair.stars))
    chosen: list[Example] = []
    for i in range(judge.few_shot):
        for g in (3, 2, 1, 0):
            if len(chosen) < judge.few_shot and i < len(by_grade[g]):
                chosen.append(by_grade[g][i])
    return chosen


def pair_texts(pairs: list[tuple[int, int]], collection_id: int) -> dict[tuple[int, int], PairText]:
    """The texts of the pairs (of one collection only: others are left out)."""
    questions = dict(
        Question.objects.filter(collection_id=collection_id, pk__in={q for q, _ in pairs}).values_list(
            "pk", "text"
        )
    )
    answers = {
        pk: (external_id, f"{title}\n{body}".strip())
        for pk, external_id, title, body in Answer.objects.filter(
            collection_id=collection_id, pk__in={a for _, a in pairs}
        ).values_list("pk", "external_id", "title", "body")
    }
    return {
        (q, a): PairText(q, a, questions[q], answers[a][0], answers[a][1])
        for q, a in pairs
        if q in questions and a in answers
    }


@dataclass(frozen=True)
class TestOutcome:
    question: str
    answer: str
    prompt: str
    reply: str
    stars: int | None
    error: str


def judge_test(*, judge: Judge) -> TestOutcome:
    """Grade one pair (one people rated, else any candidate) without saving: the raw reply or the error."""
    labelled = human_labelled_pairs(collection=judge.collection, limit=1)
    if labelled:
        q, a = labelled[0].question_id, labelled[0].answer_id
    else:
        answer = Answer.objects.filter(collection=judge.collection).order_by("pk").first()
        question = Question.objects.filter(collection=judge.collection).order_by("pk").first()
        if answer is None or question is None:
            return TestOutcome(
                "", "", "", "", None, "The collection has no questions or answers to test with."
            )
        q, a = question.pk, answer.pk
    pair = pair_texts([(q, a)], judge.collection_id)[(q, a)]
    grader = None
    try:
        grader = Grader(judge, retries=0)  # a test shows the first answer, whatever it is
        judgment = grader.grade(pair)
        return TestOutcome(pair.question, pair.answer, judgment.prompt, judgment.reply, judgment.stars, "")
    except (JudgeError, PairFailed) as exc:
        return TestOutcome(pair.question, pair.answer, "", "", None, redact(str(exc), judge))
    finally:
        if grader is not None:
            grader.close()


# --- runs ------------------------------------------------------------------------------------------------


def _broker_check() -> None:
    try:
        broker_check()
    except BrokerUnreachable as exc:
        raise JudgingUnavailable(
            f"Judging could not be queued: the task queue is not reachable ({exc.__cause__.__class__.__name__})."
        ) from exc


def _enqueue(judging_id: int) -> None:
    current_app.send_task("judges.run", kwargs={"judging_id": judging_id})


def judging_start(
    *,
    judge: Judge,
    selection: str,
    limit: int = 100,
    question_ids: list[str] | None = None,
    budget_tokens: int = 0,
    created_by: User | None = None,
) -> Judging:
    """Fix the pairs to judge and queue the run (Celery task ``judges.run``) after the commit.

    ValidationError naming the field for a bad selection or no pairs; JudgingConflict when the judge is
    already judging; JudgingUnavailable when the broker is unreachable. Nothing is stored then.
    """
    if selection not in Selection.values:
        raise ValidationError({"selection": f"Selection must be one of {', '.join(Selection.values)}."})
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAIRS:
        raise ValidationError({"limit": f"Limit must be a whole number from 1 to {MAX_PAIRS}."})
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise ValidationError(
            {"budget_tokens": "The budget must be 0 (none) or a positive number of tokens."}
        )
    pairs = select_pairs(judge=judge, selection=selection, limit=limit, question_ids=question_ids or [])
    if not pairs:
        raise ValidationError({"selection": "Nothing to judge: the judge has rated every pair this selects."})
    _broker_check()
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).first()
        active = Judging.objects.filter(judge=judge, status__in=ACTIVE_JUDGING).first()
        if active is not None:
            raise JudgingConflict(active)
        judging = Judging.objects.create(
            judge=judge,
            selection=selection,
            pairs=[list(p) for p in pairs],
            budget_tokens=budget_tokens,
            created_by=created_by,
        )
        transaction.on_commit(lambda: _enqueue(judging.pk))
    return judging


@transaction.atomic
def judging_cancel(*, judging: Judging) -> Judging:
    """Stop a run: a queued one at once, a running one at its next judgment (it keeps what it judged)."""
    Judging.objects.filter(pk=judging.pk, status=JudgingStatus.QUEUED).update(
        status=JudgingStatus.CANCELLED, finished_at=timezone.now(), error="Cancelled before it started."
    )
    Judging.objects.filter(pk=judging.pk, status=JudgingStatus.RUNNING).update(cancel_requested=True)
    judging.refresh_from_db()
    return judging


def judging_resume(*, judging: Judging) -> Judging:
    """Queue a failed or cancelled run again: it judges only the pairs the judge has not rated."""
    if not judging.resumable:
        raise ValidationError(
            {"status": f"Only a failed or cancelled run can be resumed; this one is {judging.status}."}
        )
    _broker_check()
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judging.judge_id).first()
        active = Judging.objects.filter(judge_id=judging.judge_id, status__in=ACTIVE_JUDGING).first()
        if active is not None:
            raise JudgingConflict(active)
        Judging.objects.filter(pk=judging.pk).update(
            status=JudgingStatus.QUEUED,
            error="",
            cancel_requested=False,
            finished_at=None,
            attempts=0,
            failed=0,
            claimed_by="",
        )
        transaction.on_commit(lambda: _enqueue(judging.pk))
    judging.refresh_from_db()
    return judging


def judging_claim(*, judging_id: int, worker: str) -> bool:
    """QUEUED → RUNNING by one conditional UPDATE: of two workers given the same run, one wins."""
    now = timezone.now()
    return bool(
        Judging.objects.filter(pk=judging_id, status=JudgingStatus.QUEUED).update(
            status=JudgingStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            claimed_by=worker,
            attempts=F("attempts") + 1,
        )
    )


@dataclass
class _Counts:
    judged: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def retry(self) -> None:
        with self.lock:
            self.retries += 1
            self.requests += 1


def _finish(judging_id: int, status: str, error: str = "") -> None:
    Judging.objects.filter(pk=judging_id).update(
        status=status, finished_at=timezone.now(), error=error[:4000], heartbeat_at=timezone.now()
    )


def judging_run(*, judging_id: int, worker: str) -> Judging | None:
    """Claim the run and judge its remaining pairs (see the module docstring). Returns the finished run,
    or None when another worker had claimed it."""
    if not judging_claim(judging_id=judging_id, worker=worker):
        return None
    judging = Judging.objects.select_related("judge__collection", "judge__account").get(pk=judging_id)
    judge = judging.judge
    rated = set(
        judge.account.user.ratings.filter(question__collection=judge.collection).values_list(
            "question_id", "answer_id"
        )
    )
    todo = [(q, a) for q, a in judging.pairs if (q, a) not in rated]
    texts = pair_texts(todo, judge.collection_id)
    judged_before = len(judging.pairs) - len(todo)  # by this run, before an interruption
    counts = _Counts(judged=judged_before, requests=judging.requests, retries=judging.retries,
                     prompt_tokens=judging.prompt_tokens, completion_tokens=judging.completion_tokens,
                     errors=list(judging.pair_errors))  # fmt: skip
    try:
        grader = Grader(judge, on_retry=counts.retry)
    except (JudgeError, OSError, ValueError) as exc:
        _finish(judging_id, JudgingStatus.FAILED, redact(f"The judge could not start: {exc}", judge))
        return Judging.objects.get(pk=judging_id)
    stop_reason, stop_status = "", JudgingStatus.SUCCEEDED
    in_flight: dict[Future, tuple[int, int]] = {}
    queue = deque(p for p in todo if p in texts)
    early, judged_here = 0, False
    batch: list[tuple[int, int, int, str, float | None]] = []
    flushed = reported = float("-inf")
    try:
        with ThreadPoolExecutor(max_workers=judge.concurrency, thread_name_prefix="judge") as pool:
            while queue or in_flight:
                while queue and len(in_flight) < judge.concurrency * 2 and not stop_reason:
                    if (
                        judging.budget_tokens
                        and counts.prompt_tokens + counts.completion_tokens >= judging.budget_tokens
                    ):
                        stop_reason = (
                            f"Stopped at the budget of {judging.budget_tokens:,} tokens; "
                            "raise the budget (or start a new run) to judge the rest."
                        )
                        stop_status = JudgingStatus.FAILED
                        break
                    pair = queue.popleft()
                    in_flight[pool.submit(grader.grade, texts[pair])] = pair
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    q, a = in_flight.pop(future)
                    try:
                        judgment = future.result()
                    except PairFailed as exc:
                        with counts.lock:
                            counts.failed += 1
                            counts.requests += 1  # earlier attempts were counted as retries
                            counts.prompt_tokens += exc.prompt_tokens
                            counts.completion_tokens += exc.completion_tokens
                        counts.errors = (counts.errors + [{"question": q, "answer": a, "error": str(exc)}])[
                            -PAIR_ERRORS_KEPT:
                        ]
                        early += 0 if judged_here else 1
                        if early >= EARLY_FAILURES and not stop_reason:
                            stop_reason = (
                                f"The first {early} replies could not be used ({exc}); check the prompt "
                                "template and the reply format."
                            )
                            stop_status = JudgingStatus.FAILED
                        continue
                    except JudgeRefused as exc:
                        if not stop_reason:
                            stop_reason, stop_status = redact(str(exc), judge), JudgingStatus.FAILED
                        queue.clear()
                        continue
                    except JudgeError as exc:
                        with counts.lock:
                            counts.failed += 1
                            counts.requests += 1
                        message = redact(str(exc), judge)
                        counts.errors = (counts.errors + [{"question": q, "answer": a, "error": message}])[
                            -PAIR_ERRORS_KEPT:
                        ]
                        if isinstance(exc, JudgeUnavailable) and not stop_reason:
                            # Retries are spent: the service is down, so the rest would fail alike.
                            stop_reason, stop_status = message, JudgingStatus.FAILED
                            queue.clear()
                        continue
                    batch.append((q, a, judgment.stars, judgment.reply, judgment.certainty))
                    judged_here = True
                    with counts.lock:
                        counts.requests += 1 if judgment.requests else 0  # the builtin judge calls nothing
                        counts.prompt_tokens += judgment.prompt_tokens
                        counts.completion_tokens += judgment.completion_tokens
                now = time.monotonic()
                finished = not (queue or in_flight)
                if batch and (len(batch) >= judge.concurrency or now - flushed >= FLUSH_SECONDS or finished):
                    _flush(judge, batch, counts)
                    flushed = now
                if now - reported >= REPORT_SECONDS or finished or stop_reason:
                    _save_counts(judging_id, counts)
                    reported = now
                    if (
                        not stop_reason
                        and Judging.objects.filter(pk=judging_id, cancel_requested=True).exists()
                    ):
                        stop_reason, stop_status = (
                            "Cancelled; what was judged is kept.",
                            JudgingStatus.CANCELLED,
                        )
                if stop_reason:
                    queue.clear()
            _flush(judge, batch, counts)
    except Exception as exc:
        logger.exception("judging %s of judge %s failed", judging_id, judge.pk)
        try:
            _flush(judge, batch, counts)
        except Exception:
            logger.exception("judging %s: could not save its last %d judgments", judging_id, len(batch))
        _save_counts(judging_id, counts)
        _finish(judging_id, JudgingStatus.FAILED, redact(f"{exc.__class__.__name__}: {exc}", judge))
        return Judging.objects.get(pk=judging_id)
    finally:
        grader.close()
    _save_counts(judging_id, counts)
    if not stop_reason and counts.failed and counts.judged == judged_before:
        stop_reason, stop_status = (
            f"None of the {counts.failed} replies could be used ({counts.errors[-1]['error']}); check the "
            "prompt template and the reply format.",
            JudgingStatus.FAILED,
        )
    if not stop_reason and counts.failed:
        stop_reason = (
            f"{counts.failed} pair{'s' if counts.failed != 1 else ''} could not be judged (see the errors); "
            "resume to try them again."
        )
    _finish(judging_id, stop_status, stop_reason)
    return Judging.objects.get(pk=judging_id)


def _flush(judge: Judge, batch: list[tuple[int, int, int, str, float | None]], counts: _Counts) -> None:
    """Save the judgments returned so far in one transaction (see ``judge_ratings_record``)."""
    if not batch:
        return
    judge_ratings_record(account=judge.account, judgments=batch)
    with counts.lock:
        counts.judged += len(batch)
    batch.clear()


def _save_counts(judging_id: int, counts: _Counts) -> None:
    with counts.lock:
        values = dict(
            judged=counts.judged,
            failed=counts.failed,
            requests=counts.requests,
            retries=counts.retries,
            prompt_tokens=counts.prompt_tokens,
            completion_tokens=counts.completion_tokens,
            pair_errors=counts.errors,
        )
    Judging.objects.filter(pk=judging_id).update(heartbeat_at=timezone.now(), **values)


def judgings_resume(*, worker: str = "", since: datetime | None = None) -> list[int]:
    """Take over runs whose worker is gone; returns the ids to queue again (as trainings do: back to
    QUEUED, or FAILED with the reason after JUDGING_MAX_ATTEMPTS claims; a lost QUEUED run is queued again)."""
    return stale_jobs_take_over(
        Judging,
        stale_seconds=settings.JUDGING_STALE_SECONDS,
        max_attempts=JUDGING_MAX_ATTEMPTS,
        give_up=f"The worker running this judging stopped {JUDGING_MAX_ATTEMPTS} times; giving up. "
        "What was judged is kept; resume to judge the rest.",
        requeue={},
        worker=worker,
        since=since,
    )
