"""The dashboard and drilldown pages run a fixed number of SQL queries, however long the history."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from corpus.models import Question, Split
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from rankers.models import Ranker, RankerKind, RankerVersion

pytestmark = pytest.mark.django_db


def populate(collection, *, runs: int, questions: int) -> tuple[Ranker, EvaluationRun, EvaluationRun]:
    """A default ranker with `runs` successful runs (one version each); the last two have per-question results."""
    ranker = Ranker.objects.create(
        collection=collection, name="BM25", kind=RankerKind.BUILTIN, is_default=True
    )
    Ranker.objects.create(collection=collection, name="Other", kind=RankerKind.BUILTIN)
    versions = RankerVersion.objects.bulk_create(
        [RankerVersion(ranker=ranker, label=f"v{i}", label_count=i) for i in range(runs)]
    )
    start = timezone.now() - timezone.timedelta(days=runs)
    made = EvaluationRun.objects.bulk_create(
        [
            EvaluationRun(
                ranker=ranker,
                ranker_version=versions[i],
                collection=collection,
                status=RunStatus.SUCCEEDED,
                ndcg_k=10,
                gain_scheme="linear",
                discount="log2",
                relevance_threshold=1,
                accuracy_k=5,
                questions_total=questions,
                questions_done=questions,
                label_count=100 + i,
                ndcg_mean=0.5,
                ndcg_ci_low=0.4,
                ndcg_ci_high=0.6,
                accuracy_mean=0.7,
                judged_mean=0.5,
                unlabelled_in_top_k=50,
                no_good_answer_count=1,
                scored_count=questions - 1,
                finished_at=start,
            )
            for i in range(runs)
        ]
    )
    # created_at is auto_now_add: spread the history over days.
    for i, run in enumerate(made):
        EvaluationRun.objects.filter(pk=run.pk).update(created_at=start + timezone.timedelta(days=i))
    qs = Question.objects.bulk_create(
        [
            Question(collection=collection, external_id=f"tq{i}", text=f"question {i}", split=Split.TEST)
            for i in range(questions)
        ]
    )
    a, b = made[-2], made[-1]
    EvaluationRun.objects.filter(pk=b.pk).update(
        previous_run=a,
        delta=0.01,
        delta_ci_low=-0.02,
        delta_ci_high=0.04,
        p_value=0.4,
        verdict="within noise",
        comparison_count=questions - 1,
        previous_ndcg_mean=0.49,
    )
    for run in (a, b):
        QuestionResult.objects.bulk_create(
            [
                QuestionResult(
                    run=run,
                    question=q,
                    ranked_answer_ids=["x1", "x2"],
                    labels=[1, None],
                    dcg=1.0,
                    ideal_dcg=2.0,
                    ndcg=None if i == 0 else (i % 7) / 7,
                    accuracy_hit=bool(i % 2),
                    unlabelled_in_top_k=1,
                    judged=0.1,
                    ideal=[["x1", 1]],
                )
                for i, q in enumerate(qs)
            ]
        )
    a.refresh_from_db()
    b.refresh_from_db()
    return ranker, a, b


def pages(collection, a, b) -> list[str]:
    question = (
        QuestionResult.objects.filter(run=b, ndcg__isnull=False).order_by("question_id").first().question_id
    )
    return [
        reverse("evaluation:dashboard", args=[collection.slug]),
        reverse("evaluation:run", args=[b.pk]),
        reverse("evaluation:run", args=[b.pk]) + "?page=2",
        reverse("evaluation:question", args=[b.pk, question]),
        reverse("evaluation:run-progress", args=[b.pk]),
        reverse("evaluation:compare", args=[collection.slug]) + f"?a={a.pk}&b={b.pk}",
    ]


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries)


# Session, user, the collection with the membership role (one query; a run's pages: the run with its
# collection, then the membership role), then the page's own reads. The dashboard explains the change
# since the previous run in 4 more (that run, the labels' state, both runs' rankings, today's labels); the
# run and compare pages that follow, for the same two runs, find the figures cached (the labels' state only).
# The question page reads the raters' notes on its answers in one more. A full page's nav reads the user's
# memberships once (whether it shows the API and Tokens links: trainer.context_processors). The compare
# page's chooser lists the rankers' versions (with whether each was evaluated) besides the runs: one more.
# The question page: 7 of its 16 read the production log for its clicks (trainers only), once per log
# change (cached after: evaluation.selectors.clicks.implicit_judgments_cached). A trainer's dashboard looks for
# the collection's running online test ("What to do next" names it): one more.
EXPECTED = {"dashboard": 17, "run": 10, "run page 2": 10, "question": 16, "progress": 4, "compare": 9}


@pytest.mark.parametrize("role", ["trainer", "rater"])
def test_pages_run_constant_queries_for_small_and_large_history(client, make_user, collection, role):
    user = make_user("u", collection=collection, role=role)
    client.force_login(user)
    ranker, a, b = populate(collection, runs=3, questions=150)
    urls = pages(collection, a, b)
    small = {
        url: count_queries(client, url) for url in (urls if role == "trainer" else urls[:1] + urls[-2:-1])
    }
    if role == "trainer":
        assert list(small.values()) == list(EXPECTED.values())
    # Grow the history 100-fold and the questions 8-fold: the same number of queries.
    EvaluationRun.objects.all().delete()
    Question.objects.all().delete()
    ranker.delete()
    Ranker.objects.all().delete()
    ranker, a, b = populate(collection, runs=300, questions=1200)
    urls = pages(collection, a, b)
    large = {
        url: count_queries(client, url) for url in (urls if role == "trainer" else urls[:1] + urls[-2:-1])
    }
    assert list(large.values()) == list(small.values())


def test_dashboard_queries_asserted(client, trainer, collection, django_assert_num_queries):
    client.force_login(trainer)
    populate(collection, runs=50, questions=40)
    url = reverse("evaluation:dashboard", args=[collection.slug])
    with django_assert_num_queries(EXPECTED["dashboard"]):
        assert client.get(url).status_code == 200
