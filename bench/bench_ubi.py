"""What UBI logging costs ``ranker_server`` and whether it loses anything (issue 36 §1; bench/README.md,
"UBI logging: overhead and durability").

    .venv/bin/python bench/bench_ubi.py            # ~3 min; --quick: ~1.5 min

Starts its own PostgreSQL (Debian's binaries, a temporary directory, fsync on: it is the store being
measured, and the bench stops it), migrates it, makes a collection of ``--answers`` synthetic answers, and
serves it with two ``manage.py ranker_server`` processes (the builtin BM25 ranker): one logging (the
default) and one with ``--no-ubi``. Then:

1. **Overhead**: an open-loop load generator sends POST / at ``--rate`` requests/s (200) to one server,
   then the other, alternating in ``--rounds`` rounds of ``--seconds`` each, so both meet the same load of
   the shared machine. While the logging server is measured, POST /events also gets one click per 4
   queries (50/s, sent by the same generator), so the figure includes storing events. Latency is from the
   request's scheduled time to its answer (a late send counts against the server: no coordinated
   omission). The figure: p50/p99 of each, and p99 with logging minus p99 without; and, from /proc in the
   same rounds, the CPU per request of the server process (its request threads), of the UBI writer it
   forks and of PostgreSQL, with and without logging: a figure the machine's other load does not move.
2. **Durability**: load on the logging server for 45 s; 5 s in, PostgreSQL is stopped for 30 s; at 40 s
   the server is killed (SIGKILL: no drain at exit) and a new one is started on the same spool; when the
   load ends and the spool is drained, every query_id answered 200 and every event answered 202 must be
   in the database. Prints what is missing (the goal: nothing).

3. **Interleaving** (``--online``, instead of 1 and 2): what an online test at 100% share costs the
   server. One logging server serves a builtin ranker whose champion is BM25 and whose challenger is a
   fusion of BM25 and RM3 (``--challenger``: or BM25 again); rounds alternate between no test and a test
   at 100% share (started and stopped between rounds; the server picks it up within
   ``ONLINE_TEST_POLL_MS`` = 100 here, and the round waits for /healthz to say so), under the same load
   generator at ``--rate``. Prints p50/p99 of each and the CPU per request of the server process, the
   writer and PostgreSQL, from /proc, with the ratio.

    .venv/bin/python bench/bench_ubi.py --online --answers 20000 --rate 100

The load average (1 min) is printed with each figure; the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PG_BIN = (
    Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])
    if Path("/usr/lib/postgresql").exists()
    else None
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Postgres:
    """A throwaway PostgreSQL the bench can stop and start (the outage)."""

    def __init__(self, directory: Path) -> None:
        assert PG_BIN is not None, "needs Debian's postgresql (/usr/lib/postgresql/*/bin)"
        self.data = directory / "pg"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        user = ["-U", "postgres"]
        subprocess.run([PG_BIN / "initdb", "-D", self.data, *user, "--auth=trust", "-E", "UTF8"],
                       check=True, stdout=subprocess.DEVNULL, **self._as_postgres())  # fmt: skip

    def _as_postgres(self) -> dict:
        # initdb/postgres refuse to run as root: run them as the "postgres" user when we are root.
        if os.geteuid() != 0:
            return {}
        import pwd

        entry = pwd.getpwnam("postgres")
        shutil.chown(self.data.parent, entry.pw_uid, entry.pw_gid)
        return {"user": entry.pw_uid, "group": entry.pw_gid}

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1"
        subprocess.run([PG_BIN / "pg_ctl", "-D", self.data, "-o", options, "-l", self.data.parent / "pg.log",
                        "-w", "start"], check=True, stdout=subprocess.DEVNULL, **self._as_postgres())  # fmt: skip

    def stop(self) -> None:
        subprocess.run([PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                       check=True, stdout=subprocess.DEVNULL, **self._as_postgres())  # fmt: skip


def server_start(env: dict, port: int, *args: str, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "manage.py", "ranker_server", "--collection", "ubi-bench", "--port", str(port), *args],
        cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ranker_server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("ranker_server did not start")


WORDS = [f"w{n}" for n in range(400)]


class Load:
    """Open-loop load: request i is due at start + i / rate, and its latency counts from then. An asyncio
    client on raw keep-alive connections (``CONNECTIONS`` of them), a few microseconds of CPU a request, so
    the generator's own lateness (``lags``) stays out of the figures on a loaded machine."""

    CONNECTIONS = 32

    def __init__(self, rate: float, seconds: float, *, events: bool, texts: list[str] | None = None) -> None:
        self.rate, self.seconds, self.events = rate, seconds, events
        self.texts = texts  # the questions' texts, taken in turn (default: 3 of WORDS drawn per request)
        self.latencies: list[float] = []
        self.lags: list[float] = []  # how late the generator sent (its own share of a latency)
        self.event_latencies: list[float] = []
        self.query_ids: set[str] = set()
        self.event_sessions: set[str] = set()
        self.errors = 0

    @staticmethod
    async def _exchange(reader, writer, path: str, body: bytes) -> tuple[int, bytes]:
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        status = int((await reader.readline()).split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await reader.readexactly(length)

    async def _worker(self, port: int, queue: asyncio.Queue) -> None:
        connection = None
        while (item := await queue.get()) is not None:
            i, due = item
            lag = (time.perf_counter() - due) * 1000
            rng = np.random.default_rng(i)
            text = self.texts[i % len(self.texts)] if self.texts else " ".join(rng.choice(WORDS, 3))
            question = {"question": {"id": f"q{i}", "text": text}, "rows": 10, "client_id": f"c{i % 50}"}
            try:
                if connection is None:
                    connection = await asyncio.open_connection("127.0.0.1", port)
                status, raw = await self._exchange(*connection, "/", json.dumps(question).encode())
            except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
                self.errors += 1
                connection = None
                continue
            self.latencies.append((time.perf_counter() - due) * 1000)
            self.lags.append(lag)
            answer = json.loads(raw) if status == 200 else {}
            if "query_id" in answer:
                self.query_ids.add(answer["query_id"])
            if not (self.events and i % 4 == 0 and "query_id" in answer):
                continue
            session = f"s{i}-{time.time_ns()}"
            top = answer["answers"][0]["id"] if answer["answers"] else "x"
            event = {"action_name": "click", "query_id": answer["query_id"], "client_id": f"c{i % 50}",
                     "session_id": session, "timestamp": "2026-11-29T00:00:00Z",
                     "event_attributes": {"position": {"ordinal": 1}, "object": {"object_id": top}}}  # fmt: skip
            started = time.perf_counter()
            try:
                status, _ = await self._exchange(*connection, "/events", json.dumps(event).encode())
            except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
                self.errors += 1
                connection = None
                continue
            self.event_latencies.append((time.perf_counter() - started) * 1000)
            if status == 202:
                self.event_sessions.add(session)

    async def _run(self, port: int, seconds: float, offset: int) -> None:
        queue: asyncio.Queue = asyncio.Queue()
        workers = [asyncio.create_task(self._worker(port, queue)) for _ in range(self.CONNECTIONS)]
        start = time.perf_counter()
        for i in range(int(self.rate * seconds)):
            due = start + i / self.rate
            pause = due - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
            queue.put_nowait((offset + i, due))
        for _ in workers:
            queue.put_nowait(None)
        await asyncio.gather(*workers)

    def run(self, url: str, seconds: float | None = None, offset: int = 0) -> None:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        asyncio.run(self._run(port, seconds or self.seconds, offset))


def append_cost(directory: Path, n: int = 20_000) -> None:
    """What logging adds to a request thread, alone: building a query record and ``Spool.append``."""
    from ubi.log import UbiLog, query_id_new

    log = UbiLog(directory=directory, application="ubi-bench")
    from ubi.spool import Spool

    log.spool = Spool(directory)  # no writer: the file only grows
    hits = [f"a{i}" for i in range(10)]
    times = []
    for _ in range(n):
        started = time.perf_counter()
        log.query_log(query_id=query_id_new(), user_query="w1 w2 w3", hit_ids=hits,
                      attributes={"ranker": "BM25", "version": None, "question_id": "q1"}, client_id="c1")  # fmt: skip
        times.append((time.perf_counter() - started) * 1e6)
    log.spool.close()
    print(f"  a request thread's share (record + append, {n:,} in a row): p50 {pct(times, 50):.1f} us, "
          f"p99 {pct(times, 99):.1f} us, p99.9 {pct(times, 99.9):.1f} us (load {os.getloadavg()[0]:.1f})")  # fmt: skip


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a live process has used, its exited threads included; 0 once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of stat)


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (the writer a logging ranker_server forks; PostgreSQL's
    backends and helpers under its postmaster)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


