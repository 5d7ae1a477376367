"""An evaluation of an engine ranker runs exactly as one of any other kind: the same services, with the
stand-in engine serving the collection's answers (Elasticsearch and Solr shapes)."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.models import Question, Split
from evaluation.models import QuestionResult, RunStatus
from evaluation.services import score_rankings
from rankers.services import ranker_create
from tests.evaluation.conftest import ANSWERS, load_small_collection
from tests.evaluation.helpers import evaluate_inline
from tests.rankers.engine_support import es_config, solr_config
from tests.servers import engine_running

pytestmark = pytest.mark.django_db


@pytest.fixture
def served(collection):
    load_small_collection(collection)
    with engine_running({a: {"title": t, "text": b} for a, (t, b) in ANSWERS.items()}) as server:
        yield server


@pytest.mark.parametrize("make_config", [es_config, solr_config])
def test_engine_ranker_evaluation_scores_the_engine_rankings(collection, served, make_config):
    ranker = ranker_create(
        collection=collection, name="Engine", kind="engine", config=make_config(served.url)
    )

    run = evaluate_inline(ranker)

    assert run.status == RunStatus.SUCCEEDED, run.error
    results = (
        QuestionResult.objects.filter(run=run).select_related("question").order_by("question__external_id")
    )
    test_questions = Question.objects.filter(collection=collection, split=Split.TEST).order_by("external_id")
    expected = [[a for a, _ in served.documents.score(q.text)[:10]] for q in test_questions]
    assert [r.ranked_answer_ids for r in results] == expected
    assert expected[0][0] == "a1"  # "boundary layer flat plate": the answer with all four terms first
    assert len(served.requests) == len(expected)
    labels = [
        {a: g for a, g in zip(r.ranked_answer_ids, r.labels, strict=True) if g is not None} for r in results
    ]
    scored = score_rankings(run=run, rankings=expected, labels=labels)
    assert [r.dcg for r in results] == pytest.approx(list(scored.dcg))
    ndcg = [r.ndcg for r in results if r.ndcg is not None]
    assert run.ndcg_mean == pytest.approx(float(np.mean(ndcg)))


def test_engine_ranker_evaluation_records_the_engine_message(collection, served):
    served.faults.error_status = 401
    ranker = ranker_create(collection=collection, name="Engine", kind="engine", config=es_config(served.url))

    run = evaluate_inline(ranker)

    assert run.status == RunStatus.FAILED
    errors = set(QuestionResult.objects.filter(run=run).values_list("error", flat=True))
    assert errors == {
        f"Ranker error: engine at {served.url}/answers/_search answered 401 Unauthorized: "
        "unable to authenticate user [trainer]"
    }
