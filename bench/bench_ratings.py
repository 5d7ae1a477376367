"""Rating saves under load, through the real stack: gunicorn workers, PostgreSQL, labels updated.

Creates its own PostgreSQL database (dropped and recreated each run), a synthetic collection and N raters,
starts gunicorn on loopback, logs every rater in through the login page, then sends ratings open-loop at a
fixed rate (each request starts on schedule whether or not earlier ones finished, so a slow server cannot
hide its queueing) through the endpoint the rating page uses: the htmx POST to
``/c/<slug>/rate/<question>/answers/<answer>/``, which returns the answer's card.

Reference in the same run: ``GET /healthz`` (one ``SELECT 1`` through the same gunicorn and PostgreSQL) at the
same rate, so the ratio shows what the rating save itself costs over a bare request. CPU per request is split
between the gunicorn workers, PostgreSQL, this load generator and the rest of the machine (from /proc).

Afterwards it checks that the database holds exactly the ratings sent (one row per rater and pair, with the
stars sent) and that every pair's label matches the ratings sent for it.

    .venv/bin/python bench/bench_ratings.py --rate 200 --duration 20 --raters 40 --workers 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLUG = "bench"
PASSWORD = "bench-password-123"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rt_bench_ratings"),
    )
    p.add_argument("--rate", type=float, default=200.0, help="rating saves per second (open loop)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of load per phase")
    p.add_argument("--raters", type=int, default=40)
    p.add_argument("--questions", type=int, default=100)
    p.add_argument(
        "--answers", type=int, default=40, help="answers per question's pool (pairs = questions x answers)"
    )
    p.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    p.add_argument("--threads", type=int, default=1, help="threads per gunicorn worker (1 = sync worker)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", type=Path, help="also write the results here")
    return p.parse_args()


# --- database and app setup ----------------------------------------------------------------------


def recreate_database(url: str) -> None:
    import psycopg

    base, _, name = url.rstrip("/").rpartition("/")
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise SystemExit(f"refusing to drop database {name!r}: use lowercase letters, digits and _")
    with psycopg.connect(base.replace("postgres://", "postgresql://") + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")


def app_environment(args: argparse.Namespace, var_dir: Path) -> dict[str, str]:
    """Production-like settings (DEBUG off), served over plain http on loopback."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "trainer.settings",
        "DATABASE_URL": args.database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-use-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "RANK_TRAINER_VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)  # the save path uses no cache or broker; keep the run self-contained
    return env


def seed(args: argparse.Namespace) -> tuple[list[int], list[int], list[str]]:
    """A collection with questions and answers, and raters who are members. Returns ids and usernames."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from corpus.models import Answer, Question, Role, Split
    from corpus.services import collection_create, membership_set

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    collection = collection_create(name="Bench", slug=SLUG)
    answers = Answer.objects.bulk_create(
        Answer(
            collection=collection, external_id=f"a{i}", title=f"Answer {i}", body=f"Body of answer {i} " * 20
        )
        for i in range(args.answers)
    )
    questions = Question.objects.bulk_create(
        Question(collection=collection, external_id=f"q{i}", text=f"Question {i}?", split=Split.TRAIN)
        for i in range(args.questions)
    )
    users = get_user_model()
    names = []
    for i in range(args.raters):
        user = users.objects.create_user(username=f"rater{i:03d}", password=PASSWORD)
        membership_set(collection=collection, user=user, role=Role.RATER)
        names.append(user.username)
    return [q.pk for q in questions], [a.pk for a in answers], names


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(args: argparse.Namespace, env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "trainer.wsgi",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(args.workers),
        "--threads", str(args.threads),
        "--backlog", "2048",
        "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("gunicorn did not start listening in 30 s")


# --- load -----------------------------------------------------------------------------------------


@dataclass
class Rater:
    username: str
    cookie: str = ""
    csrf: str = ""
    plan: list[tuple[int, int, int]] = field(default_factory=list)  # (question, answer, stars), no pair twice


def _cookies(response) -> dict[str, str]:
    # Cookies are marked Secure with DEBUG off; over loopback http we carry them by hand.
    jar = {}
    for header in response.headers.get_list("set-cookie"):
        name, _, rest = header.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]
    return jar


async def log_in(client, base: str, rater: Rater) -> None:
    page = await client.get(f"{base}/login/")
    jar = _cookies(page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = await client.post(
        f"{base}/login/",
        data={"username": rater.username, "password": PASSWORD, "csrfmiddlewaretoken": token, "next": "/"},
        headers={"Cookie": f"csrftoken={jar['csrftoken']}"},
    )
    if response.status_code != 302:
        raise SystemExit(f"login of {rater.username} failed: {response.status_code}")
    jar.update(_cookies(response))
    rater.cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    # Open the rating page as a person would; it also warms the workers' templates.
    task = await client.get(f"{base}/c/{SLUG}/rate/", headers={"Cookie": rater.cookie}, follow_redirects=True)
    if task.status_code != 200:
        raise SystemExit(f"rating page for {rater.username}: {task.status_code}")
    rater.csrf = jar["csrftoken"]


@dataclass
class Sample:
    latency: float  # seconds from the scheduled start to the response
    status: int
    error: str = ""


async def open_loop(rate: float, duration: float, send) -> tuple[list[Sample], float, float]:
    """Start request i at t0 + i/rate for ``duration`` seconds. Returns samples, elapsed, worst start lag."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    tasks, worst_lag, i = [], 0.0, 0
    while (scheduled := t0 + i / rate) < t0 + duration:
        delay = scheduled - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        worst_lag = max(worst_lag, loop.time() - scheduled)
        tasks.append(asyncio.create_task(send(i, scheduled)))
        i += 1
    samples = await asyncio.gather(*tasks)
    return list(samples), loop.time() - t0, worst_lag


