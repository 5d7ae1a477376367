"""Where a rating save spends its time: the API save and the htmx save, profiled in one process.

Seeds the same synthetic collection as ``bench_ratings.py`` in its own PostgreSQL database, then sends N saves
of each kind through Django's test client (the whole middleware stack, production settings: ``DEBUG=0``) and
prints pyinstrument's call tree for each, and the SQL statements of one save. The cache is Redis when
``--redis-url`` (or ``BENCH_REDIS_URL``) is given, as in production, where the API throttle lives.

    .venv/bin/python bench/profile_ratings.py --saves 1000 --redis-url redis://127.0.0.1:6379/5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_ratings  # noqa: E402  (sibling script: the same database, seed and tokens)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rt_bench_ratings"),
    )
    p.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", ""))
    p.add_argument("--saves", type=int, default=1000, help="saves per endpoint")
    p.add_argument("--raters", type=int, default=20)
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--answers", type=int, default=40)
    p.add_argument("--interval", type=float, default=0.0005, help="pyinstrument's sampling interval (s)")
    p.add_argument(
        "--no-profile", action="store_true", help="only time the saves (CPU per save without overhead)"
    )
    p.add_argument("--html", type=Path, help="also write each profile as HTML: <this>-<endpoint>.html")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="rt-profile-ratings-"))
    env = bench_ratings.app_environment(args, var_dir)
    env["ALLOWED_HOSTS"] = "testserver"
    os.environ.clear()
    os.environ.update(env)
    bench_ratings.recreate_database(args.database_url)
    if args.redis_url:
        bench_ratings.flush_redis(args.redis_url)
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from pyinstrument import Profiler

    questions, answers, names = bench_ratings.seed(args)
    tokens = bench_ratings.issue_tokens(names)
    rng = random.Random(args.seed)
    pairs = [(q, a) for q in questions for a in answers]
    from django.contrib.auth import get_user_model

    users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
    clients = {}
    for name in names:
        client = Client(enforce_csrf_checks=True)
        client.force_login(users[name])
        client.get(f"/c/{bench_ratings.SLUG}/rate/", follow=True)  # a rating task in the session, as in use
        clients[name] = client
    from corpus.models import Answer, Question

    external = {
        **{("q", q.pk): q.external_id for q in Question.objects.all()},
        **{("a", a.pk): a.external_id for a in Answer.objects.all()},
    }

    def htmx_save(i: int, question: int, answer: int, stars: int) -> int:
        name = names[i % len(names)]
        client = clients[name]
        response = client.post(
            f"/c/{bench_ratings.SLUG}/rate/{question}/answers/{answer}/",
            {f"stars-{answer}": stars},
            headers={"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"].value},
        )
        return response.status_code

    api_client = Client()

    def api_save(i: int, question: int, answer: int, stars: int) -> int:
        name = names[i % len(names)]
        body = {
            "question_id": external[("q", question)],
            "answer_id": external[("a", answer)],
            "stars": stars,
        }
        response = api_client.post(
            f"/api/collections/{bench_ratings.SLUG}/ratings/",
            json.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Token {tokens[name]}"},
        )
        return response.status_code

    report = {}
    for endpoint, save, ok in (("htmx", htmx_save, 200), ("api", api_save, 201)):
        plan = [(i, *rng.choice(pairs), rng.randint(0, 3)) for i in range(args.saves)]
        for i, q, a, s in plan[:50]:  # warm up: templates, connections, scripts
            save(i, q, a, s)
        queries: list[str] = []

        def record(execute, sql, *rest, queries=queries):
            queries.append(sql)
            return execute(sql, *rest)

        # (CaptureQueriesContext would see nothing: each request starts by resetting the query log.)
        with connection.execute_wrapper(record):
            save(*plan[50])
        profiler = Profiler(interval=args.interval)
        cpu0, t0 = time.process_time(), time.perf_counter()
        if not args.no_profile:
            profiler.start()
        statuses = [save(i, q, a, s) for i, q, a, s in plan[50:]]
        if not args.no_profile:
            profiler.stop()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        bad = sum(1 for s in statuses if s != ok)
        n = len(statuses)
        print(f"\n=== {endpoint} save: {n} saves, {1000 * wall / n:.2f} ms wall and {1000 * cpu / n:.2f} ms CPU "
              f"per save (profiler {'off' if args.no_profile else 'on'}), {bad} not {ok}; {len(queries)} SQL statements per save:")  # fmt: skip
        for sql in queries:
            print("   ", " ".join(sql.split())[:150])
        if not args.no_profile:
            print(profiler.output_text(unicode=True, color=False, show_all=False))
        if args.html and not args.no_profile:
            Path(f"{args.html}-{endpoint}.html").write_text(profiler.output_html())
        report[endpoint] = {"ms_wall": 1000 * wall / n, "ms_cpu": 1000 * cpu / n, "queries": len(queries)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
