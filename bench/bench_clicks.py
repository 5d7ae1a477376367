"""How long the implicit judgments of a collection take to compute from its UBI log (issue 36 §3:
``evaluation.selectors.clicks.implicit_judgments``, which the Clicks beside ratings page, the question
page's panel, the API and the clicks judge call), per number of events.

    .venv/bin/python bench/bench_clicks.py                 # 20k, 100k and 300k events, SQLite
    .venv/bin/python bench/bench_clicks.py --events 50000  # one size

A fresh SQLite database in a temporary directory (the embedded default): a collection of 1,000 questions
and 5,000 answers; a log of production queries, 80% of them a question's text, each showing 10 answers
(an impression each) and clicked at rank r with probability 0.5 / r (fixed seed). Prints wall and CPU time
of ``implicit_judgments`` (best of 3) beside the time to read the events alone, and the machine's load.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="*", default=[20_000, 100_000, 300_000])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-clicks-"))
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
            "RANK_TRAINER_VAR_DIR": str(work / "var"),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "bench-clicks",
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    from corpus.formats.records import AnswerRecord, QuestionRecord
    from corpus.services import answers_upsert, collection_create, questions_upsert
    from evaluation.selectors.clicks import implicit_judgments
    from ubi.models import UbiEvent, UbiQuery

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(36)
    collection = collection_create(name="Clicks bench", slug="clicks-bench")
    answers_upsert(
        collection=collection, records=[AnswerRecord(f"a{n}", f"answer {n}", "") for n in range(5000)]
    )
    questions_upsert(
        collection=collection, records=[QuestionRecord(f"q{n}", f"question {n}") for n in range(1000)]
    )
    stamp = dt.datetime(2026, 11, 28, tzinfo=dt.UTC)
    made = 0
    print(f"SQLite; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    for target in sorted(args.events):
        queries, events = [], []
        while made < target:
            n = len(queries) + made // 11
            text = f"question {rng.integers(1000)}" if rng.random() < 0.8 else f"other {rng.integers(5000)}"
            query_id = f"b{made}-{n}"
            hits = [f"a{h}" for h in rng.choice(5000, 10, replace=False)]
            queries.append(UbiQuery(query_id=query_id, application="clicks-bench", user_query=text,
                                    query_response_hit_ids=hits, timestamp=stamp))  # fmt: skip
            for rank, hit in enumerate(hits, 1):
                events.append(UbiEvent(event_id=uuid.uuid4(), application="clicks-bench", action_name="impression",
                                       query_id=query_id, timestamp=stamp, ordinal=rank, object_id=hit))  # fmt: skip
                if rng.random() < 0.5 / rank:
                    events.append(UbiEvent(event_id=uuid.uuid4(), application="clicks-bench", action_name="click",
                                           query_id=query_id, timestamp=stamp, ordinal=rank, object_id=hit))  # fmt: skip
            made = UbiEvent.objects.count() + len(events)
        UbiQuery.objects.bulk_create(queries, batch_size=2000)
        UbiEvent.objects.bulk_create(events, batch_size=2000)
        walls, cpus = [], []
        for _ in range(3):
            wall, cpu = time.perf_counter(), time.process_time()
            result = implicit_judgments(collection=collection)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        read = time.perf_counter()
        list(UbiEvent.objects.values_list("action_name", "ordinal", "object_id"))
        read = time.perf_counter() - read
        print(f"  {result.events:8,d} events, {result.queries:7,d} queries, {len(result.judgments):7,d} pairs: "
              f"{min(walls):6.2f} s wall, {min(cpus):6.2f} s CPU (reading the events alone {read:.2f} s; "
              f"PBM {result.pbm_iterations} iterations; load {os.getloadavg()[0]:.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
