"""The run page's downloads: the TREC run file scores like the run itself under `manage.py score`."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import QuestionResult, RunStatus
from tests.evaluation.helpers import evaluate_inline

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(builtin_ranker):
    run = evaluate_inline(builtin_ranker)
    assert run.status == RunStatus.SUCCEEDED
    return run


def test_run_export_trec_run_scores_as_the_run_did(client, trainer, run, tmp_path):
    client.force_login(trainer)
    response = client.get(reverse("evaluation:run-export", args=[run.pk, "trec-run"]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="tiny-run-{run.pk}.run"'
    run_file = tmp_path / "run.txt"
    run_file.write_bytes(response.content)
    qrels = tmp_path / "qrels.txt"
    call_command("export_ground_truth", "tiny", "--format", "trec-qrels", "--split", "test", "-o", str(qrels))

    out = io.StringIO()
    call_command("score", "-q", "-m", "ndcg_cut.10", str(qrels), str(run_file), stdout=out)

    scored = {
        qid: float(value)
        for measure, qid, value in (line.split() for line in out.getvalue().splitlines())
        if qid != "all"
    }
    stored = {
        r.question.external_id: r.ndcg
        for r in QuestionResult.objects.filter(run=run).select_related("question")
        if r.ndcg is not None
    }
    assert stored  # the small collection has test questions with known good answers
    assert {q: round(scored[q], 4) for q in stored} == {q: round(v, 4) for q, v in stored.items()}


def test_run_export_csv_and_jsonl_have_every_question(client, trainer, run):
    client.force_login(trainer)
    as_csv = client.get(reverse("evaluation:run-export", args=[run.pk, "csv"]))
    as_jsonl = client.get(reverse("evaluation:run-export", args=[run.pk, "jsonl"]))

    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    objects = [json.loads(line) for line in as_jsonl.content.decode().splitlines()]
    assert [r["question_id"] for r in rows] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert [o["question_id"] for o in objects] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    by_id = {o["question_id"]: o for o in objects}
    result = QuestionResult.objects.get(run=run, question__external_id="q1")
    assert by_id["q1"]["ndcg"] == result.ndcg
    assert by_id["q1"]["ranked_answer_ids"] == result.ranked_answer_ids
    assert by_id["q6"]["ndcg"] is None  # no known good answer


def test_run_page_links_the_downloads(client, trainer, run):
    client.force_login(trainer)

    page = client.get(reverse("evaluation:run", args=[run.pk])).content.decode()

    assert reverse("evaluation:run-export", args=[run.pk, "trec-run"]) in page
    assert reverse("evaluation:run-export", args=[run.pk, "jsonl"]) in page


def test_run_export_refused_to_others_and_unknown_format_is_404(client, rater, outsider, trainer, run):
    url = reverse("evaluation:run-export", args=[run.pk, "csv"])
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(rater)
    assert client.get(url).status_code == 403
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(trainer)
    assert client.get(reverse("evaluation:run-export", args=[run.pk, "xml"])).status_code == 404
