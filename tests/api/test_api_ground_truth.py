"""GET /api/collections/{slug}/ground-truth/: formats, splits, and round trips through import."""

from __future__ import annotations

import pytest

from corpus.formats.grades import grade_map_from_spec
from corpus.formats.ground_truth_jsonl import parse_ground_truth_jsonl
from corpus.formats.rnr import parse_rnr_ground_truth
from corpus.formats.trec import parse_trec_qrels
from corpus.services import collection_create
from ratings.selectors import ground_truth_rows
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import collection_import

pytestmark = pytest.mark.django_db
URL = "/api/collections/tiny/ground-truth/"


def test_api_ground_truth_default_is_train_split_as_json(api_data, caller):
    response = caller("rater_token").get(URL)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == [
        {
            "question_id": "q1",
            "question": "boundary layer",
            "split": "train",
            "answer_id": "a1",
            "stars": 3,
            "rater_count": 1,
            "disagreement": 0,
            "judge_count": 0,
        },
        {
            "question_id": "q1",
            "question": "boundary layer",
            "split": "train",
            "answer_id": "a2",
            "stars": 0,
            "rater_count": 1,
            "disagreement": 0,
            "judge_count": 0,
        },
    ]


def test_api_ground_truth_trainer_gets_test_and_all(api_data, caller):
    client = caller("trainer_token")

    assert [r["question_id"] for r in client.get(URL + "?split=test").json()] == ["q2"]
    assert [r["question_id"] for r in client.get(URL + "?split=all").json()] == ["q1", "q1", "q2"]


@pytest.mark.parametrize("kind", ["rater", "rater_token"])
@pytest.mark.parametrize("split", ["test", "all"])
@pytest.mark.parametrize("fmt", ["json", "jsonl", "rnr-csv", "trec-qrels"])
def test_api_ground_truth_rater_is_refused_test_split(api_data, caller, kind, split, fmt):
    response = caller(kind).get(URL + f"?split={split}&format={fmt}")

    assert response.status_code == 403
    assert response.json() == {
        "detail": f"split={split} needs the trainer role: rankers must not train on test labels."
    }


def test_api_ground_truth_rater_token_gets_train_split(api_data, caller):
    response = caller("rater_token").get(URL)

    assert [(r["question_id"], r["answer_id"], r["split"]) for r in response.json()] == [
        ("q1", "a1", "train"),
        ("q1", "a2", "train"),
    ]


def test_api_ground_truth_text_formats(api_data, caller):
    client = caller("trainer")

    qrels = client.get(URL + "?format=trec-qrels")
    csv = client.get(URL + "?format=rnr-csv")
    jsonl = client.get(URL + "?format=jsonl")

    assert (qrels.status_code, qrels["Content-Type"]) == (200, "text/plain; charset=utf-8")
    assert qrels.content.decode() == "q1 0 a1 3\nq1 0 a2 0\n"
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    assert csv.content.decode() == '"boundary layer","a1","3","a2","0"\n'
    assert csv["Content-Disposition"] == 'attachment; filename="tiny-train.csv"'
    assert jsonl.content.decode().count("\n") == 2


@pytest.mark.parametrize(
    ("query", "errors"),
    [
        ("?format=xml", {"format": ["format must be json, jsonl, rnr-csv or trec-qrels, not 'xml'."]}),
        ("?split=dev", {"split": ["split must be train, test or all, not 'dev'."]}),
    ],
)
def test_api_ground_truth_bad_parameter_is_400(api_data, caller, query, errors):
    response = caller("trainer").get(URL + query)

    assert (response.status_code, response.json()) == (400, errors)


@pytest.mark.parametrize("fmt", ["rnr-csv", "trec-qrels", "jsonl"])
def test_api_ground_truth_export_round_trips_through_import(caller, trainer, tmp_path, fmt, demo_load):
    demo = demo_load()
    from corpus.services import membership_set

    membership_set(collection=demo, user=trainer, role="trainer")
    exported = caller("trainer").get(f"/api/collections/cranfield/ground-truth/?format={fmt}&split=all")
    assert exported.status_code == 200
    path = tmp_path / f"export.{fmt}"
    path.write_bytes(exported.content)

    # A fresh collection with the same answers and questions, and only the exported labels.
    copy = collection_create(name="Copy", slug="copy")
    answers, questions, _ = _demo_records()
    if fmt == "rnr-csv":
        _, judgments = parse_rnr_ground_truth(path, grade_map=grade_map_from_spec("identity"))
    elif fmt == "trec-qrels":
        judgments = parse_trec_qrels(path, grade_map=grade_map_from_spec("identity"))
    else:
        _, judgments = parse_ground_truth_jsonl(path)
    collection_import(collection=copy, answers=answers, questions=questions, judgments=judgments)

    def labels(collection):
        return sorted((r.question_id, r.answer_id, r.stars) for r in ground_truth_rows(collection=collection))

    assert len(labels(demo)) == 1197
    assert labels(copy) == labels(demo)


def _demo_records():
    from corpus.services import ImportFiles, parse_import_files
    from trainer.services import DEMO_DATA_DIR

    return parse_import_files(
        ImportFiles(
            rnr_documents=DEMO_DATA_DIR / "cranfield-data.json",
            rnr_ground_truth=DEMO_DATA_DIR / "cranfield-gt.csv",
        )
    )
