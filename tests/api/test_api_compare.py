"""GET /api/collections/{slug}/compare/?run=…: who may, what it answers, and bad run lists."""

import pytest

from evaluation.models import RunTrigger
from evaluation.services import evaluation_start
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


@pytest.fixture
def two_runs(api_data, trainer):
    # A second ranker's run (a ranker has one run in progress at a time).
    second = evaluation_start(ranker=api_data.builtin, trigger=RunTrigger.API, created_by=trainer)
    assert second.pk != api_data.run.pk
    return api_data.run, second


@pytest.mark.parametrize("who", CALLERS)
def test_api_compare_authz(two_runs, caller, who):
    a, b = two_runs

    response = caller(who).get(f"/api/collections/tiny/compare/?run={a.pk}&run={b.pk}")

    assert response.status_code == (401, 403, 200, 403, 200, 404)[CALLERS.index(who)], response.content[:300]
    if response.status_code != 200:
        assert set(response.json()) == {"detail"}


def test_api_compare_answers_runs_pairs_and_matrix(two_runs, caller):
    a, b = two_runs

    body = caller("trainer").get(f"/api/collections/tiny/compare/?run={b.pk}&run={a.pk}").json()

    assert body["k"] == 10
    assert [r["id"] for r in body["runs"]] == [a.pk, b.pk]  # oldest first
    assert [r["ndcg_rated_today"] for r in body["runs"]] == [None, None]  # pending runs: no results yet
    assert body["pairs"] == [
        {
            "a": a.pk,
            "b": b.pk,
            "difference": None,
            "ci_low": None,
            "ci_high": None,
            "p_value": None,
            "p_holm": None,
            "verdict": "",
            "questions": 0,
            "winners": 0,
            "losers": 0,
            "ties": 0,
            "biggest_winners": [],
            "biggest_losers": [],
        }
    ]
    assert body["questions"] == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("", "Give 2 to 6 run ids, not 0."),
        ("?run=RUN", "Give 2 to 6 run ids, not 1."),
        ("?run=RUN&run=abc", "No evaluation run 'abc' in collection 'tiny'."),
        ("?run=RUN&run=RUN", "Each run can be compared once."),
        ("?" + "&".join(f"run={i}" for i in range(7)), "Give 2 to 6 run ids, not 7."),
    ],
)
def test_api_compare_bad_run_lists_are_400_naming_run(two_runs, caller, params, message):
    response = caller("trainer").get(
        "/api/collections/tiny/compare/" + params.replace("RUN", str(two_runs[0].pk))
    )

    assert (response.status_code, response.json()) == (400, {"run": [message]})
