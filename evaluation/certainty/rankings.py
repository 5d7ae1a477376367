"""How each version ranks the test questions, top k (k at most ``MAX_K``).

A version ranks them as its latest successful evaluation recorded; a version never evaluated (a
challenger the training loop did not promote) ranks them now through its backend, cached per version and
collection state."""

from __future__ import annotations

import hashlib
import logging

from django.core.cache import cache
from django.db.models import Count, Max

from corpus.models import Answer, Collection, Question
from evaluation.models import EvaluationRun, QuestionResult
from rankers.backends import RankerError, RankQuery, get_backend
from rankers.models import RankerVersion

logger = logging.getLogger(__name__)

RANKINGS_CACHE_SECONDS = 60 * 60
MAX_K = 20


def certainty_k(collection: Collection) -> int:
    """The k of every certainty figure: the collection's NDCG@k, at most ``MAX_K``."""
    return max(1, min(collection.ndcg_k, MAX_K))


def _state_key(collection: Collection, version: RankerVersion) -> str:
    answers = Answer.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    questions = Question.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    state = f"{collection.pk}:{version.pk}:{collection.ndcg_k}:{answers}:{questions}"
    return "certainty:rankings:" + hashlib.sha256(state.encode()).hexdigest()


class RankingsUnavailable(Exception):
    """The version has no run covering the test questions and cannot rank them now."""


def version_rankings(
    *, collection: Collection, version: RankerVersion, question_ids: list[int]
) -> dict[int, list[str]]:
    """{test question id: answer external ids, best first, top k} for the version (see the module doc).

    Raises RankingsUnavailable when the rankings are neither in a run nor to be had from the ranker now:
    figures computed from empty rankings would read as a real 0.000."""
    k = certainty_k(collection)
    run = (
        EvaluationRun.objects.succeeded()
        .filter(ranker_version=version)
        .order_by("-finished_at", "-id")
        .first()
    )
    result: dict[int, list[str]] = {}
    if run is not None:
        for q, ranked in QuestionResult.objects.filter(run=run, question_id__in=question_ids).values_list(
            "question_id", "ranked_answer_ids"
        ):
            result[q] = list(ranked or [])[:k]
        if all(q in result for q in question_ids):
            return result
    key = _state_key(collection, version)
    cached = cache.get(key)
    if cached is None:
        cached = {}
        try:
            backend = get_backend(version.ranker, version)
            for q, external_id, text in Question.objects.filter(pk__in=question_ids).values_list(
                "id", "external_id", "text"
            ):
                cached[q] = backend.rank(RankQuery(external_id=external_id, text=text), k).ids[:k]
            cache.set(key, cached, RANKINGS_CACHE_SECONDS)
        except (RankerError, OSError, ValueError) as exc:
            logger.warning("version %s cannot rank the test questions now", version.pk, exc_info=True)
            raise RankingsUnavailable(str(exc)) from exc
    for q in question_ids:
        result.setdefault(q, cached.get(q, []))
    return result
