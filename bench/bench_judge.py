"""Judges: throughput against the reference judge server, and the builtin judge on the Cranfield demo.

Builds a fresh PostgreSQL database (default ``rt_bench_judge``), loads the Cranfield demo collection
(1,400 answers, 150 questions, its human ratings), then measures, with the app's own code paths:

1. **Throughput.** ``manage.py judge_server --latency-ms L`` (default 50 ms) in its own process; an
   openai-chat judge per concurrency c (1, 8, 32; requests per minute unlimited) judges N pairs with
   ``judges.services.judging_run`` (what the Celery task calls). The limit is N × L ÷ c, what the
   latency alone costs with c requests in flight; goal: within 1.2× of it. As a reference measured in the
   same run, a plain thread pool of httpx clients sends the same prompts to the same server with c in
   flight: the fastest this server and machine answer them with no judging work at all. The overhead per
   judgment is (wall × c ÷ N) − L.
2. **Agreement.** The builtin judge (``judges.builtin``: the propagation mean, BM25 ratio breaking ties;
   propagated from and calibrated on the TRAINING questions' human labels) judges every pair people rated; ``judges.selectors.agreement`` gives κ
   (quadratic), α (ordinal), leniency, and the headline NDCG@10 of a fresh evaluation of the builtin BM25
   ranker (test questions) with people's labels vs the judge's grades on the same pairs. Held out: the
   same figures on the TEST questions' pairs alone, whose labels the judge never saw; on the training
   questions' pairs the thresholds are in-sample (each pair is propagated without its own question). ``bench/experiment_judge_signals.py`` compares other signals.
3. **Filling the test top 10.** The builtin judge judges the unrated pairs in the test questions' top 10
   of that evaluation, a trainer trusts it (people win), and the evaluation's stored rankings are scored
   again with the labels of now: judged@10 and the width of the headline's 95% bootstrap CI, before/after.

    DEBUG=1 REDIS_URL=redis://127.0.0.1:6379/9 .venv/bin/python bench/bench_judge.py \\
        [--pg postgres://postgres@127.0.0.1:5432] [--latency-ms 50] [--concurrency 1 8 32] [--agreement-only]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAIRS_PER_CONCURRENCY = {1: 60, 8: 320, 32: 960}


def fresh_database(pg: str, name: str) -> str:
    with psycopg.connect(pg.replace("postgres://", "postgresql://") + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{pg}/{name}"


def start_server(slug: str, latency_ms: int, log: Path) -> tuple[subprocess.Popen, str]:
    import httpx

    from tests.rankers.rankers_support import free_port

    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "judge_server", "--collection", slug, "--port", str(port),
             "--latency-ms", str(latency_ms)],
            cwd=ROOT, env=os.environ.copy(), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/models", timeout=1)
            return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"judge_server did not start: {log.read_text()[-2000:]}")


def reference(url: str, prompts: list[str], concurrency: int) -> float:
    """Wall time of a bare client sending the prompts with ``concurrency`` in flight."""
    import httpx

    with httpx.Client(limits=httpx.Limits(max_connections=concurrency), timeout=60) as client:

        def send(text: str) -> None:
            body = {"model": "m", "messages": [{"role": "user", "content": text}]}
            client.post(url + "/chat/completions", json=body).raise_for_status()

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(send, prompts))
        return time.perf_counter() - started


def throughput(collection, url: str, latency_ms: int, levels: list[int]) -> None:
    from judges.models import DEFAULT_PROMPT, Judging
    from judges.prompts import prompt
    from judges.selectors import select_pairs
    from judges.services import judge_create, judging_run, pair_texts

    question_ids = list(collection.questions.order_by("pk").values_list("external_id", flat=True))
    print(f"\n1. Throughput: judge_server --latency-ms {latency_ms}, one pair per call")
    print(f"{'c':>4} {'pairs':>6} {'limit s':>8} {'judging s':>10} {'÷ limit':>8} {'bare client s':>14} "
          f"{'÷ bare':>7} {'pairs/s':>8} {'overhead ms/judgment':>21}")  # fmt: skip
    for c in levels:
        n = PAIRS_PER_CONCURRENCY.get(c, 40 * c)
        judge = judge_create(collection=collection, name=f"Reference c={c}", kind="openai-chat", base_url=url,
                             model="reference-judge", concurrency=c, requests_per_minute=0)  # fmt: skip
        pairs = select_pairs(judge=judge, selection="questions", limit=n, question_ids=question_ids)
        texts = pair_texts(pairs, collection.pk)
        prompts = [
            prompt(template=DEFAULT_PROMPT, reply_format="digit", question=t.question, answer=t.answer)
            for t in texts.values()
        ]
        bare = reference(url, prompts, c)
        judging = Judging.objects.create(judge=judge, selection="questions", pairs=[list(p) for p in pairs])
        started = time.perf_counter()
        done = judging_run(judging_id=judging.pk, worker="bench")
        wall = time.perf_counter() - started
        assert done is not None and done.status == "succeeded", done and done.error
        limit = len(pairs) * latency_ms / 1000 / c
        overhead = (wall * c / len(pairs) - latency_ms / 1000) * 1000
        print(f"{c:>4} {len(pairs):>6} {limit:>8.2f} {wall:>10.2f} {wall / limit:>8.2f} {bare:>14.2f} "
              f"{wall / bare:>7.2f} {len(pairs) / wall:>8.1f} {overhead:>21.1f}")  # fmt: skip


def evaluate(ranker) -> object:
    from evaluation.models import EvaluationRun, RunTrigger
    from evaluation.services import chunk_evaluate, evaluation_start, run_plan

    run = evaluation_start(ranker=ranker, trigger=RunTrigger.UI)
    for chunk_id in run_plan(run_id=run.pk, worker="bench"):
        chunk_evaluate(chunk_id=chunk_id, worker="bench", token=uuid.uuid4().hex)
    return EvaluationRun.objects.get(pk=run.pk)


def headline(run) -> tuple[float, float, float, float]:
    """(mean NDCG@10, CI low, CI high, judged@10) of the run's stored rankings with the labels of now."""
    import numpy as np

    from evaluation.metrics.stats import bootstrap_ci
    from evaluation.models import QuestionResult
    from evaluation.services import score_rankings
    from ratings.selectors import labels_by_question

    rows = list(
        QuestionResult.objects.filter(run=run, error="").values_list("question_id", "ranked_answer_ids")
    )
    labels = labels_by_question(question_ids=[q for q, _ in rows])
    scored = score_rankings(run=run, rankings=[r for _, r in rows], labels=[labels[q] for q, _ in rows])
    ci = bootstrap_ci(scored.ndcg)
    return ci.mean, ci.low, ci.high, float(np.mean(scored.judged))


