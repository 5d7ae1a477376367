"""The dashboard separates questions that need ratings from those where the ranker does badly."""

import re

import pytest
from django.urls import reverse

from corpus.models import Question
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from tests.evaluation.test_views import login, text

pytestmark = pytest.mark.django_db

# question: (NDCG@10, judged@10, unrated in the top 10, error)
RESULTS = {
    "q1": (0.2, 0.1, 9, ""),  # low NDCG, but 9 of its 10 answers are unrated: needs ratings
    "q2": (0.4, 0.8, 2, ""),  # mostly rated and low: the ranker does badly
    "q3": (0.9, 0.5, 5, ""),  # half rated is not "mostly unrated"
    "q4": (None, None, 0, "Ranker error: boom"),  # failed: in neither list
    "q5": (0.3, 0.6, 4, ""),
    "q6": (None, 0.0, 3, ""),  # no known good answer: needs ratings
}


@pytest.fixture
def run(builtin_ranker) -> EvaluationRun:
    run = EvaluationRun.objects.create(
        ranker=builtin_ranker,
        collection=builtin_ranker.collection,
        status=RunStatus.SUCCEEDED,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
        questions_total=6,
        questions_done=6,
        ndcg_mean=0.45,
        ndcg_ci_low=0.2,
        ndcg_ci_high=0.7,
        accuracy_mean=0.5,
        judged_mean=0.4,
        unlabelled_in_top_k=23,
        no_good_answer_count=1,
        scored_count=4,
        label_count=14,
    )
    for external_id, (ndcg, judged, unrated, error) in RESULTS.items():
        QuestionResult.objects.create(
            run=run,
            question=Question.objects.get(external_id=external_id),
            ndcg=ndcg,
            judged=judged,
            unlabelled_in_top_k=unrated,
            accuracy_hit=None if error else bool(ndcg),
            error=error,
        )
    return run


def section(body: str, testid: str) -> str:
    """The dashboard's block ``testid``: a disclosure under "What to do next" (folded until opened)."""
    match = re.search(rf'<details id="[a-z-]+" data-testid="{testid}">(.*?)</details>', body)
    assert match, testid
    return match.group(1)


def rows(html: str) -> list[str]:
    return [
        re.sub(r"\s*<[^>]+>\s*", "|", row) for row in re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1])
    ]


def q(external_id: str) -> Question:
    return Question.objects.get(external_id=external_id)


def test_dashboard_needs_ratings_lists_undefined_and_mostly_unrated_questions(client, trainer, run):
    needs = section(
        text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))), "needs-ratings"
    )
    assert "This is missing ratings, not necessarily a bad ranker. Rate their answers first." in needs
    assert [re.sub(r"\|+", "|", r) for r in rows(needs)] == [
        "|helicopter rotor noise|No known good answer yet, so it has no NDCG@10.|Rate its answers|",
        "|boundary layer flat plate|9 of the 10 answers in its top 10 are unrated.|Rate its answers|",
    ]
    assert f'<a href="{reverse("rate-question", args=["tiny", q("q6").pk])}">Rate its answers</a>' in needs
    assert f'<a href="{reverse("rate-question", args=["tiny", q("q1").pk])}">Rate its answers</a>' in needs


def test_dashboard_ranker_does_badly_lists_only_mostly_rated_questions_worst_first(client, trainer, run):
    worst = section(text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))), "worst")
    assert [re.sub(r"\|+", "|", r) for r in rows(worst)] == [
        "|buckling of shells|0.300|yes|4|",
        "|supersonic shock waves|0.400|yes|2|",
        "|heat transfer hypersonic|0.900|yes|5|",
    ]
    assert f'href="{reverse("evaluation:question", args=[run.pk, q("q5").pk])}"' in worst
    assert "boundary layer flat plate" not in worst


def test_dashboard_without_questions_needing_ratings_leaves_the_section_out(client, trainer, run):
    QuestionResult.objects.filter(run=run, question__external_id__in=["q1", "q6"]).delete()
    body = text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"])))
    assert 'data-testid="needs-ratings"' not in body
    assert 'data-testid="worst"' in body
