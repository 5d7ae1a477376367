"""The Cranfield demo collection, loaded from ``trainer/demo_data/`` unless it exists, and its first
evaluation, so a fresh demo's dashboard opens on a headline instead of "–"."""

from __future__ import annotations

import contextlib
from pathlib import Path

from django.db import transaction

from corpus.models import Collection
from corpus.services import ImportFiles, collection_create, parse_import_files
from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from evaluation.services import chunk_evaluate, evaluation_start, run_plan
from rankers.embedding import EmbeddingUnavailable
from rankers.index import load_index
from rankers.selectors import default_ranker
from rankers.semantic import embeddings_build_now

from .imports import collection_import

DEMO_DATA_DIR = Path(__file__).resolve().parents[1] / "demo_data"
# The node name the set-up's claims carry (a worker's is celery@host): the runs page says who ran it.
DEMO_WORKER = "bootstrap_demo"
# Raters read it on their home card: plain words, no formula (the import's grade → stars rule, "rnr":
# stars = max(grade − 1, 0), is the import page's and corpus.formats.grades' to tell).
DEMO_DESCRIPTION = (
    "Questions about aircraft and airflow, with summaries of 1,400 aeronautics papers as answers "
    "(the Cranfield collection, as IBM Watson Retrieve and Rank's tutorial shipped it)."
)
_FORMER_DESCRIPTION = (
    "Cranfield 1400 aeronautics abstracts and 150 questions, as IBM Watson Retrieve and Rank's "
    "tutorial shipped them. Grades 0–4 mapped to stars = max(grade − 1, 0)."
)


@transaction.atomic
def demo_collection_load(*, slug: str = "cranfield") -> Collection | None:
    """Load the Cranfield demo collection unless it exists. Returns it when it was created now.

    A demo loaded before its description was reworded for raters gets the new words (left alone if a
    trainer changed it)."""
    if Collection.objects.filter(slug=slug).exists():
        Collection.objects.filter(slug=slug, description=_FORMER_DESCRIPTION).update(
            description=DEMO_DESCRIPTION
        )
        return None
    collection = collection_create(
        name="Cranfield (demo)",
        slug=slug,
        description=DEMO_DESCRIPTION,
    )
    answers, questions, judgments = parse_import_files(
        ImportFiles(
            rnr_documents=DEMO_DATA_DIR / "cranfield-data.json",
            rnr_ground_truth=DEMO_DATA_DIR / "cranfield-gt.csv",
        )
    )
    # Its ground truth lists each question's relevant answers: the others are incorrect, as R&R read it.
    collection_import(
        collection=collection,
        answers=answers,
        questions=questions,
        judgments=judgments,
        unlisted_incorrect=True,
        files=["cranfield-data.json", "cranfield-gt.csv"],
    )
    return collection


def demo_evaluation_ensure(*, collection: Collection) -> EvaluationRun | None:
    """Evaluate the default ranker's champion on the test questions here, unless the ranker has a run
    that succeeded or is under way. Returns the run made now (its status says how it went), else None.

    The run is started as the button starts one (``evaluation_start``: queued for the workers), then
    planned and evaluated in this process through the services a worker calls (``run_plan``,
    ``chunk_evaluate``), so the headline is there before the web server starts. The claims make the
    queued message a no-op when a worker picks it up later, and let a worker finish the run if this
    process dies half-way.
    """
    ranker = default_ranker(collection=collection)
    if ranker is None:
        return None
    wanted = [RunStatus.SUCCEEDED, RunStatus.PENDING, RunStatus.RUNNING]
    if EvaluationRun.objects.filter(ranker=ranker, status__in=wanted).exists():
        return None
    # The champion, the untrained fusion, reads the answers' vectors: without them it ranks by BM25 alone
    # (the first walk's headline was 0.340, BM25's, instead of the fusion's). With the demo's shipped
    # vectors (trainer.demo_vectors) the build encodes no answer.
    # Without them (no model), the evaluation ranks as any run without vectors does.
    with contextlib.suppress(EmbeddingUnavailable):
        embeddings_build_now(collection=collection, index=load_index(collection=collection))
    # A new ranker's first versions were just made: evaluating a new version is what VERSION runs are.
    run = evaluation_start(ranker=ranker, trigger=RunTrigger.VERSION)
    for chunk_id in run_plan(run_id=run.pk, worker=DEMO_WORKER):
        chunk_evaluate(chunk_id=chunk_id, worker=DEMO_WORKER, token=f"{DEMO_WORKER}-{chunk_id}")
    run.refresh_from_db()
    return run
