"""What one look at an online test's verdict costs (the version page, the dashboard, the API, beat's
settle: ``evaluation.selectors.online.online_test_result``) per number of logged interleaved queries,
against reading the whole log (``online_test_result_from_scratch``, what every look did before).

    .venv/bin/python bin/test_services -- .venv/bin/python bench/bench_online_look.py
    .venv/bin/python bin/test_services -- .venv/bin/python bench/bench_online_look.py --queries 10000

Needs PostgreSQL and Redis (``bin/test_services`` starts throwaway ones): a fresh database per size on
that server, migrated. One running test at 100% share; its log is ``--queries`` interleaved queries, one
every 2 s up to now (so the last 10 minutes, the settling time, hold 300 whatever the size), each
serving 10 hits with their teams, clicked at rank r with probability 0.5 / r (fixed seed). Then, best of
``--repeat`` (wall, and CPU of this process plus its PostgreSQL backend's, from /proc; the CPU is what
the machine's other load does not move, /proc counts it in 10 ms ticks):

* **from scratch**: the whole log read, as before;
* **cold look**: the first look with no checkpoint (what a lost cache costs): the whole log, once;
* **warm look**: a look with nothing new since the last one;
* **look after 20 s of traffic**: 10 new queries and their clicks since the last look.

Every look's figures are checked equal to the from-scratch ones. The load average is printed: the
machine is shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

STEP = dt.timedelta(seconds=2)


def backend_cpu() -> float:
    """CPU seconds so far of the PostgreSQL backend serving this process's connection (/proc: the
    server runs on this machine)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(function, repeat: int):
    """(best wall s, best CPU s of this process + its PostgreSQL backend, last result) over ``repeat``
    calls."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu, pg = time.perf_counter(), time.process_time(), backend_cpu()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu + backend_cpu() - pg)
    return min(walls), min(cpus), result


def log_rows(test, rng, first: int, count: int, end: dt.datetime):
    """``count`` interleaved queries of ``test`` (numbered from ``first``), the last served at ``end``."""
    from ubi.models import UbiEvent, UbiQuery

    queries, events = [], []
    for n in range(first, first + count):
        at = end - STEP * (first + count - 1 - n)
        query_id = f"look-{test.pk}-{n}"
        teams = [int(t) for t in rng.choice([-1, 1], 10)]
        hits = [f"a{h}" for h in rng.choice(5000, 10, replace=False)]
        queries.append(UbiQuery(query_id=query_id, application="look-bench", user_query=f"question {n % 997}",
                                query_response_hit_ids=hits, timestamp=at,
                                query_attributes={"online_test": test.pk, "champion": "v1", "challenger": "v2",
                                                  "teams": teams}))  # fmt: skip
        for rank in np.flatnonzero(rng.random(10) < 0.5 / np.arange(1, 11)):
            events.append(UbiEvent(event_id=uuid.uuid4(), application="look-bench", action_name="click",
                                   query_id=query_id, timestamp=at, ordinal=int(rank) + 1,
                                   object_id=hits[rank],
                                   event_attributes={"position": {"ordinal": int(rank) + 1},
                                                     "object": {"object_id": hits[rank]}}))  # fmt: skip
    return queries, events


def one_size(size: int, repeat: int, explain: bool) -> None:
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection

    from corpus.services import collection_create
    from evaluation.selectors.online import online_test_result, online_test_result_from_scratch
    from rankers.models import Ranker, RankerKind, RankerVersion
    from rankers.online_tests import online_test_start
    from ubi.services import ubi_rows_store

    call_command("migrate", verbosity=0)
    cache.clear()
    rng = np.random.default_rng(36)
    collection = collection_create(name="Look bench", slug="look-bench")
    ranker = Ranker.objects.create(collection=collection, name="Look", kind=RankerKind.BUILTIN)
    champion = RankerVersion.objects.create(ranker=ranker, label="v1", method="bm25")
    challenger = RankerVersion.objects.create(ranker=ranker, label="v2", method="bm25")
    ranker.champion = champion
    ranker.save(update_fields=["champion"])
    test = online_test_start(challenger=challenger, started_by=None)
    now = dt.datetime.now(dt.UTC)
    for first in range(0, size, 20_000):  # query n served at now − (size − 1 − n) · STEP
        count = min(20_000, size - first)
        queries, events = log_rows(test, rng, first, count, now - STEP * (size - first - count))
        ubi_rows_store(queries=queries, events=events)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    def figures(result) -> str:
        return repr((result.counts, result.verdict))

    scratch_wall, scratch_cpu, scratch = timed(lambda: online_test_result_from_scratch(test=test), repeat)
    cold = []
    for _ in range(repeat):
        cache.clear()
        cold.append(timed(lambda: online_test_result(test=test), 1))
    cold_wall, cold_cpu = min(c[0] for c in cold), min(c[1] for c in cold)
    assert figures(cold[-1][2]) == figures(scratch)
    warm_wall, warm_cpu, warm = timed(lambda: online_test_result(test=test), repeat)
    assert figures(warm) == figures(scratch)
    served = [size]

    def traffic_then_look():
        nonlocal now
        now = now + dt.timedelta(seconds=20)
        queries, events = log_rows(test, rng, served[0], 10, now)
        served[0] += 10
        ubi_rows_store(queries=queries, events=events)
        return timed(lambda: online_test_result(test=test, now=now), 1)

    after = [traffic_then_look() for _ in range(repeat)]
    assert figures(after[-1][2]) == figures(online_test_result_from_scratch(test=test))
    if explain:  # the look's SQL, as PostgreSQL runs it (its own time, which the CPU above leaves out)
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            traffic_then_look()
        with connection.cursor() as cursor:
            for query in captured.captured_queries:
                if not query["sql"].lstrip().upper().startswith("SELECT"):
                    continue
                cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + query["sql"])
                plan = [row[0] for row in cursor.fetchall()]
                print(f"  {query['sql'][:140]}...\n    " + "\n    ".join(plan[:12]))
    after_wall, after_cpu = min(a[0] for a in after), min(a[1] for a in after)
    load = os.getloadavg()[0]
    c = scratch.counts
    print(f"\n{size:,} interleaved queries ({c.queries_with_clicks:,} with clicks, W/L/T {c.wins}/{c.losses}/"
          f"{c.ties}); load average {load:.1f}; wall / CPU (bench + PostgreSQL), best of {repeat}:")  # fmt: skip
    for name, wall, cpu in (
        ("from scratch (before)", scratch_wall, scratch_cpu),
        ("cold look (no checkpoint)", cold_wall, cold_cpu),
        ("warm look (nothing new)", warm_wall, warm_cpu),
        ("look after 10 new queries", after_wall, after_cpu),
    ):
        print(f"  {name:28s} {wall * 1000:9.1f} ms  {cpu * 1000:9.1f} ms CPU   ({scratch_wall / wall:6.1f}x)")
    print("  figures equal to from scratch: yes")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--explain", action="store_true", help="print the SQL plans of a look")
    args = parser.parse_args()
    server = os.environ.get("DATABASE_URL", "")
    if not server.startswith("postgres") or not os.environ.get("REDIS_URL"):
        raise SystemExit("needs DATABASE_URL (PostgreSQL) and REDIS_URL: run it under bin/test_services")
    from bench_scale import postgres_database

    print(f"PostgreSQL + Redis; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    for size in args.queries:
        name = f"bench_online_look_{size}"
        os.environ.update({"DATABASE_URL": postgres_database(server, name), "DJANGO_SETTINGS_MODULE": "config.settings",
                           "SECRET_KEY": "bench-online-look", "DEBUG": "0", "LOG_LEVEL": "WARNING"})  # fmt: skip
        import django
        from django.db import connections

        if size == args.queries[0]:
            django.setup()
        else:  # the next size's database
            connections.close_all()
            from django.conf import settings

            settings.DATABASES["default"]["NAME"] = name
        try:
            one_size(size, args.repeat, args.explain)
        finally:
            connections.close_all()
            postgres_database(server, name, drop_only=True)


if __name__ == "__main__":
    main()
