"""A tiny collection whose term-overlap candidates are known exactly, and helpers for the rating views."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.utils import timezone

from corpus.models import Answer, Collection, Question, Split
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from rankers.builtin import clear_ranker_caches
from rankers.models import Ranker, RankerKind


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The candidate table is cached; ids repeat across tests, so every test starts from a clean cache."""
    cache.clear()
    yield
    cache.clear()


@dataclass
class Corpus:
    collection: Collection
    a: dict[str, Answer]
    q: dict[str, Question]


ANSWERS = {
    "d1": ("Lift of a wing", "Wing lift grows with the angle of attack."),
    "d2": ("Drag", "Drag on a wing at supersonic speed."),
    "d3": ("Heat transfer", "Heat transfer in a boundary layer."),
    "d4": ("Boundary layer", "Boundary layer transition on a flat plate."),
    "d5": ("Shock waves", "Shock waves at supersonic speed."),
    "d6": ("Unrelated", "Cooking pasta in salted water."),
}
# Term overlap gives q1 -> [d1, d2], q2 -> [d3, d4], q3 -> [d5, d2] (best first).
QUESTIONS = {
    "q1": ("How does wing lift depend on the angle of attack?", Split.TRAIN),
    "q2": ("What is the boundary layer heat transfer?", Split.TEST),
    "q3": ("Shock waves at supersonic speed", Split.TRAIN),
}


def build_corpus(collection: Collection) -> Corpus:
    # Agreement sampling is switched off unless a test asks for it, so targets are exactly 1.
    collection.overlap_fraction = 0.0
    collection.save(update_fields=["overlap_fraction"])
    answers = {
        key: Answer.objects.create(collection=collection, external_id=key, title=title, body=body)
        for key, (title, body) in ANSWERS.items()
    }
    questions = {
        key: Question.objects.create(collection=collection, external_id=key, text=text, split=split)
        for key, (text, split) in QUESTIONS.items()
    }
    return Corpus(collection, answers, questions)


@pytest.fixture
def corpus(collection) -> Corpus:
    return build_corpus(collection)


@pytest.fixture
def unreachable_ranker(collection) -> Ranker:
    """A default ranker nobody answers at (connection refused), so candidates fall back to term overlap."""
    return Ranker.objects.create(
        collection=collection,
        name="offline",
        kind=RankerKind.HTTP,
        config={"url": "http://127.0.0.1:9/rank", "retries": 0, "timeout": 1},
        is_default=True,
    )


def make_run(ranker: Ranker, results: dict[Question, tuple[list[str], float | None]]) -> EvaluationRun:
    """A finished evaluation whose per-question results are given as {question: (ranked ids, ndcg)}."""
    c = ranker.collection
    now = timezone.now()
    run = EvaluationRun.objects.create(
        ranker=ranker,
        collection=c,
        status=RunStatus.SUCCEEDED,
        ndcg_k=c.ndcg_k,
        gain_scheme=c.gain_scheme,
        discount=c.discount,
        relevance_threshold=c.relevance_threshold,
        accuracy_k=c.accuracy_k,
        questions_total=len(results),
        questions_done=len(results),
        started_at=now,
        finished_at=now,
    )
    for question, (ranked, ndcg) in results.items():
        QuestionResult.objects.create(
            run=run, question=question, ranked_answer_ids=ranked, labels=[None] * len(ranked), ndcg=ndcg
        )
    return run


HTMX = {"HTTP_HX_REQUEST": "true"}


def checked_stars(html: str) -> dict[int, int]:
    """{answer id: stars} of the checked radio buttons on a rating page."""
    return {int(a): int(s) for a, s in re.findall(r'name="stars-(\d+)"\s+value="(\d)" checked', html)}


@pytest.fixture
def builtin_ranker(collection, settings, tmp_path) -> Ranker:
    """The collection's default built-in (BM25) ranker, its index kept in a temporary MODEL_DIR."""
    settings.MODEL_DIR = tmp_path / "models"
    clear_ranker_caches()
    yield Ranker.objects.create(collection=collection, name="bm25", kind=RankerKind.BUILTIN, is_default=True)
    clear_ranker_caches()
