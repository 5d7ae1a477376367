"""Rating saves under load, through the real stack: gunicorn workers, PostgreSQL, Redis, labels updated.

Creates its own PostgreSQL database (dropped and recreated each run), a synthetic collection and N raters,
starts gunicorn on loopback, logs every rater in through the login page and gives each an API token, then
sends ratings open-loop at fixed rates (each request starts on schedule whether or not earlier ones
finished, so a slow server cannot hide its queueing) through the rating page's htmx save
(``/c/<slug>/rate/<question>/answers/<answer>/``) and/or the API (``POST /api/collections/<slug>/ratings/``).

Each measured phase follows ``--warmup`` seconds of the same saves at the same rate, reported apart: a
worker thread's first save opens its database connection and prepares its statements, which is not what
a server under steady load does per save (the warm-up's own p99 is in the JSON, ``warmup_p99_ms``).

Reference in the same run: a static file through the same gunicorn (no database) at the same rate, so the
ratio shows what the save itself costs over a bare request. CPU per request is split between the gunicorn
workers, PostgreSQL, this load generator and the rest of the machine (from /proc). Runs of slow requests
(``slow_spells_over_50_ms``) tell a stall (everything waits together) from a lack of capacity.

Afterwards it checks that the database holds exactly the ratings sent (one row per rater and pair, with the
stars sent) and that every pair's label matches the ratings sent for it.

    .venv/bin/python bench/bench_ratings.py --redis-url redis://127.0.0.1:6379/5 --rates 100,200,400
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
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
    p.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", ""),
        help="Redis for the cache and the API throttle, as in production (this run flushes that database); "
        "empty: the file cache",
    )
    p.add_argument(
        "--rates", default="100,200,400", help="offered saves per second, one phase each (open loop)"
    )
    p.add_argument(
        "--endpoints", default="htmx,api", help="htmx (the rating page's save), api (POST ratings)"
    )
    p.add_argument("--duration", type=float, default=10.0, help="seconds of load per phase")
    p.add_argument("--reference-duration", type=float, default=5.0, help="seconds of the reference per rate")
    p.add_argument(
        "--warmup", type=float, default=1.0, help="seconds of saves before each measured phase (not counted)"
    )
    p.add_argument("--raters", type=int, default=40)
    p.add_argument("--questions", type=int, default=100)
    p.add_argument(
        "--answers", type=int, default=40, help="answers per question's pool (pairs = questions x answers)"
    )
    p.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    p.add_argument(
        "--gunicorn-config",
        default="",
        help="gunicorn's config file (default: the served tree's gunicorn.conf.py, if it has one); "
        "'none' for gunicorn's defaults (sync workers)",
    )
    p.add_argument("--threads", type=int, default=0, help="threads per gunicorn worker (0: the config's)")
    p.add_argument(
        "--app-dir",
        type=Path,
        default=ROOT,
        help="the code gunicorn serves (e.g. an export of an earlier commit, for a before/after in one run)",
    )
    p.add_argument(
        "--nice",
        type=int,
        default=0,
        help="lower this load generator's priority (not gunicorn's) by this much",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds a client waits for an answer")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument(
        "--commit-without-flush",
        action="store_true",
        help="diagnosis only, never production: this database's commits don't wait for the WAL's flush "
        "(synchronous_commit = off), to tell the disk's stalls from the server's own latency",
    )
    p.add_argument(
        "--fsync-probe",
        type=Path,
        help="a directory on PostgreSQL's disk: during each phase, time an 8 KB write + fdatasync there every "
        "20 ms and list the ones over 50 ms (every save's commit waits for such a flush of the WAL)",
    )
    args = p.parse_args()
    if args.fsync_probe and not args.fsync_probe.is_dir():
        p.error(f"--fsync-probe: {args.fsync_probe} is not a directory")
    return args


# --- database and app setup ----------------------------------------------------------------------


def recreate_database(url: str, *, commit_without_flush: bool = False) -> None:
    import psycopg

    base, _, name = url.rstrip("/").rpartition("/")
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise SystemExit(f"refusing to drop database {name!r}: use lowercase letters, digits and _")
    with psycopg.connect(base.replace("postgres://", "postgresql://") + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
        if commit_without_flush:
            conn.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")


def app_environment(args: argparse.Namespace, var_dir: Path) -> dict[str, str]:
    """Production-like settings (DEBUG off), served over plain http on loopback."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": args.database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-use-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "RANK_TRAINER_VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    if getattr(args, "redis_url", ""):
        # As in production: the API's throttle and the cache live in Redis (a database this run may flush).
        env["REDIS_URL"] = args.redis_url
    return env