def builtin_figures(collection) -> None:
    from judges.models import Judging
    from judges.selectors import agreement, human_grades, select_pairs
    from judges.services import judge_create, judge_trust, judging_run
    from rankers.services import ranker_create

    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    started = time.perf_counter()
    run = evaluate(ranker)
    print(f"\nEvaluation of the builtin BM25 ranker: {run.status}, NDCG@10 {run.ndcg_mean:.3f} "
          f"({time.perf_counter() - started:.1f} s)")  # fmt: skip

    judge = judge_create(collection=collection, name="Builtin", kind="builtin")
    pairs = sorted(human_grades(collection=collection))
    judging = Judging.objects.create(judge=judge, selection="overlap", pairs=[list(p) for p in pairs])
    started = time.perf_counter()
    done = judging_run(judging_id=judging.pk, worker="bench")
    took = time.perf_counter() - started
    judge.refresh_from_db()
    figures = agreement(judge=judge)
    print(f"\n2. Builtin judge vs Cranfield human labels: {done.judged} pairs judged in {took:.1f} s "
          f"({done.judged / took:.0f} pairs/s); thresholds {judge.calibration}")  # fmt: skip
    print(f"   pairs {figures.pairs}  weighted kappa {figures.kappa:.3f}  alpha (ordinal) {figures.alpha:.3f}  "
          f"same grade {figures.exact:.3f}  leniency {figures.leniency:+.3f}")  # fmt: skip
    print("   confusion (rows people 0-3, columns judge 0-3):", figures.confusion)
    for s in figures.systems:
        print(f"   {s.run.ranker.name}: NDCG@10 people {s.human:.3f}, judge on the same pairs "
              f"{s.judge_same_pairs:.3f} (difference {s.difference:+.3f})")  # fmt: skip
    held_out(collection, judge)

    before = headline(run)
    top = select_pairs(judge=judge, selection="test-top", limit=5000, question_ids=[])
    filling = Judging.objects.create(judge=judge, selection="test-top", pairs=[list(p) for p in top])
    judging_run(judging_id=filling.pk, worker="bench")
    judge_trust(judge=judge, counts=True, human_wins=True)
    after = headline(run)
    print(f"\n3. Judging the {len(top)} unrated pairs in the test questions' top 10 (trusted, people win):")
    for name, (mean, low, high, judged) in (("before", before), ("after", after)):
        print(f"   {name:<6} NDCG@10 {mean:.3f} (95% CI {low:.3f} … {high:.3f}, width {high - low:.3f})  "
              f"judged@10 {judged:.3f}")  # fmt: skip


def held_out(collection, judge) -> None:
    """κ, α, same grade and leniency on the pairs of each split (test: held out from the calibration)."""
    import numpy as np

    from judges.selectors import human_grades, judge_grades
    from judges.stats.kappa import weighted_kappa
    from ratings.agreement import krippendorff_alpha

    mine = judge_grades(judge=judge)
    for split in ("test", "train"):
        humans = human_grades(collection=collection, split=split)
        both = sorted(humans.keys() & mine.keys())
        h = np.array([humans[p] for p in both])
        j = np.array([mine[p] for p in both])
        alpha = krippendorff_alpha([[int(x), int(y)] for x, y in zip(h, j, strict=True)], level="ordinal")
        label = "test questions (held out)" if split == "test" else "training questions (in-sample)"
        print(f"   {label}: pairs {len(both)}  weighted kappa {weighted_kappa(h, j):.3f}  alpha {alpha:.3f}  "
              f"same grade {np.mean(h == j):.3f}  leniency {np.mean(j - h):+.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="rt_bench_judge")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--agreement-only", action="store_true", help="skip the throughput part")
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        sys.exit("error: set REDIS_URL (evaluation_start checks the task queue)")
    os.environ.update(
        {
            "DATABASE_URL": fresh_database(args.pg, args.database),
            "DEBUG": os.environ.get("DEBUG", "1"),
            "SECRET_KEY": os.environ.get("SECRET_KEY", "bench"),
            "OUTBOUND_ALLOW_PRIVATE": "1",
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
    )
    import django

    django.setup()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.core.management import call_command

    from trainer.services import demo_collection_load

    call_command("migrate", verbosity=0)
    collection = demo_collection_load(slug="cranfield")
    print(f"Cranfield demo: {collection.answers.count()} answers, {collection.questions.count()} questions, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    if not args.agreement_only:
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-judge-server-{os.getpid()}.log"
        process, url = start_server(collection.slug, args.latency_ms, log)
        try:
            throughput(collection, url, args.latency_ms, args.concurrency)
        finally:
            process.terminate()
            process.wait(10)
    builtin_figures(collection)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