def summarise(name: str, samples: list[Sample], elapsed: float) -> dict:
    ok = sorted(s.latency for s in samples if s.status == 200 and not s.error)
    errors = [s for s in samples if s.status != 200 or s.error]

    def pct(p: float) -> float:
        return 1000 * ok[min(len(ok) - 1, int(p / 100 * len(ok)))] if ok else float("nan")

    return {
        "phase": name,
        "sent": len(samples),
        "ok": len(ok),
        "errors": len(errors),
        "error_examples": sorted({s.error or str(s.status) for s in errors})[:5],
        "throughput_per_s": round(len(ok) / elapsed, 1),
        "p50_ms": round(pct(50), 1),
        "p90_ms": round(pct(90), 1),
        "p99_ms": round(pct(99), 1),
        "max_ms": round(1000 * ok[-1], 1) if ok else None,
        "mean_ms": round(1000 * statistics.fmean(ok), 1) if ok else None,
    }


async def raw_request(port: int, request: bytes) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange on a fresh loopback connection (the server closes it after the response).

    Hand-written rather than httpx so the load generator, which shares the machine's two cores with
    gunicorn and PostgreSQL, spends as little CPU per request as it can.
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        response = await reader.read()
    finally:
        writer.close()
    status = int(response[9:12]) if response.startswith(b"HTTP/1.") else 0
    return status, response


def post_request(port: int, path: str, body: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}", "", body]
    return "\r\n".join(lines).encode()


def server_cpu_seconds(master_pid: int) -> float:
    """User + system CPU of the gunicorn workers so far (Linux /proc), to report CPU per request."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    except OSError:
        return float("nan")
    total = 0
    for pid in [master_pid, *children]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def postgres_cpu_seconds() -> float:
    """User + system CPU of every PostgreSQL process so far (backends come and go; the gunicorn workers keep
    theirs open, so the ones serving the run live through it)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, _, rest = text.partition(") ")
        if name.endswith("(postgres"):
            fields = rest.split()
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (all cores; /proc/stat), other users' work included."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_split(master_pid: int) -> dict[str, float]:
    return {
        "gunicorn": server_cpu_seconds(master_pid),
        "postgres": postgres_cpu_seconds(),
        "generator": time.process_time(),
        "machine": machine_busy_seconds(),
    }


def per_request(before: dict[str, float], after: dict[str, float], requests: int) -> dict[str, float]:
    """ms of CPU per request by whom; "other" is the rest of the machine (other users' jobs, the kernel)."""
    spent = {k: 1000 * (after[k] - before[k]) / max(requests, 1) for k in before}
    spent["other"] = spent["machine"] - spent["gunicorn"] - spent["postgres"] - spent["generator"]
    return {f"{k}_cpu_ms_per_request": round(v, 2) for k, v in spent.items()}