class CpuMeter:
    """CPU seconds of a ranker_server's own process (its request threads: the request path), of the
    processes it forked (the UBI writer: off the path) and of the whole PostgreSQL (every backend), read
    from /proc before and after a round; divided by the requests served, CPU per request. Unlike latency,
    this is not moved by other processes' load on the shared machine (only by CPU frequency and caches)."""

    def __init__(self, server: subprocess.Popen, postmaster: int) -> None:
        self.server, self.postmaster = server.pid, postmaster

    def read(self) -> tuple[float, float, float]:
        writer = sum(cpu_of(pid) for pid in children_of(self.server))
        postgres = cpu_of(self.postmaster) + sum(cpu_of(pid) for pid in children_of(self.postmaster))
        return cpu_of(self.server), writer, postgres


def interleaving_cost(args, env: dict, collection, postgres: Postgres, logs: Path) -> None:
    """3. An online test at 100% share against none, alternating rounds on one logging server."""
    from django.db import connections

    from rankers.models import Ranker, RankerKind, RankerVersion
    from rankers.online_tests import online_test_start, online_test_stop

    ranker = Ranker.objects.create(collection=collection, name="Bench", kind=RankerKind.BUILTIN)
    champion = RankerVersion.objects.create(ranker=ranker, label="v1", method="bm25")
    if args.challenger == "fusion":
        params = {"signals": ["bm25", "rm3"], "weights": [1.0, 0.5]}
        challenger = RankerVersion.objects.create(
            ranker=ranker, label="v2", method="fusion", details={"params": params}
        )
    else:
        challenger = RankerVersion.objects.create(ranker=ranker, label="v2", method="bm25")
    ranker.champion = champion
    ranker.save(update_fields=["champion"])
    connections.close_all()
    port = free_port()
    server = server_start(env, port, "--ranker", str(ranker.pk), log=logs / "online.log")
    url = f"http://127.0.0.1:{port}/"
    print(f"ranker_server on {args.answers} answers: champion BM25, challenger {args.challenger}; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")  # fmt: skip

    def testing(running: bool) -> None:
        """Start or stop the test, and wait until the server serves it so."""
        if running:
            online_test_start(challenger=challenger, started_by=None)
        else:
            from rankers.online_tests import running_online_test

            test = running_online_test(collection=collection)
            if test is not None:
                online_test_stop(test=test, stopped_by=None)
        connections.close_all()
        deadline = time.monotonic() + 30
        while ("online_test" in httpx.get(url + "healthz").json()) != running:
            if time.monotonic() > deadline:
                raise RuntimeError("ranker_server did not pick the online test up")
            time.sleep(0.05)

    postmaster = int((postgres.data / "postmaster.pid").read_text().split()[0])
    meter = CpuMeter(server, postmaster)
    loads = {name: Load(args.rate, args.seconds, events=True) for name in ("no test", "interleaved")}
    cpu = {name: np.zeros(3) for name in loads}
    served = {name: 0 for name in loads}
    round_p99: dict[str, list[float]] = {name: [] for name in loads}
    for running in (True, False):  # warm-up, not counted: the challenger loaded, first requests
        testing(running)
        Load(args.rate, 3, events=True).run(url, offset=900_000 + running * 10_000)
    load_average = []
    for round_ in range(args.rounds):
        for name, load in loads.items():
            testing(name == "interleaved")
            before = len(load.latencies)
            cpu_before = np.array(meter.read())
            load.run(url, offset=round_ * 100_000 + (name == "interleaved") * 50_000)
            time.sleep(0.5)  # the writer's last batch of the round
            cpu[name] += np.array(meter.read()) - cpu_before
            served[name] += len(load.latencies) - before
            load_average.append(os.getloadavg()[0])
            round_p99[name].append(pct(load.latencies[before:], 99))
            print(f"  round {round_ + 1} {name:11}: p50 {pct(load.latencies[before:], 50):6.2f} ms  p99 "
                  f"{round_p99[name][-1]:7.2f} ms  client lag p99 {pct(load.lags[before:], 99):6.2f} ms, "
                  f"load {load_average[-1]:.1f}")  # fmt: skip
    testing(False)
    print(f"\n3. interleaving at 100% share, {args.rate:.0f} requests/s (+ a click per 4), {args.rounds} rounds x "
          f"{args.seconds:.0f} s each (load average {min(load_average):.1f}-{max(load_average):.1f})")  # fmt: skip
    for name, load in loads.items():
        print(f"  {name:11} n={len(load.latencies):5d} p50 {pct(load.latencies, 50):6.2f} ms  "
              f"p99 {pct(load.latencies, 99):6.2f} ms  errors {load.errors}")  # fmt: skip
    print(f"  p50 {pct(loads['interleaved'].latencies, 50) - pct(loads['no test'].latencies, 50):+.2f} ms, "
          f"p99 {pct(loads['interleaved'].latencies, 99) - pct(loads['no test'].latencies, 99):+.2f} ms over all "
          f"requests; median of the rounds' p99 differences "
          f"{float(np.median(np.subtract(round_p99['interleaved'], round_p99['no test']))):+.2f} ms")  # fmt: skip
    print("  CPU per request (ms; /proc): server process (request threads) | UBI writer | PostgreSQL | all")
    per = {name: 1000 * cpu[name] / max(served[name], 1) for name in loads}
    for name in loads:
        print(f"  {name:11} {per[name][0]:7.3f} | {per[name][1]:7.3f} | {per[name][2]:7.3f} | "
              f"{per[name].sum():7.3f}   ({served[name]} requests)")  # fmt: skip
    print(f"  interleaved / no test: server process x{per['interleaved'][0] / per['no test'][0]:.2f}, "
          f"all x{per['interleaved'].sum() / per['no test'].sum():.2f}")  # fmt: skip
    server.send_signal(signal.SIGTERM)
    server.wait(30)
    connections.close_all()


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=15, help="per round and server")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="10 s rounds, a 20 s outage")
    parser.add_argument("--online", action="store_true", help="3. interleaving's cost, instead of 1 and 2")
    parser.add_argument("--challenger", choices=("fusion", "bm25"), default="fusion")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 10
    outage = 20 if args.quick else 30
    work = Path(tempfile.mkdtemp(prefix="bench-ubi-"))
    postgres = Postgres(work)
    postgres.start()
    env = {
        **os.environ,
        "DATABASE_URL": postgres.url,
        "RANK_TRAINER_VAR_DIR": str(work / "var"),
        "MODEL_DIR": str(work / "var" / "models"),
        "UBI_SPOOL_DIR": str(work / "spool"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "bench-ubi",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "ONLINE_TEST_POLL_MS": "100",
    }
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "RANK_TRAINER_VAR_DIR", "MODEL_DIR", "DJANGO_SETTINGS_MODULE",
                                          "SECRET_KEY", "DEBUG", "LOG_LEVEL")})  # fmt: skip
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from corpus.formats.records import AnswerRecord
    from corpus.services import collection_create
    from trainer.services import collection_import
    from ubi.models import UbiEvent, UbiQuery

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(36)
    collection = collection_create(name="UBI bench", slug="ubi-bench")
    answers = [
        AnswerRecord(f"a{n}", f"answer {n}", " ".join(rng.choice(WORDS, 30))) for n in range(args.answers)
    ]
    collection_import(collection=collection, answers=answers)
    connections.close_all()
    logs = work / "logs"
    logs.mkdir()
    if args.online:
        interleaving_cost(args, env, collection, postgres, logs)
        postgres.stop()
        shutil.rmtree(work, ignore_errors=True)
        return
    on_port, off_port = free_port(), free_port()
    on = server_start(env, on_port, log=logs / "on.log")
    off = server_start(env, off_port, "--no-ubi", log=logs / "off.log")
    print(
        f"ranker_server x2 on {args.answers} answers; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}"
    )

    # --- 1. overhead ---------------------------------------------------------------------------------
    with_log, with_events = (
        Load(args.rate, args.seconds, events=False),
        Load(args.rate, args.seconds, events=True),
    )
    without = Load(args.rate, args.seconds, events=False)
    measured = (
        ("logging", with_log, on_port),
        ("+events", with_events, on_port),
        ("no log", without, off_port),
    )
    for port in (on_port, off_port):  # warm-up, not counted: first requests, connections, caches
        Load(args.rate, 2, events=port == on_port).run(f"http://127.0.0.1:{port}/", offset=900_000)
    loads = []
    round_p99: dict[str, list[float]] = {name: [] for name, _, _ in measured}
    postmaster = int((postgres.data / "postmaster.pid").read_text().split()[0])
    meters = {on_port: CpuMeter(on, postmaster), off_port: CpuMeter(off, postmaster)}
    cpu: dict[str, np.ndarray] = {name: np.zeros(3) for name, _, _ in measured}  # server, writer, postgres
    served: dict[str, int] = {name: 0 for name, _, _ in measured}
    own_cpu = time.process_time  # the generator's own CPU, printed beside: it shares the cores
    generator_cpu = 0.0
    for round_ in range(args.rounds):
        for name, load, port in measured:
            before = len(load.latencies)
            cpu_before, generator_before = np.array(meters[port].read()), own_cpu()
            load.run(f"http://127.0.0.1:{port}/", offset=round_ * 100_000)
            time.sleep(0.5)  # the writer's last batch of the round (it stores every 0.2 s)
            cpu[name] += np.array(meters[port].read()) - cpu_before
            generator_cpu += own_cpu() - generator_before
            served[name] += len(load.latencies) - before
            loads.append(os.getloadavg()[0])
            round_p99[name].append(pct(load.latencies[before:], 99))
            print(f"  round {round_ + 1} {name:8}: p50 {pct(load.latencies[before:], 50):6.2f} ms  p99 "
                  f"{round_p99[name][-1]:7.2f} ms  client lag p99 {pct(load.lags[before:], 99):6.2f} ms, "
                  f"load {loads[-1]:.1f}")  # fmt: skip
    print(f"\n1. overhead at {args.rate:.0f} requests/s, {args.rounds} rounds x {args.seconds:.0f} s each (load average "
          f"{min(loads):.1f}-{max(loads):.1f})")  # fmt: skip
    for name, load in (("logging", with_log), ("logging + 50 events/s", with_events), ("--no-ubi", without)):
        print(f"  {name:24} n={len(load.latencies):5d} p50 {pct(load.latencies, 50):6.2f} ms  "
              f"p99 {pct(load.latencies, 99):6.2f} ms  errors {load.errors}")  # fmt: skip
    print(f"  POST /events             n={len(with_events.event_latencies):5d} p50 "
          f"{pct(with_events.event_latencies, 50):6.2f} ms  p99 {pct(with_events.event_latencies, 99):6.2f} ms")  # fmt: skip
    for name, load, key in (("logging", with_log, "logging"), ("logging + events", with_events, "+events")):
        overall = pct(load.latencies, 99) - pct(without.latencies, 99)
        per_round = float(np.median(np.subtract(round_p99[key], round_p99["no log"])))
        print(f"  p99 overhead of {name}: {overall:+.2f} ms over all requests, median of the rounds' "
              f"{per_round:+.2f} ms (p50 {pct(load.latencies, 50) - pct(without.latencies, 50):+.2f} ms); goal <= 2 ms")  # fmt: skip
    for name, load in (("logging", with_log), ("logging + events", with_events), ("--no-ubi", without)):
        print(f"  {name:17} p90 {pct(load.latencies, 90):6.2f} ms  p95 {pct(load.latencies, 95):6.2f} ms")
    no_log_rounds = round_p99["no log"]
    print(f"  noise: the --no-ubi server's own p99 ranged {min(no_log_rounds):.1f}-{max(no_log_rounds):.1f} ms "
          "between rounds")  # fmt: skip
    print("  CPU per request (ms; /proc, the same rounds): server process (request threads) | UBI writer | "
          "PostgreSQL | all")  # fmt: skip
    per_request = {name: 1000 * cpu[name] / max(served[name], 1) for name in cpu}
    for name, _, _ in measured:
        server, writer, database = per_request[name]
        print(f"  {name:9} {server:7.3f} | {writer:7.3f} | {database:7.3f} | {server + writer + database:7.3f}"
              f"   ({served[name]} requests)")  # fmt: skip
    for name in ("logging", "+events"):
        added = per_request[name] - per_request["no log"]
        print(f"  added by {name}: request path {added[0]:+.3f} ms CPU, off the path (writer + PostgreSQL) "
              f"{added[1] + added[2]:+.3f} ms CPU a request = {args.rate * (added[1] + added[2]) / 10:.1f}% of "
              f"one core at {args.rate:.0f} requests/s")  # fmt: skip
    print(
        f"  (the load generator itself: {1000 * generator_cpu / max(sum(served.values()), 1):.3f} ms CPU a request)"
    )
    off.send_signal(signal.SIGTERM)
    off.wait(30)
    append_cost(work / "append-spool")

    # --- 2. durability -------------------------------------------------------------------------------
    durable = Load(args.rate, 45, events=True)
    total = outage + 15
    url = f"http://127.0.0.1:{on_port}/"
    runner = threading.Thread(target=durable.run, args=(url, total, 1_000_000))
    runner.start()
    time.sleep(5)
    postgres.stop()
    print(
        f"\n2. durability: PostgreSQL stopped for {outage} s under load (load average {os.getloadavg()[0]:.1f})"
    )
    time.sleep(outage)
    pending = httpx.get(url + "ubi/stats").json()
    postgres.start()
    print(f"  PostgreSQL back; the spool held {pending['spool_pending_bytes']:,} bytes; "
          f"writer said: {pending['database_error']!r}")  # fmt: skip
    time.sleep(5)
    on.kill()  # SIGKILL: no drain at exit
    on.wait()
    killed_at = time.monotonic()
    on = server_start(env, on_port, log=logs / "on2.log")
    print(f"  server killed (SIGKILL) and restarted in {time.monotonic() - killed_at:.1f} s")
    runner.join()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and httpx.get(url + "ubi/stats").json()["spool_pending_bytes"]:
        time.sleep(0.2)
    connections.close_all()
    stored_queries = set(
        UbiQuery.objects.filter(query_id__in=durable.query_ids).values_list("query_id", flat=True)
    )
    stored_events = set(
        UbiEvent.objects.filter(session_id__in=durable.event_sessions).values_list("session_id", flat=True)
    )
    print(f"  accepted {len(durable.query_ids)} queries and {len(durable.event_sessions)} events "
          f"({durable.errors} requests refused while the server restarted: not accepted)")  # fmt: skip
    print(f"  in the database: {len(stored_queries)} queries, {len(stored_events)} events; lost "
          f"{len(durable.query_ids - stored_queries)} queries, {len(durable.event_sessions - stored_events)} events "
          f"(goal 0); p99 under the outage {pct(durable.latencies, 99):.2f} ms")  # fmt: skip
    on.send_signal(signal.SIGTERM)
    on.wait(30)
    connections.close_all()
    postgres.stop()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
