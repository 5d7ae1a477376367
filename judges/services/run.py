"""A judging run, judged: what the Celery task ``judges.run`` calls.

A worker claims the run (``lifecycle.judging_claim``), then judges each pair the judge has not rated
yet: one pair per call (``grading``), up to the judge's concurrency in flight and its requests per
minute. Each judgment is saved as the judge's rating with the raw reply
(``ratings.services.judge_ratings_record``, in batches of up to the judge's concurrency, at least every
half second), so a run that fails or is cancelled keeps everything it judged (one that loses its worker
keeps all but its last batch), and resuming it judges only the rest. A pair whose reply can't be used
fails alone (listed on the run); a wrong key or a refused address fails the run with the reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from django.utils import timezone

from jobs import failure_reason
from judges.client import JudgeError, JudgeRefused, JudgeUnavailable
from judges.models import Judge, JudgeKind, Judging, JudgingStatus
from ratings.services import judge_ratings_record

from .grading import Grader, PairFailed, pair_texts, redact
from .lifecycle import judging_claim

logger = logging.getLogger(__name__)

PAIR_ERRORS_KEPT = 20
# A run whose first replies all fail to parse stops: the template or reply format is wrong.
EARLY_FAILURES = 10
# Judgments are saved in batches (up to the judge's concurrency, or every FLUSH_SECONDS), and the run's
# counts and a cancel request are written and read every REPORT_SECONDS: per judgment, the database work
# would otherwise cap throughput well below what the judge serves at high concurrency.
FLUSH_SECONDS = 0.5
REPORT_SECONDS = 0.5


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
    # A clicks judge rates its pairs again on every run (and on a resume: it is quick): the log grows.
    rated: set[tuple[int, int]] = (
        set()
        if judge.kind == JudgeKind.CLICKS
        else set(
            judge.account.user.ratings.filter(question__collection=judge.collection).values_list(
                "question_id", "answer_id"
            )
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
        _finish(judging_id, JudgingStatus.FAILED, redact(failure_reason(exc), judge))
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
