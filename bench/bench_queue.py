"""The rating queue at scale (issue 37 §1): ``next_task`` p50/p99 with one rater and with 20 taking turns,
at Q questions and N answers after an evaluation, and the first call after a change.

Builds (once; reused while the sizes match) a synthetic collection in the database of ``DATABASE_URL``
(PostgreSQL or SQLite): N answers and Q questions of words drawn from a Zipf-like vocabulary, a builtin
ranker (``ranker_create``), a succeeded evaluation of its champion on the test questions (each one's top
20 answers and an NDCG@10), labels on a fifth of the questions (1–5 answers each, some disputed), and the
candidate table as the refresh job leaves it: each question's pool of 30 answers (the table's contents are
drawn, not ranked: ranking Q questions three times over N answers is the job's cost, minutes at N = 1M,
and no rater waits for it now), with the job's own resolution of the evaluation's top k
(``table._run_tops``, timed). Raters then take turns as the rating page does: ``next_task`` (timed), then
a rating of each answer shown (``rating_record``, not timed). The first call after a change: the answers'
change marker moved (an import), the call finds the table out of date, queues its refresh and answers
from the previous table. The first call with no table yet (a new collection before its first build): the
term-overlap fallback of a few questions (``raters.next_task.fallback``), no table built by the request.

``--judge`` adds a judge (a model) that graded every labelled and every pool pair with a certainty (about
300k judgments at Q = 10k), so every call also reads its disputes and least sure grades; ``--pages`` also
times, each turn, the home page's overview and the queue's next 40 pairs. Before/after on one database:
run this file from a checkout of the code before (``git archive``) and from this one, on copies of it.

Reference (the queue before issue 37, not run here: its first call rebuilds the table, over a minute at
Q = 10k): issue 37's figures on the same machine, Q = 10k after an evaluation, p50 / p99 410 / 516 ms at
N = 50k and 662 / 800 ms at N = 200k; 62.5 s and 70.5 s for the first call after the cache expired.

    bin/test_services -- sh -c 'DATABASE_URL=$TEST_DATABASE_URL REDIS_URL=$TEST_REDIS_URL \\
        .venv/bin/python bench/bench_queue.py --questions 10000 --answers 1000000'
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from config.warmup import web_worker_warm_up  # noqa: E402
from corpus.models import Answer, Collection, Question, Split  # noqa: E402
from corpus.services import collection_changed, collection_create  # noqa: E402
from evaluation.models import EvaluationRun, QuestionResult, RunStatus  # noqa: E402
from judges.services import judge_create  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from raters.models import CandidateTable, TableStatus  # noqa: E402
from raters.next_task import table as table_module  # noqa: E402
from raters.next_task.fallback import FALLBACK_ANSWERS, FALLBACK_QUESTIONS  # noqa: E402
from raters.next_task.picking import next_task, queue_pairs_with_reasons, rater_overview  # noqa: E402
from ratings.models import JudgeAccount, Label, Rating, RatingSource  # noqa: E402
from ratings.services import rating_record  # noqa: E402

SLUG = "bench-queue"
POOL = 30


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=10_000)
    p.add_argument("--answers", type=int, default=1_000_000)
    p.add_argument("--calls", type=int, default=200, help="next_task calls per phase")
    p.add_argument("--raters", type=int, default=20, help="raters taking turns in the second phase")
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--profile", action="store_true", help="print a profile of 20 calls and stop")
    p.add_argument(
        "--judge",
        action="store_true",
        help="give the collection a judge (a model) that graded every labelled pair and every pool pair, "
        "with a certainty: the queue then reads its disputes and least sure grades on every call",
    )
    p.add_argument(
        "--pages",
        action="store_true",
        help="also time, on each turn, the home page's overview (rater_overview) and the queue's next 40 "
        "pairs (queue_pairs_with_reasons, the API's queue and a judging run's 'queue' selection)",
    )
    return p.parse_args()


def words(rng: random.Random, vocabulary: list[str], n: int) -> str:
    return " ".join(vocabulary[min(int(rng.paretovariate(1.1)) - 1, len(vocabulary) - 1)] for _ in range(n))


def build(args) -> Collection:
    existing = Collection.objects.filter(slug=SLUG).first()
    if existing is not None:
        n = Answer.objects.filter(collection=existing).count()
        q = Question.objects.filter(collection=existing).count()
        if (n, q) == (args.answers, args.questions) and CandidateTable.objects.filter(
            collection=existing
        ).exists():
            print(f"reusing {SLUG}: {q:,} questions, {n:,} answers", flush=True)
            return existing
        existing.delete()
    rng = random.Random(args.seed)
    vocabulary = [f"w{i}" for i in range(50_000)]
    started = time.perf_counter()
    collection = collection_create(name="bench queue", slug=SLUG)
    batch = []
    for i in range(args.answers):
        batch.append(
            Answer(
                collection=collection,
                external_id=f"a{i}",
                title=words(rng, vocabulary, 6),
                body=words(rng, vocabulary, 30),
            )
        )
        if len(batch) == 10_000:
            Answer.objects.bulk_create(batch)
            batch = []
    Answer.objects.bulk_create(batch)
    Question.objects.bulk_create(
        [
            Question(
                collection=collection,
                external_id=f"q{i}",
                text=words(rng, vocabulary, 8),
                split=Split.TEST if rng.random() < 0.3 else Split.TRAIN,
            )
            for i in range(args.questions)
        ],
        batch_size=5000,
    )
    collection_changed(collection_id=collection.pk, answers=True, questions=True)
    print(f"collection: {time.perf_counter() - started:.0f} s", flush=True)
    ranker = ranker_create(collection=collection, name="builtin", kind="builtin", is_default=True)
    answer_ids = list(Answer.objects.filter(collection=collection).values_list("id", flat=True))
    questions = list(Question.objects.filter(collection=collection).values_list("id", "split"))
    now = timezone.now()
    run = EvaluationRun.objects.create(
        ranker=ranker,
        ranker_version=ranker.champion,
        collection=collection,
        status=RunStatus.SUCCEEDED,
        ndcg_k=10,
        gain_scheme=collection.gain_scheme,
        discount=collection.discount,
        relevance_threshold=collection.relevance_threshold,
        accuracy_k=collection.accuracy_k,
        started_at=now,
        finished_at=now,
    )
    QuestionResult.objects.bulk_create(
        [
            QuestionResult(
                run=run,
                question_id=q,
                ranked_answer_ids=[f"a{rng.randrange(args.answers)}" for _ in range(20)],
                ndcg=rng.random(),
            )
            for q, split in questions
            if split == Split.TEST
        ],
        batch_size=2000,
    )
    labels = []
    for q, _ in questions:
        if rng.random() < 0.2:
            for a in rng.sample(answer_ids[:200_000], rng.randint(1, 5)):
                count = rng.randint(1, 3)
                labels.append(
                    Label(
                        question_id=q,
                        answer_id=a,
                        gain=rng.randint(0, 3),
                        rater_count=count,
                        mean_stars=1.5,
                        disagreement=2 if rng.random() < 0.05 else 0,
                    )  # fmt: skip
                )
    Label.objects.bulk_create(labels, batch_size=5000, ignore_conflicts=True)
    state = table_module.table_state(collection=collection)
    started = time.perf_counter()
    run_top = table_module._run_tops(collection, run)
    print(f"the job's evaluation top k resolution: {time.perf_counter() - started:.2f} s", flush=True)
    # The import queued the table's first build (its row made then); here it is drawn, as the job leaves it.
    CandidateTable.objects.update_or_create(
        collection=collection,
        defaults={
            "status": TableStatus.READY,
            "parts": {**state, "questions_at": timezone.now().isoformat()},
            "wanted": state,
            "source": "ranker",
            "built_at": timezone.now(),
            "version": 1,
            "table": {str(q): rng.sample(answer_ids, POOL) for q, _ in questions},
            "run_id": run.pk,
            "run_top": run_top,
        },
    )
    print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    return collection


def judge(collection: Collection, seed: int) -> None:
    """A judge (``judge_create``, builtin) that graded every labelled pair and every pool pair of the
    table, each with random stars and a random certainty (written in bulk, as its runs' would be, without
    their cost); made once and kept."""
    account = JudgeAccount.objects.filter(collection=collection).first()
    if account is not None and Rating.objects.filter(rater_id=account.user_id).exists():
        print("reusing the judge", flush=True)
        return
    table = CandidateTable.objects.get(collection=collection).table
    pairs = {(q, a) for q, a in Label.objects.filter(question__collection=collection).values_list(
        "question_id", "answer_id")}  # fmt: skip
    pairs.update((int(q), a) for q, answers in table.items() for a in answers)
    if account is not None:
        User.objects.filter(pk=account.user_id).delete()
    started = time.perf_counter()
    account = judge_create(collection=collection, name="bench judge", kind="builtin").account
    rng = random.Random(seed)
    now = timezone.now()
    rows = [
        Rating(
            rater_id=account.user_id,
            question_id=q,
            answer_id=a,
            stars=rng.randint(0, 3),
            source=RatingSource.JUDGE,
            certainty=rng.random(),
            created_at=now,
            updated_at=now,
        )
        for q, a in sorted(pairs)
    ]
    Rating.objects.bulk_create(rows, batch_size=5000)
    print(f"judge: {len(rows):,} judgments in {time.perf_counter() - started:.0f} s", flush=True)


def figures(label: str, times: list[float]) -> None:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(round(0.99 * (len(times) - 1))))]
    print(
        f"{label}: {len(times)} calls, p50 {statistics.median(times) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {times[-1] * 1000:.1f} ms",
        flush=True,
    )


def session(
    collection: Collection, raters: list[User], calls: int, pages: dict[str, list[float]] | None = None
) -> tuple[list[float], list[float]]:
    """Wall times and this process's CPU times of ``calls`` calls of next_task (the CPU time leaves out the
    other sessions' load on the shared machine, and PostgreSQL's own work; with SQLite it has the queries).
    With ``pages``, each turn also times the home page's overview and the queue's next 40 pairs (their
    wall and CPU times appended under "overview" and "pairs", and with " CPU")."""
    questions = {q.pk: q for q in Question.objects.filter(collection=collection).only("id", "split")}
    times: list[float] = []
    cpu: list[float] = []
    last: dict[int, int] = {}
    while len(times) < calls:
        for rater in raters:
            if pages is not None:
                for name in ("overview", "pairs"):
                    started, started_cpu = time.perf_counter(), time.process_time()
                    if name == "overview":
                        rater_overview(collection=collection, rater=rater)
                    else:
                        queue_pairs_with_reasons(collection=collection, rater=rater, limit=40)
                    pages.setdefault(name, []).append(time.perf_counter() - started)
                    pages.setdefault(f"{name} CPU", []).append(time.process_time() - started_cpu)
            exclude = [last[rater.pk]] if rater.pk in last else []
            started, started_cpu = time.perf_counter(), time.process_time()
            task = next_task(collection=collection, rater=rater, exclude=exclude)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            if task is None:
                continue
            answers = {a.pk: a for a in Answer.objects.filter(pk__in=task.answer_ids)}
            for answer_id in task.answer_ids:
                rating_record(
                    rater=rater, question=questions[task.question_id], answer=answers[answer_id], stars=2
                )
            last[rater.pk] = task.question_id
            if len(times) >= calls:
                break
    return times, cpu


def main() -> None:
    args = parse_args()
    call_command("migrate", verbosity=0)
    print(
        f"database: {connection.vendor}; Q = {args.questions:,}, N = {args.answers:,}; judge: {args.judge}; "
        f"load average {os.getloadavg()[0]:.1f} (2 cores)",
        flush=True,
    )
    collection = build(args)
    if args.judge:
        judge(collection, args.seed)
    else:
        User.objects.filter(
            pk__in=JudgeAccount.objects.filter(collection=collection).values("user_id")
        ).delete()
    User.objects.filter(username__startswith="bench-queue-").delete()
    raters = [User.objects.create_user(f"bench-queue-{i}") for i in range(args.raters)]
    # The first call of a process reads the table and the questions once (they are kept per process).
    started, started_cpu = time.perf_counter(), time.process_time()
    next_task(collection=collection, rater=raters[0])
    print(
        f"first call of the process (reads the table): {(time.perf_counter() - started) * 1000:.0f} ms wall, "
        f"{(time.process_time() - started_cpu) * 1000:.0f} ms CPU"
    )
    # As a web worker before its first request (gunicorn's post_worker_init): what lives as long as the
    # process is moved out of the garbage collector's full collections.
    web_worker_warm_up()
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        session(collection, raters[:1], 20)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return
    for label, group in (("one rater", raters[:1]), (f"{args.raters} raters taking turns", raters)):
        pages: dict[str, list[float]] | None = {} if args.pages else None
        wall, cpu = session(collection, group, args.calls, pages)
        figures(f"{label}, wall", wall)
        figures(f"{label}, CPU of this process", cpu)
        for name, times in (pages or {}).items():
            figures(f"{label}, {name}", times)
    print(f"load average after: {os.getloadavg()[0]:.1f} (2 cores)")
    collection_changed(collection_id=collection.pk, answers=True)
    started = time.perf_counter()
    next_task(collection=collection, rater=raters[1])
    elapsed = time.perf_counter() - started
    row = CandidateTable.objects.get(collection=collection)
    print(
        f"first call after a change (an import): {elapsed * 1000:.0f} ms; the table is {row.status} for the "
        f"refresh job, the previous one served: {table_module.served(collection=collection).freshness}"
    )
    # No table yet (as a new collection before its first build): the fallback serves, none is built here.
    CandidateTable.objects.filter(pk=row.pk).update(built_at=None)
    started, started_cpu = time.perf_counter(), time.process_time()
    task = next_task(collection=collection, rater=raters[2])
    elapsed, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    after = CandidateTable.objects.get(pk=row.pk)
    print(
        f"first call with no table yet: {elapsed * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU "
        f"({table_module.served(collection=collection).freshness}: term overlap for {FALLBACK_QUESTIONS} "
        f"questions over {FALLBACK_ANSWERS:,} answers); a task: {task is not None}; tables built by the "
        f"request: {after.version - row.version}"
    )
    # Leave the table fresh again for the next run.
    CandidateTable.objects.filter(pk=row.pk).update(
        status=TableStatus.READY,
        built_at=row.built_at,
        parts={**row.parts, **table_module.table_state(collection=collection)},
    )


if __name__ == "__main__":
    main()
