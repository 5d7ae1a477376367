"""Evaluation runs and what scores rankings the way a run does (one subject per module):

* :mod:`.start` – a run started (``evaluation_start``, ``EvaluationUnavailable``) and the scheduled runs.
* :mod:`.plan` – a run claimed PENDING → RUNNING and split into chunks (``run_plan``).
* :mod:`.chunk` – one chunk evaluated by one worker, results stored in batches (``chunk_evaluate``).
* :mod:`.ranking` – asking the ranker in a worker: one question, the requests in flight, the backends kept.
* :mod:`.finalise` – a run's figures once its chunks are done, or why it failed (``run_finalise``).
* :mod:`.recovery` – chunks and runs a killed worker left, taken over (``evaluations_resume``).
* :mod:`.scoring` – rankings scored under a run's metric definition (``score_rankings``; ``rated_top``: a
  ranking's top k condensed to its rated answers, what NDCG@k on rated answers scores).
* :mod:`.compare` – champion against challenger on the test questions now (``versions_compare``).

How a run moves (every step is a conditional UPDATE, so a redelivered or duplicated Celery message
never does anything twice):

1. ``evaluation_start`` snapshots the collection's metric definition onto a PENDING run and, after
   commit, queues ``evaluation.run``. When the broker is unreachable it raises ``EvaluationUnavailable``
   *before* creating anything; if the broker dies between that check and the publish, the run is
   marked FAILED with the reason (never left PENDING for ever).
2. ``run_plan`` (task ``evaluation.run``) claims PENDING→RUNNING, splits the test questions into chunks
   of ``EVALUATION_CHUNK_SIZE`` and queues one ``evaluation.chunk`` task per chunk, so more workers
   finish sooner. No chord: the embedded broker has no result backend. Instead each chunk counts
   itself done with an atomic UPDATE, and whoever completes the last chunk finalises the run.
3. ``chunk_evaluate`` claims its chunk, skips questions that already have a result (a resumed chunk),
   asks the ranker once per question (an http ranker retries transient errors itself: one retry layer)
   with at most ``EVALUATION_CONCURRENCY`` requests in flight per worker process (shared by the chunks a
   worker evaluates at once), beats on the chunk on a timer, and stores per-question results in batches.
4. ``run_finalise`` computes the run's means from all its question results with the metrics engine,
   the bootstrap CI, and the paired comparison with the previous successful run of the ranker.

A worker killed mid-run: its chunk stays RUNNING. When a worker with the same node name starts again,
``evaluations_resume`` hands that chunk back (its heartbeat predates the new process); any worker takes
over a chunk whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` (every worker's watchdog looks
every half of that, beat's sweep every minute), so the stall is bounded with or without beat.
The unique (run, question) constraint and the skip of answered questions mean no duplicate rows.
The lifecycle every job shares (the broker check, the publish after commit, the claim, the heartbeat,
the take-over) is ``jobs``'.
"""

from .chunk import chunk_evaluate
from .compare import SIGNIFICANCE, VersionComparison, versions_compare
from .finalise import FAILURE_LIMIT, STATS_SEED, failure_allowance, failure_text, run_finalise
from .plan import run_plan
from .recovery import evaluations_resume, stale_pending_runs
from .scoring import rated_share, rated_top, score_rankings
from .start import EvaluationUnavailable, evaluation_start, scheduled_evaluations_start

__all__ = [
    "FAILURE_LIMIT",
    "SIGNIFICANCE",
    "STATS_SEED",
    "EvaluationUnavailable",
    "VersionComparison",
    "chunk_evaluate",
    "evaluation_start",
    "evaluations_resume",
    "failure_allowance",
    "failure_text",
    "run_finalise",
    "run_plan",
    "scheduled_evaluations_start",
    "rated_share",
    "rated_top",
    "score_rankings",
    "stale_pending_runs",
    "versions_compare",
]