async def run_load(
    args: argparse.Namespace, port: int, raters: list[Rater], master_pid: int
) -> tuple[dict, dict, float]:
    import httpx

    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(log_in(client, base, r) for r in raters))
    loop = asyncio.get_running_loop()
    health_request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()

    async def health(i: int, scheduled: float) -> Sample:
        try:
            status, _ = await asyncio.wait_for(raw_request(port, health_request), 30)
            return Sample(loop.time() - scheduled, status)
        except (OSError, TimeoutError) as exc:
            return Sample(loop.time() - scheduled, 0, type(exc).__name__)

    cpu_before = cpu_split(master_pid)
    reference_samples, reference_elapsed, _ = await open_loop(args.rate, min(args.duration, 10), health)
    reference_cpu = cpu_split(master_pid)

    requests = []
    for i in range(int(args.rate * args.duration) + 1):
        rater = raters[i % len(raters)]
        question, answer, stars = rater.plan[i // len(raters)]
        headers = {"Cookie": rater.cookie, "X-CSRFToken": rater.csrf, "HX-Request": "true"}
        path = f"/c/{SLUG}/rate/{question}/answers/{answer}/"
        requests.append(post_request(port, path, f"stars-{answer}={stars}", headers))

    async def save(i: int, scheduled: float) -> Sample:
        try:
            status, response = await asyncio.wait_for(raw_request(port, requests[i]), 30)
            error = "" if status != 200 or b'data-state="saved"' in response else "200 without the saved card"
            return Sample(loop.time() - scheduled, status, error)
        except (OSError, TimeoutError) as exc:
            return Sample(loop.time() - scheduled, 0, type(exc).__name__)

    save_cpu_before = cpu_split(master_pid)
    samples, elapsed, lag = await open_loop(args.rate, args.duration, save)
    save_cpu = cpu_split(master_pid)
    reference = summarise("healthz (reference)", reference_samples, reference_elapsed)
    result = summarise("rating save", samples, elapsed)
    reference.update(per_request(cpu_before, reference_cpu, len(reference_samples)))
    result.update(per_request(save_cpu_before, save_cpu, len(samples)))
    return reference, result, lag


def verify(sent: dict[tuple[str, int, int], int]) -> dict:
    """The database holds exactly the ratings sent, and each label is the aggregate of its pair's ratings."""
    from ratings.models import Label, Rating
    from ratings.services import aggregate_stars

    stored = {
        (u, q, a): s
        for u, q, a, s in Rating.objects.filter(question__collection__slug=SLUG).values_list(
            "rater__username", "question_id", "answer_id", "stars"
        )
    }
    by_pair: dict[tuple[int, int], list[int]] = defaultdict(list)
    for (_, q, a), s in sent.items():
        by_pair[(q, a)].append(s)
    expected_labels = {pair: aggregate_stars(stars) for pair, stars in by_pair.items()}
    labels = {
        (q, a): (g, m, d)
        for q, a, g, m, d in Label.objects.filter(question__collection__slug=SLUG).values_list(
            "question_id", "answer_id", "gain", "mean_stars", "disagreement"
        )
    }
    label_mismatches = sum(
        1
        for pair, (g, m, d) in expected_labels.items()
        if pair not in labels
        or labels[pair][0] != g
        or abs(labels[pair][1] - m) > 1e-9
        or labels[pair][2] != d
    )
    return {
        "ratings_sent": len(sent),
        "ratings_stored": len(stored),
        "ratings_exact": stored == sent,
        "pairs": len(expected_labels),
        "pairs_with_2plus_raters": sum(1 for s in by_pair.values() if len(s) >= 2),
        "labels_stored": len(labels),
        "label_mismatches": label_mismatches + len(set(labels) - set(expected_labels)),
    }


def main() -> None:
    args = parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="rt-bench-ratings-"))
    env = app_environment(args, var_dir)
    os.environ.clear()
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    recreate_database(args.database_url)
    import django

    django.setup()
    questions, answers, names = seed(args)

    rng = random.Random(args.seed)
    per_rater = int(args.rate * args.duration / len(names)) + 1
    pairs = [(q, a) for q in questions for a in answers]
    if per_rater > len(pairs):
        raise SystemExit(f"each rater needs {per_rater} distinct pairs but there are only {len(pairs)}")
    raters = [
        Rater(name, plan=[(q, a, rng.randint(0, 3)) for q, a in rng.sample(pairs, per_rater)])
        for name in names
    ]

    load_before = list(os.getloadavg())
    port = args.port or free_port()
    log = var_dir / "gunicorn.log"
    server = start_gunicorn(args, env, port, log)
    try:
        reference, result, lag = asyncio.run(run_load(args, port, raters, server.pid))
    finally:
        server.terminate()
        server.wait(20)

    sent = {}
    for i in range(result["sent"]):
        rater = raters[i % len(raters)]
        q, a, s = rater.plan[i // len(raters)]
        sent[(rater.username, q, a)] = s
    from django.db import connection

    connection.close()
    check = verify(sent)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
        "gunicorn": f"{args.workers} workers x {args.threads} threads",
        "target_rate_per_s": args.rate,
        "duration_s": args.duration,
        "raters": len(raters),
        "reference": reference,
        "result": result,
        "p50_ratio_vs_reference": round(result["p50_ms"] / reference["p50_ms"], 2),
        "p99_ratio_vs_reference": round(result["p99_ms"] / reference["p99_ms"], 2),
        "worst_generator_start_lag_ms": round(1000 * lag, 1),
        "verification": check,
        "goal_met": result["p99_ms"] < 50 and result["errors"] == 0 and check["ratings_exact"]
        and check["label_mismatches"] == 0 and result["throughput_per_s"] >= 0.97 * args.rate,
    }  # fmt: skip
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    errors = log.read_text(errors="replace").strip()
    if errors:
        print("gunicorn log:\n" + errors[-3000:], file=sys.stderr)
    shutil.rmtree(var_dir, ignore_errors=True)
    sys.exit(0 if report["goal_met"] else 1)


if __name__ == "__main__":
    main()
