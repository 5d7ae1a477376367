"""A run's stored per-question values equal `manage.py score` (trec_eval semantics) on the same labels and rankings."""

import io
import math

import pytest
from django.core.management import call_command

from evaluation.models import QuestionResult, RunStatus
from rankers.models import Ranker, RankerKind
from ratings.selectors import labels_by_question
from tests.evaluation.helpers import evaluate_inline

pytestmark = pytest.mark.django_db


def write_trec_files(run, tmp_path):
    """Qrels of every label of the run's questions, and the run's rankings as a TREC run (scores by rank)."""
    results = list(
        QuestionResult.objects.filter(run=run, error="").select_related("question").order_by("question_id")
    )
    labels = labels_by_question(question_ids=[r.question_id for r in results])
    qrels, ranking = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with qrels.open("w") as f:
        for r in results:
            for answer_id, gain in sorted(labels[r.question_id].items()):
                f.write(f"{r.question.external_id} 0 {answer_id} {gain}\n")
    with ranking.open("w") as f:
        for r in results:
            for rank, answer_id in enumerate(r.ranked_answer_ids, 1):
                f.write(f"{r.question.external_id} Q0 {answer_id} {rank} {1000 - rank} rt\n")
    return results, qrels, ranking


def score(qrels, ranking, *args) -> dict[tuple[str, str], float]:
    out = io.StringIO()
    call_command(
        "score", "-q", "-m", "ndcg_cut.10", "-m", "success.5", *args, str(qrels), str(ranking), stdout=out
    )
    values = {}
    for line in out.getvalue().splitlines():
        measure, qid, value = line.split()
        values[(measure, qid)] = float(value)
    return values


def test_cranfield_run_per_question_values_equal_score_command(model_dir, tmp_path, demo_load):
    collection = demo_load()
    ranker = Ranker.objects.create(
        collection=collection, name="BM25", kind=RankerKind.BUILTIN, is_default=True
    )
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.SUCCEEDED, run.error
    results, qrels, ranking = write_trec_files(run, tmp_path)
    assert len(results) == run.questions_total == 57
    values = score(qrels, ranking)
    compared = 0
    for r in results:
        qid = r.question.external_id
        if not r.ranked_answer_ids or ("ndcg_cut_10", qid) not in values:
            continue  # trec_eval skips questions without labels or without a ranking
        # trec_eval scores "no known good answer" as 0; the run leaves it undefined (None).
        expected_ndcg = values[("ndcg_cut_10", qid)]
        assert (0.0 if r.ndcg is None else round(r.ndcg, 4)) == pytest.approx(expected_ndcg, abs=5e-5), qid
        assert float(r.accuracy_hit) == values[("success_5", qid)], qid
        compared += 1
    assert compared >= 50
    # The run's mean uses only questions with a known good answer, so it equals score's mean over those.
    scored = [r.ndcg for r in results if r.ndcg is not None]
    assert run.ndcg_mean == pytest.approx(math.fsum(scored) / len(scored))
    assert run.scored_count == len(scored)


def test_small_run_matches_score_with_relevance_level(small, tmp_path):
    small.relevance_threshold = 2
    small.save()
    ranker = Ranker.objects.create(collection=small, name="BM25", kind=RankerKind.BUILTIN)
    run = evaluate_inline(ranker)
    results, qrels, ranking = write_trec_files(run, tmp_path)
    values = score(qrels, ranking, "-l", "2")
    assert len(values) == 2 * 6
    for r in results:
        qid = r.question.external_id
        if ("success_5", qid) in values:
            assert float(r.accuracy_hit) == values[("success_5", qid)], qid
            assert (0.0 if r.ndcg is None else round(r.ndcg, 4)) == pytest.approx(
                values[("ndcg_cut_10", qid)], abs=5e-5
            )