def flush_redis(url: str) -> None:
    """Start from an empty cache: no throttle windows left from an earlier run (user ids repeat)."""
    import redis

    redis.Redis.from_url(url).flushdb()


def issue_tokens(usernames: list[str]) -> dict[str, str]:
    """An API token for each rater (rater role, in the bench collection). Returns {username: key}."""
    from django.contrib.auth import get_user_model

    from corpus.models import Collection, Role
    from trainer.services import api_token_create

    collection = Collection.objects.get(slug=SLUG)
    keys = {}
    for user in get_user_model().objects.filter(username__in=usernames):
        _, keys[user.username] = api_token_create(
            collection=collection, user=user, role=Role.RATER, name="bench"
        )
    return keys


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
    """gunicorn serving ``--app-dir`` with that tree's gunicorn.conf.py (unless told otherwise)."""
    app_dir = args.app_dir.resolve()
    config = args.gunicorn_config
    if config == "none" or (not config and not (app_dir / "gunicorn.conf.py").exists()):
        config = str(log.parent / "defaults.conf.py")
        Path(config).write_text("# gunicorn's defaults: sync workers\n")
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        *(["--config", config] if config else []),
        "--chdir", str(app_dir),
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(args.workers),
        *(["--threads", str(args.threads)] if args.threads else []),
        "--backlog", "2048",
        "--log-level", "warning",
    ]  # fmt: skip
    env = {**env, "PYTHONPATH": str(app_dir)}  # that tree's code first (the venv's editable install is last)
    process = subprocess.Popen(command, cwd=app_dir, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
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
    token: str = ""
    plan: list[tuple[int, int, int]] = field(default_factory=list)  # (question, answer, stars), no pair twice


def _cookies(response) -> dict[str, str]:
    # Cookies are marked Secure with DEBUG off; over loopback http we carry them by hand.
    jar = {}
    for header in response.headers.get_list("set-cookie"):
        name, _, rest = header.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]
    return jar


async def patiently(send):
    """Send again after Retry-After while the server says it is busy (logging in is slow: a password hash)."""
    for _ in range(30):
        response = await send()
        if response.status_code != 503 or "Retry-After" not in response.headers:
            return response
        await asyncio.sleep(float(response.headers["Retry-After"]))
    return response


