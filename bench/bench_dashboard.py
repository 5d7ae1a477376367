"""Dashboard and drilldown server time with a long history: 1,000 runs and 1,000,000 ratings in PostgreSQL.

Builds a fresh database (default ``rt_bench_dashboard`` on the local PostgreSQL) with generate_series SQL:
200 raters, 20,000 answers, 10,000 questions (1,000 of them test), 1,000,000 ratings (5 raters on each of
200,000 pairs) and their 200,000 labels, one ranker with 1,000 successful runs, each with a result for
every test question (1,000,000 question results). Then times each page in-process through Django's test
client (middleware, ORM and template rendering: the server's share of a request), after a warm-up,
and counts its SQL queries.

Goal: under 150 ms per page, and the same number of queries as with a handful of runs (the test suite
asserts the latter in tests/evaluation/test_queries.py).

    DEBUG=1 .venv/bin/python bench/bench_dashboard.py [--pg postgres://postgres@127.0.0.1:5432] [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUNS = 1_000
RATINGS = 1_000_000
RATERS = 200
ANSWERS = 20_000
QUESTIONS = 10_000
TEST_QUESTIONS = 1_000


def fresh_database(pg: str, name: str) -> str:
    with psycopg.connect(pg.replace("postgres://", "postgresql://") + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{pg}/{name}"


def populate() -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from corpus.models import Role
    from corpus.services import collection_create, membership_set
    from rankers.models import Ranker, RankerKind

    collection = collection_create(name="Bench", slug="bench")
    User = get_user_model()
    trainer = User.objects.create_user("bench-trainer", password="x")
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    ranker = Ranker.objects.create(
        collection=collection, name="Built-in", kind=RankerKind.BUILTIN, is_default=True
    )
    c, r = collection.pk, ranker.pk
    steps = [
        (
            "raters",
            f"""
            INSERT INTO auth_user (username, password, is_superuser, first_name, last_name, email, is_staff,
                                   is_active, date_joined)
            SELECT 'rater' || i, '!', false, '', '', '', false, true, now() FROM generate_series(0, {RATERS - 1}) i""",
        ),
        (
            "memberships",
            f"""
            INSERT INTO corpus_membership (user_id, collection_id, role, created_at)
            SELECT id, {c}, 'rater', now() FROM auth_user WHERE username LIKE 'rater%'""",
        ),
        (
            "answers",
            f"""
            INSERT INTO corpus_answer (collection_id, external_id, title, body, metadata, created_at, updated_at)
            SELECT {c}, 'a' || i, 'Answer ' || i, 'body of answer ' || i, '{{}}', now(), now()
            FROM generate_series(0, {ANSWERS - 1}) i""",
        ),
        (
            "questions",
            f"""
            INSERT INTO corpus_question (collection_id, external_id, text, split, metadata, created_at, updated_at)
            SELECT {c}, 'q' || i, 'question number ' || i, CASE WHEN i < {TEST_QUESTIONS} THEN 'test' ELSE 'train' END,
                   '{{}}', now(), now()
            FROM generate_series(0, {QUESTIONS - 1}) i""",
        ),
        (
            "ratings",
            f"""
            WITH q AS (SELECT array_agg(id ORDER BY id) ids FROM corpus_question WHERE collection_id = {c}),
                 a AS (SELECT array_agg(id ORDER BY id) ids FROM corpus_answer WHERE collection_id = {c}),
                 u AS (SELECT array_agg(id ORDER BY id) ids FROM auth_user WHERE username LIKE 'rater%')
            INSERT INTO ratings_rating (rater_id, question_id, answer_id, stars, source, created_at, updated_at)
            SELECT u.ids[1 + (i % 5) + 5 * ((i / 5) % {RATERS // 5})],
                   q.ids[1 + (i / 5) % {QUESTIONS}],
                   a.ids[1 + (((i / 5) % {QUESTIONS}) * 20 + (i / 5) / {QUESTIONS}) % {ANSWERS}],
                   (i::bigint * 7919) % 4, 'web', now(), now()
            FROM generate_series(0, {RATINGS - 1}) i, q, a, u""",
        ),
        (
            "labels",
            """
            INSERT INTO ratings_label (question_id, answer_id, gain, rater_count, mean_stars, disagreement, updated_at)
            SELECT question_id, answer_id, percentile_disc(0.5) WITHIN GROUP (ORDER BY stars), count(*),
                   avg(stars), max(stars) - min(stars), now()
            FROM ratings_rating GROUP BY question_id, answer_id""",
        ),
        (
            "versions",
            f"""
            INSERT INTO rankers_rankerversion (ranker_id, label, notes, created_at, label_count, feature_importances,
                                               model_file, uses_model, method, details, comparison)
            SELECT {r}, 'v' || i, '', now() - interval '1 hour' * ({RUNS} - i), i * 200, '{{}}', '', false, 'bm25',
                   '{{}}', '{{}}'
            FROM generate_series(1, {RUNS}) i""",
        ),
        (
            "runs",
            f"""
            INSERT INTO evaluation_evaluationrun (ranker_id, ranker_version_id, collection_id, status, trigger,
                created_at, started_at, finished_at, error, ndcg_k, gain_scheme, discount, relevance_threshold,
                accuracy_k, questions_total, questions_done, questions_failed, chunks_total, chunks_done, claimed_by,
                label_count, ndcg_mean, ndcg_ci_low, ndcg_ci_high, accuracy_mean, judged_mean, unlabelled_in_top_k,
                no_good_answer_count, scored_count, delta, delta_ci_low, delta_ci_high, p_value, verdict,
                previous_ndcg_mean, comparison_count)
            SELECT {r}, v.id, {c}, 'succeeded', 'training', v.created_at, v.created_at, v.created_at, '', 10,
                'linear', 'log2', 1, 5, {TEST_QUESTIONS}, {TEST_QUESTIONS}, 0, 4, 4, 'bench', v.label_count,
                0.3 + 0.4 * random(), 0.25, 0.7, 0.5 + 0.3 * random(), 0.8, 1500, 20, {TEST_QUESTIONS - 20},
                0.01, -0.02, 0.04, 0.4, 'within noise', 0.3, {TEST_QUESTIONS - 20}
            FROM rankers_rankerversion v WHERE v.ranker_id = {r}""",
        ),
        (
            "previous runs",
            f"""
            UPDATE evaluation_evaluationrun e SET previous_run_id = p.id
            FROM evaluation_evaluationrun p
            WHERE p.ranker_id = {r} AND e.ranker_id = {r} AND p.ranker_version_id = e.ranker_version_id - 1""",
        ),
        (
            "question results",
            f"""
            INSERT INTO evaluation_questionresult (run_id, question_id, ranked_answer_ids, labels, dcg, ideal_dcg,
                ndcg, accuracy_hit, unlabelled_in_top_k, unknown_answer_ids, ideal, judged, error)
            SELECT e.id, q.id, '["a1","a2","a3","a4","a5","a6","a7","a8","a9","a10"]',
                '[3,null,1,0,null,2,null,null,0,1]', 4.2, 7.1,
                CASE WHEN q.id % 50 = 0 THEN NULL ELSE ((q.id * 31 + e.id) % 1000) / 1000.0 END,
                (q.id + e.id) % 3 > 0, 4, '[]', '[["a1",3],["a6",2],["a3",1]]', 0.6, ''
            FROM evaluation_evaluationrun e
            JOIN corpus_question q ON q.collection_id = {c} AND q.split = 'test'
            WHERE e.ranker_id = {r}""",
        ),
        ("analyze", "ANALYZE"),
    ]
    timings = {}
    with connection.cursor() as cursor:
        for name, sql in steps:
            start = time.perf_counter()
            cursor.execute(sql)
            timings[name] = time.perf_counter() - start
            print(f"  {name:<17} {timings[name]:6.1f} s", flush=True)
    rater = User.objects.filter(username="rater7").get()
    return {"collection": collection, "ranker": ranker, "trainer": trainer, "rater": rater}


def time_page(client, url: str, repeat: int) -> tuple[float, float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):  # warm-up: connection, template loading
        assert client.get(url).status_code == 200, url
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, url
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server URL")
    parser.add_argument("--database", default="rt_bench_dashboard")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--reuse", action="store_true", help="time pages of an already populated database")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = (
        f"{args.pg}/{args.database}" if args.reuse else fresh_database(args.pg, args.database)
    )
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("SECRET_KEY", "bench")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from evaluation.models import EvaluationRun, QuestionResult
    from ratings.models import Label, Rating

    settings.ALLOWED_HOSTS = ["testserver"]
    setup_test_environment()
    from django.contrib.auth import get_user_model

    from rankers.models import Ranker

    if args.reuse:
        User = get_user_model()
        ranker = Ranker.objects.get(collection__slug="bench", is_default=True)
        data = {
            "trainer": User.objects.get(username="bench-trainer"),
            "rater": User.objects.get(username="rater7"),
        }
    else:
        call_command("migrate", verbosity=0)
        print(f"Populating {args.database} ...", flush=True)
        data = populate()
        ranker = data["ranker"]
    print(
        f"  {EvaluationRun.objects.count():,} runs, {QuestionResult.objects.count():,} question results, "
        f"{Rating.objects.count():,} ratings, {Label.objects.count():,} labels"
    )
    latest, previous = EvaluationRun.objects.filter(ranker=ranker).order_by("-created_at", "-id")[:2]
    question = (
        QuestionResult.objects.filter(run=latest, ndcg__isnull=False).order_by("ndcg").first().question_id
    )
    pages = [
        ("dashboard (trainer)", "trainer", reverse("evaluation:dashboard", args=["bench"])),
        ("dashboard (rater)", "rater", reverse("evaluation:dashboard", args=["bench"])),
        ("drilldown, worst first", "trainer", reverse("evaluation:run", args=[latest.pk])),
        ("drilldown, page 5", "trainer", reverse("evaluation:run", args=[latest.pk]) + "?page=5"),
        ("question page", "trainer", reverse("evaluation:question", args=[latest.pk, question])),
        (
            "compare two runs",
            "trainer",
            reverse("evaluation:compare", args=["bench"]) + f"?a={previous.pk}&b={latest.pk}",
        ),
        ("progress (htmx poll)", "trainer", reverse("evaluation:run-progress", args=[latest.pk])),
    ]
    clients = {}
    for role in ("trainer", "rater"):
        clients[role] = Client()
        clients[role].force_login(data[role])
    print("\n| page | median ms | p95 ms | SQL queries |\n|---|---:|---:|---:|")
    for name, role, url in pages:
        median, p95, queries = time_page(clients[role], url, args.repeat)
        print(f"| {name} | {median:.1f} | {p95:.1f} | {queries} |", flush=True)


if __name__ == "__main__":
    main()