async def log_in(client, base: str, rater: Rater) -> None:
    page = await patiently(lambda: client.get(f"{base}/login/"))
    jar = _cookies(page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = await patiently(
        lambda: client.post(
            f"{base}/login/",
            data={
                "username": rater.username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": token,
                "next": "/",
            },
            headers={"Cookie": f"csrftoken={jar['csrftoken']}"},
        )
    )
    if response.status_code != 302:
        raise SystemExit(f"login of {rater.username} failed: {response.status_code}")
    jar.update(_cookies(response))
    rater.cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    # Open the rating page as a person would; it also warms the workers' templates.
    task = await patiently(
        lambda: client.get(f"{base}/c/{SLUG}/rate/", headers={"Cookie": rater.cookie}, follow_redirects=True)
    )
    if task.status_code != 200:
        raise SystemExit(f"rating page for {rater.username}: {task.status_code}")
    rater.csrf = jar["csrftoken"]


@dataclass
class Sample:
    latency: float  # seconds from the scheduled start to the response
    status: int
    error: str = ""
    retry_after: bool = False
    scheduled: float = 0.0  # loop time the request was due to start


async def open_loop(rate: float, duration: float, send) -> tuple[list[Sample], float, float]:
    """Start request i at t0 + i/rate for ``duration`` seconds. Returns samples, elapsed, worst start lag.

    The generator's own garbage collector is off meanwhile: a full collection of this process (Django
    and the plan loaded) pauses it for ~80 ms, which would add to every latency measured across it.
    """
    gc.collect()
    gc.disable()
    try:
        return await _open_loop(rate, duration, send)
    finally:
        gc.enable()


async def _open_loop(rate: float, duration: float, send) -> tuple[list[Sample], float, float]:
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


def is_shed(sample: Sample) -> bool:
    """Refused at once for lack of capacity, with a Retry-After: nothing was stored."""
    return sample.status in (429, 503) and sample.retry_after and not sample.error


class FsyncProbe:
    """Times an 8 KB write + ``fdatasync`` every 20 ms in a thread: how long the disk makes a commit wait."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / f"rt-bench-fsync-probe-{os.getpid()}"
        self.flushes: list[tuple[float, float]] = []  # (monotonic start, seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._fd = -1

    def _run(self) -> None:
        try:
            while not self._stop.wait(0.02):
                os.pwrite(self._fd, b"x" * 8192, 0)
                started = time.monotonic()
                os.fdatasync(self._fd)
                self.flushes.append((started, time.monotonic() - started))
        finally:
            os.close(self._fd)
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> FsyncProbe:
        # Opened here, not in the thread, so a directory that cannot be written stops the bench at once
        # instead of reporting a phase with 0 flushes.
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self, t0: float) -> dict:
        """Flushes over 50 ms, as (seconds since ``t0``, ms); and the slowest."""
        slow = [(round(at - t0, 2), round(1000 * d, 1)) for at, d in self.flushes if d > 0.05]
        worst = max((d for _, d in self.flushes), default=0.0)
        return {"flushes": len(self.flushes), "worst_ms": round(1000 * worst, 1), "over_50_ms": slow}


def slow_spells(samples: list[Sample], slower_than: float = 0.05, gap: float = 0.05) -> list[dict]:
    """Runs of requests slower than ``slower_than`` seconds that started within ``gap`` of each other.

    A p99 set by a few spells (every request of a stretch of time waiting together) points at a stall
    (a collection, a checkpoint, the scheduler); slow requests spread over the phase point at capacity.
    """
    if not samples:
        return []
    t0 = min(s.scheduled for s in samples)
    slow = sorted((s.scheduled - t0, s.latency) for s in samples if s.latency > slower_than)
    spells: list[list[tuple[float, float]]] = []
    for start, latency in slow:
        if spells and start - spells[-1][-1][0] <= gap:
            spells[-1].append((start, latency))
        else:
            spells.append([(start, latency)])
    return [
        {
            "at_s": round(spell[0][0], 2),
            "requests": len(spell),
            "spanning_ms": round(1000 * (spell[-1][0] - spell[0][0]), 1),
            "worst_ms": round(1000 * max(latency for _, latency in spell), 1),
        }
        for spell in spells
    ]


def summarise(name: str, samples: list[Sample], elapsed: float, ok_status: int = 200) -> dict:
    ok = sorted(s.latency for s in samples if s.status == ok_status and not s.error)
    shed = sorted(s.latency for s in samples if is_shed(s))
    errors = [s for s in samples if not (s.status == ok_status and not s.error) and not is_shed(s)]
    answered = sorted(s.latency for s in samples if s.status and not s.error)

    def pct(values: list[float], p: float) -> float:
        return round(1000 * values[min(len(values) - 1, int(p / 100 * len(values)))], 1) if values else None

    return {
        "phase": name,
        "sent": len(samples),
        "ok": len(ok),
        "shed": len(shed),
        "errors": len(errors),
        "error_examples": sorted({s.error or str(s.status) for s in errors})[:5],
        "ok_per_s": round(len(ok) / elapsed, 1),
        "p50_ms": pct(ok, 50),
        "p90_ms": pct(ok, 90),
        "p99_ms": pct(ok, 99),
        "max_ms": pct(ok, 100),
        "shed_p99_ms": pct(shed, 99),
        "answered_p99_ms": pct(answered, 99),
        "slow_spells_over_50_ms": slow_spells(samples),
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


def post_request(
    port: int,
    path: str,
    body: str,
    headers: dict[str, str],
    content_type: str = "application/x-www-form-urlencoded",
) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}", "", body]
    return "\r\n".join(lines).encode()


def has_retry_after(response: bytes) -> bool:
    head = response.split(b"\r\n\r\n", 1)[0].lower()
    return b"\r\nretry-after:" in head


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


def postgres_cpu_seconds(database: str) -> dict[int, float]:
    """User + system CPU so far of each PostgreSQL backend serving ``database``, by pid (other databases'
    backends, other users' tests, are left out)."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if not title.startswith("postgres:") or f" {database} " not in title:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[int(proc.name)] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (all cores; /proc/stat), other users' work included."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_split(master_pid: int) -> dict:
    return {
        "gunicorn": server_cpu_seconds(master_pid),
        "postgres": postgres_cpu_seconds(os.environ["DATABASE_URL"].rstrip("/").rpartition("/")[2]),
        "generator": time.process_time(),
        "machine": machine_busy_seconds(),
    }


def per_request(before: dict, after: dict, requests: int) -> dict[str, float]:
    """ms of CPU per request by whom; "other" is the rest of the machine (other users' jobs, the kernel)."""
    # A backend that ended meanwhile (gunicorn reconnects after CONN_MAX_AGE) is left out rather than
    # subtracted; a new one counts from zero.
    postgres = sum(t - before["postgres"].get(pid, 0.0) for pid, t in after["postgres"].items())
    spent = {k: 1000 * (after[k] - before[k]) / max(requests, 1) for k in before if k != "postgres"}
    spent["postgres"] = 1000 * postgres / max(requests, 1)
    spent["other"] = spent["machine"] - spent["gunicorn"] - spent["postgres"] - spent["generator"]
    return {f"{k}_cpu_ms_per_request": round(v, 2) for k, v in spent.items()}


@dataclass
class Plan:
    """Every save of the run, in order: (endpoint, rate, rater, question, answer, stars), and its outcome."""

    saves: list[tuple[str, float, Rater, int, int, int]] = field(default_factory=list)
    outcome: dict[int, Sample] = field(default_factory=dict)
    warmup: set[int] = field(default_factory=set)  # indices of saves sent before the measured phase


def make_plan(
    args: argparse.Namespace, raters: list[Rater], rates: list[float], endpoints: list[str]
) -> Plan:
    plan, used = Plan(), dict.fromkeys((r.username for r in raters), 0)
    for rate in rates:
        for endpoint in endpoints:
            warmup = int(rate * args.warmup)
            for i in range(warmup + int(rate * args.duration)):
                rater = raters[i % len(raters)]
                question, answer, stars = rater.plan[used[rater.username]]
                used[rater.username] += 1
                if i < warmup:
                    plan.warmup.add(len(plan.saves))
                plan.saves.append((endpoint, rate, rater, question, answer, stars))
    return plan


async def drain(port: int, timeout: float) -> None:
    """Wait until the server answers the reference quickly again (a phase past capacity leaves a queue)."""
    request = reference_request(port)
    deadline = time.monotonic() + timeout + 10
    while time.monotonic() < deadline:
        started = time.monotonic()
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(raw_request(port, request), timeout)
        if time.monotonic() - started < 0.05:
            return
        await asyncio.sleep(0.5)


def reference_request(port: int) -> bytes:
    # A static file served by WhiteNoise in the same gunicorn (no database): the cost of the server, the
    # connection and the generator themselves, measured at the same rate in the same run.
    return f"GET /static/favicon.svg HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()


async def run_load(
    args: argparse.Namespace, port: int, raters: list[Rater], master_pid: int, plan: Plan, external: dict
) -> list[dict]:
    import httpx

    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=60) as client:
        for start in range(0, len(raters), 4):  # a few at a time: logging in costs a password hash each
            await asyncio.gather(*(log_in(client, base, r) for r in raters[start : start + 4]))
    loop = asyncio.get_running_loop()

    def request_for(endpoint: str, rater: Rater, question: int, answer: int, stars: int) -> bytes:
        if endpoint == "htmx":
            headers = {"Cookie": rater.cookie, "X-CSRFToken": rater.csrf, "HX-Request": "true"}
            path = f"/c/{SLUG}/rate/{question}/answers/{answer}/"
            return post_request(port, path, f"stars-{answer}={stars}", headers)
        body = json.dumps(
            {"question_id": external[("q", question)], "answer_id": external[("a", answer)], "stars": stars}
        )
        headers = {"Authorization": f"Token {rater.token}"}
        return post_request(port, f"/api/collections/{SLUG}/ratings/", body, headers, "application/json")

    async def exchange(request: bytes, scheduled: float, check: bytes = b"") -> Sample:
        try:
            status, response = await asyncio.wait_for(raw_request(port, request), args.timeout)
        except (OSError, TimeoutError) as exc:
            return Sample(loop.time() - scheduled, 0, type(exc).__name__, scheduled=scheduled)
        error = ""
        if status in (200, 201) and check and check not in response:
            error = f"{status} without {check.decode()!r}"
        return Sample(loop.time() - scheduled, status, error, has_retry_after(response), scheduled)

    async def send(endpoint: str, rate: float, indices: list[int]) -> tuple[list[Sample], float, float]:
        """The saves ``plan.saves[k]`` for k in ``indices``, open-loop at ``rate``; outcomes into the plan."""
        requests = [request_for(endpoint, *plan.saves[k][2:]) for k in indices]
        check = b'data-state="saved"' if endpoint == "htmx" else b'"recorded":1'

        async def save(i: int, scheduled: float) -> Sample:
            sample = await exchange(requests[i], scheduled, check)
            plan.outcome[indices[i]] = sample
            return sample

        return await open_loop(rate, (len(requests) - 0.5) / rate, save)

    results = []
    for rate in sorted({r for _, r, *_ in plan.saves}):
        await drain(port, args.timeout)
        reference = reference_request(port)
        cpu0 = cpu_split(master_pid)
        samples, elapsed, _ = await open_loop(
            rate,
            args.reference_duration,
            lambda i, scheduled, reference=reference: exchange(reference, scheduled),
        )
        ref = summarise("reference", samples, elapsed)
        ref.update(per_request(cpu0, cpu_split(master_pid), len(samples)))
        for endpoint in dict.fromkeys(e for e, r, *_ in plan.saves if r == rate):
            ok_status = 200 if endpoint == "htmx" else 201
            phase = [k for k, (e, r, *_) in enumerate(plan.saves) if (e, r) == (endpoint, rate)]
            warmup_p99 = None
            if warmup := [k for k in phase if k in plan.warmup]:
                await drain(port, args.timeout)
                warm_samples, warm_elapsed, _ = await send(endpoint, rate, warmup)
                warmup_p99 = summarise("warmup", warm_samples, warm_elapsed, ok_status)["p99_ms"]
            await drain(port, args.timeout)
            cpu0 = cpu_split(master_pid)
            with FsyncProbe(args.fsync_probe) if args.fsync_probe else contextlib.nullcontext() as probe:
                samples, elapsed, lag = await send(endpoint, rate, [k for k in phase if k not in plan.warmup])
            result = summarise(endpoint, samples, elapsed, ok_status)
            if probe:
                result["disk_flushes"] = probe.summary(min(s.scheduled for s in samples))
            result.update(per_request(cpu0, cpu_split(master_pid), len(samples)))
            result["warmup_p99_ms"] = warmup_p99
            result["offered_per_s"] = rate
            result["reference_p50_ms"], result["reference_p99_ms"] = ref["p50_ms"], ref["p99_ms"]
            result["reference_cpu_ms"] = ref["gunicorn_cpu_ms_per_request"]
            result["p50_vs_reference"] = (
                round(result["p50_ms"] / ref["p50_ms"], 1) if result["p50_ms"] else None
            )
            result["worst_generator_lag_ms"] = round(1000 * lag, 1)
            results.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    return results


def verify(plan: Plan) -> dict:
    """Nothing lost, nothing duplicated, nothing stored that was refused, every label right.

    A save answered with success must be stored with its stars; one refused for capacity (429/503 with
    Retry-After) must not be; one the client gave up on may be either (counted). The database may hold
    nothing else, and each label must be the aggregate (``aggregate_stars``) of its pair's stored ratings.
    """
    from ratings.models import Label, Rating
    from ratings.services import aggregate_stars

    stored = {
        (u, q, a): s
        for u, q, a, s in Rating.objects.filter(question__collection__slug=SLUG).values_list(
            "rater__username", "question_id", "answer_id", "stars"
        )
    }
    lost = refused_but_stored = unanswered = unanswered_stored = 0
    planned = set()
    for k, (_, _, rater, q, a, stars) in enumerate(plan.saves):
        key = (rater.username, q, a)
        planned.add(key)
        sample = plan.outcome.get(k)
        if sample is None:
            continue
        if sample.status in (200, 201) and not sample.error:
            lost += stored.get(key) != stars
        elif is_shed(sample):
            refused_but_stored += key in stored
        else:
            unanswered += 1
            unanswered_stored += stored.get(key) == stars
    by_pair: dict[tuple[int, int], list[int]] = defaultdict(list)
    for (_, q, a), s in stored.items():
        by_pair[(q, a)].append(s)
    labels = {
        (q, a): (g, m, d)
        for q, a, g, m, d in Label.objects.filter(question__collection__slug=SLUG).values_list(
            "question_id", "answer_id", "gain", "mean_stars", "disagreement"
        )
    }
    wrong_labels = len(set(labels) ^ set(by_pair))
    for pair, stars in by_pair.items():
        if pair in labels:
            gain, mean, spread = aggregate_stars(stars)
            g, m, d = labels[pair]
            wrong_labels += g != gain or abs(m - mean) > 1e-9 or d != spread
    return {
        "ratings_stored": len(stored),
        "lost": lost,
        "refused_but_stored": refused_but_stored,
        "unanswered": unanswered,
        "unanswered_but_stored": unanswered_stored,
        "stored_but_never_sent": len(set(stored) - planned),
        "pairs": len(by_pair),
        "pairs_with_2plus_raters": sum(1 for s in by_pair.values() if len(s) >= 2),
        "wrong_labels": wrong_labels,
    }


def main() -> None:
    args = parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    endpoints = [e.strip() for e in args.endpoints.split(",")]
    if set(endpoints) - {"htmx", "api"}:
        raise SystemExit(f"--endpoints: htmx and/or api, not {args.endpoints!r}")
    var_dir = Path(tempfile.mkdtemp(prefix="rt-bench-ratings-"))
    env = app_environment(args, var_dir)
    os.environ.clear()
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    recreate_database(args.database_url, commit_without_flush=args.commit_without_flush)
    if args.redis_url:
        flush_redis(args.redis_url)
    import django

    django.setup()
    questions, answers, names = seed(args)
    tokens = issue_tokens(names)
    from corpus.models import Answer, Question

    external = {
        **{("q", pk): ext for pk, ext in Question.objects.values_list("pk", "external_id")},
        **{("a", pk): ext for pk, ext in Answer.objects.values_list("pk", "external_id")},
    }

    rng = random.Random(args.seed)
    per_rater = int(sum(rates) * (args.warmup + args.duration) * len(endpoints) / len(names)) + 1
    pairs = [(q, a) for q in questions for a in answers]
    if per_rater > len(pairs):
        raise SystemExit(f"each rater needs {per_rater} distinct pairs but there are only {len(pairs)}")
    raters = [
        Rater(
            name,
            token=tokens[name],
            plan=[(q, a, rng.randint(0, 3)) for q, a in rng.sample(pairs, per_rater)],
        )
        for name in names
    ]
    plan = make_plan(args, raters, rates, endpoints)

    load_before = list(os.getloadavg())
    port = args.port or free_port()
    log = var_dir / "gunicorn.log"
    server = start_gunicorn(args, env, port, log)
    os.nice(args.nice)  # after gunicorn started: its processes keep the normal priority
    try:
        results = asyncio.run(run_load(args, port, raters, server.pid, plan, external))
    finally:
        server.terminate()
        server.wait(20)

    from django.db import connection

    connection.close()
    check = verify(plan)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "code": str(args.app_dir.resolve()),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
        "gunicorn": f"{args.workers} workers, config {args.gunicorn_config or 'of the tree'}, threads {args.threads or 'of the config'}",
        "duration_s": args.duration,
        "commit_without_flush": args.commit_without_flush,
        "raters": len(raters),
        "results": results,
        "verification": check,
    }
    print(json.dumps(report, indent=2))
    print(
        "\nendpoint  offered  ok/s  shed  errors  p50  p90  p99 ms (reference p50/p99)  CPU ms/save gunicorn/pg/machine"
    )
    for r in results:
        print(
            f"{r['phase']:<8} {r['offered_per_s']:>6.0f} {r['ok_per_s']:>6.1f} {r['shed']:>5} {r['errors']:>6}  "
            f"{r['p50_ms']} {r['p90_ms']} {r['p99_ms']}  ({r['reference_p50_ms']}/{r['reference_p99_ms']})  "
            f"{r['gunicorn_cpu_ms_per_request']}/{r['postgres_cpu_ms_per_request']}/{r['machine_cpu_ms_per_request']}"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    errors = log.read_text(errors="replace").strip()
    if errors:
        print("gunicorn log:\n" + errors[-3000:], file=sys.stderr)
    shutil.rmtree(var_dir, ignore_errors=True)
    intact = not (
        check["lost"]
        or check["refused_but_stored"]
        or check["stored_but_never_sent"]
        or check["wrong_labels"]
    )
    sys.exit(0 if intact else 1)


if __name__ == "__main__":
    main()
