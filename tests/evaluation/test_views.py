import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from corpus.models import Answer, Question, Role
from corpus.services import membership_set
from evaluation.models import EvaluationRun, QuestionResult, RunStatus, RunTrigger
from evaluation.selectors import signed
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.models import Rating
from ratings.services import rating_record
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import evaluate_inline
from tests.evaluation.test_services import RANKINGS, many_questions

pytestmark = pytest.mark.django_db

# Compared with RANKINGS: q1 gets worse (its best answer drops out), q2 and q4 better.
RANKINGS_V2 = {**RANKINGS, "q1": ["a3", "a2"], "q4": ["a4", "a8"], "q2": ["a2", "a7", "a8"]}


@pytest.fixture
def evaluated(small, fake_ranker_server):
    """An http ranker with two successful runs (v1, then v2) on the small collection."""
    server = fake_ranker_server(rankings=RANKINGS)
    ranker = http_ranker(small, server.url, name="Service")
    ranker.is_default = True
    ranker.save()
    RankerVersion.objects.create(ranker=ranker, label="v1")
    first = evaluate_inline(ranker)
    server.rankings = RANKINGS_V2
    RankerVersion.objects.create(ranker=ranker, label="v2")
    second = evaluate_inline(ranker)
    assert (first.status, second.status) == (RunStatus.SUCCEEDED, RunStatus.SUCCEEDED)
    return ranker, first, second


def login(client: Client, user) -> Client:
    client.force_login(user)
    return client


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


# ----------------------------------------------------------------------------------------- index


def test_index_anonymous_redirects_to_login(client):
    response = client.get(reverse("evaluation:index"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_index_lists_member_collections_only(client, rater, small, other_collection):
    body = text(login(client, rater).get(reverse("evaluation:index")))
    assert reverse("evaluation:dashboard", args=["tiny"]) in body
    assert reverse("evaluation:dashboard", args=["other"]) not in body


# ----------------------------------------------------------------------------------------- dashboard


def test_dashboard_anonymous_redirects_to_login(client, small):
    response = client.get(reverse("evaluation:dashboard", args=["tiny"]))
    assert response.status_code == 302


def test_dashboard_non_member_gets_404(client, outsider, evaluated):
    assert login(client, outsider).get(reverse("evaluation:dashboard", args=["tiny"])).status_code == 404


def test_dashboard_unknown_collection_gets_404(client, trainer):
    assert login(client, trainer).get(reverse("evaluation:dashboard", args=["nope"])).status_code == 404


def test_dashboard_trainer_sees_headline_change_verdict_and_warnings(client, trainer, evaluated):
    ranker, first, second = evaluated
    response = login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))
    assert response.status_code == 200
    body = text(response)
    assert f'data-testid="headline">{second.ndcg_mean:.3f}<' in body
    # One format per figure: accuracy@5 as a 0–1 figure like NDCG@10, never a percentage.
    assert f"<dt>Accuracy@5</dt><dd>{second.accuracy_mean:.3f}</dd>" in body
    assert "%</strong> as good as" not in body
    # No rating between the runs: the whole change is the ranker's, between two named versions.
    total = signed(second.ndcg_mean - first.ndcg_mean)
    assert f'data-testid="change-total">{total}</span> since the previous run' in body
    assert "+0.000: new ratings changed what we know (ranker unchanged)" in body
    assert (
        f"{total}: version v1 → version v2; NDCG@10 on rated answers {signed(second.delta)} "
        '(<strong class="verdict">within noise</strong>, p = ' in body
    )
    assert "version v2" in body
    # judged@10 is 13% here: the warning counts the unrated answers and links to the rating queue.
    assert second.judged_mean < 0.9
    n = second.unlabelled_in_top_k
    assert f"{n} answers in the test questions' top 10 are unrated</strong> — " in body
    assert f'<a href="{reverse("rate-next", args=["tiny"])}">rate them</a>' in body
    assert "1 test question has no known good answer" in body
    q6 = Question.objects.get(external_id="q6")
    assert reverse("rate-question", args=["tiny", q6.pk]) in body
    # Worst questions link to the drilldown; the run button is there.
    worst = QuestionResult.objects.filter(run=second, ndcg__isnull=False).order_by("ndcg").first()
    assert reverse("evaluation:question", args=[second.pk, worst.question_id]) in body
    assert "Run evaluation" in body
    assert reverse("evaluation:compare", args=["tiny"]) in body
    assert reverse("rating-progress", args=["tiny"]) in body


def test_dashboard_chart_data_has_both_series_and_point_labels(client, trainer, evaluated):
    ranker, first, second = evaluated
    response = login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))
    data = json.loads(
        re.search(
            r'<script id="history-data" type="application/json">(.*?)</script>', response.content.decode()
        ).group(1)
    )
    assert [(p["run"], p["version"], p["labels"]) for p in data] == [
        (first.pk, "v1", 14),
        (second.pk, "v2", 14),
    ]
    assert [p["ndcg"] for p in data] == [first.ndcg_mean, second.ndcg_mean]
    assert [p["accuracy"] for p in data] == [first.accuracy_mean, second.accuracy_mean]
    body = text(response)
    # Without JavaScript the chart is a table (open); the chart library is vendored, not from a CDN.
    assert '<details class="history-table" open>' in body
    # The chart's legend names the measures with the collection's k, as the table does.
    assert 'data-ndcg-label="NDCG@10" data-accuracy-label="Accuracy@5"' in body
    assert '<th scope="col" class="num">NDCG@10</th><th scope="col" class="num">Accuracy@5</th>' in body
    assert "/static/vendor/uplot/uPlot.iife.min.js" in body
    assert "https://" not in re.sub(r'href="https://[^"]*"', "", body.split("<main")[1])


def test_dashboard_rater_sees_simplified_version_with_contribution(client, rater, evaluated):
    ranker, first, second = evaluated
    for q, a in [("q1", "a2"), ("q7", "a1")]:
        rating_record(
            rater=rater,
            question=Question.objects.get(external_id=q),
            answer=Answer.objects.get(external_id=a),
            stars=1,
        )
    body = text(login(client, rater).get(reverse("evaluation:dashboard", args=["tiny"])))
    assert f'data-testid="headline">{second.ndcg_mean:.3f}<' in body
    assert 'id="history-data"' in body
    # The counts the dashboard reads itself, then htmx brings the card with the questions waiting.
    assert (
        'data-testid="contribution">You have rated <strong>2</strong> answers in this collection, '
        "<strong>2</strong> of them in the last 7 days.</p>"
    ) in body
    assert "1 of your ratings is for test questions" in body
    url = reverse("rate-contribution", args=["tiny"])
    assert f'hx-get="{url}" hx-trigger="load" hx-swap="outerHTML"' in body
    assert f'data-testid="rate-next-question" href="{reverse("rate-next", args=["tiny"])}"' in body
    # No versions' probabilities or statistics: the "How sure are we?" panel is the trainers'.
    assert reverse("evaluation:certainty", args=["tiny"]) not in body
    assert "95% confidence interval" not in body and "bootstrap" not in body
    assert "Run evaluation" not in body
    assert "rate them" not in body
    assert "Where the ranker does badly" not in body
    assert "Questions that need ratings" not in body
    assert reverse("evaluation:run", args=[second.pk]) not in body


def test_dashboard_without_ranker_says_so(client, trainer, small):
    body = text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"])))
    assert "This collection has no ranker yet" in body


def test_dashboard_first_run_has_no_change_yet(client, trainer, builtin_ranker):
    evaluate_inline(builtin_ranker)
    body = text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"])))
    assert "This is the ranker's first successful evaluation" in body


def test_dashboard_lists_failed_run_with_reason_but_not_in_history(client, trainer, evaluated, fast_retries):
    ranker, first, second = evaluated
    ranker.config = {"url": "http://127.0.0.1:1/rank", "retries": 0}
    ranker.save()
    failed = evaluate_inline(ranker)
    response = login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))
    body = text(response)
    assert failed.status == RunStatus.FAILED
    assert "6 of 6 attempted, 6 failed, 0 not attempted. First error: Ranker unavailable: ranker at" in body
    assert f'data-testid="headline">{second.ndcg_mean:.3f}<' in body
    assert len(response.context["chart"]) == 2


def test_dashboard_other_ranker_by_query_string(client, trainer, evaluated):
    ranker, first, second = evaluated
    other = Ranker.objects.create(collection=ranker.collection, name="Zeta", kind=RankerKind.BUILTIN)
    body = text(
        login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]) + f"?ranker={other.pk}")
    )
    assert "No successful evaluation of <strong>Zeta</strong> yet." in body
    assert (
        login(client, trainer)
        .get(reverse("evaluation:dashboard", args=["tiny"]) + "?ranker=999999")
        .status_code
        == 404
    )


# ----------------------------------------------------------------------------------------- starting a run


def start_url(ranker) -> str:
    return reverse("evaluation:run-start", args=[ranker.collection.slug, ranker.pk])


def test_run_start_anonymous_redirects_and_creates_nothing(client, builtin_ranker):
    response = client.post(start_url(builtin_ranker))
    assert response.status_code == 302
    assert EvaluationRun.objects.count() == 0


def test_run_start_non_member_gets_404(client, outsider, builtin_ranker):
    assert login(client, outsider).post(start_url(builtin_ranker)).status_code == 404
    assert EvaluationRun.objects.count() == 0


def test_run_start_rater_gets_403(client, rater, builtin_ranker):
    assert login(client, rater).post(start_url(builtin_ranker)).status_code == 403
    assert EvaluationRun.objects.count() == 0


def test_run_start_get_not_allowed(client, trainer, builtin_ranker):
    assert login(client, trainer).get(start_url(builtin_ranker)).status_code == 405


def test_run_start_ranker_of_other_collection_gets_404(client, trainer, builtin_ranker, other_collection):
    other = Ranker.objects.create(collection=other_collection, name="X", kind=RankerKind.BUILTIN)
    url = reverse("evaluation:run-start", args=["tiny", other.pk])
    assert login(client, trainer).post(url).status_code == 404


def test_run_start_without_csrf_token_is_refused(trainer, builtin_ranker):
    client = Client(enforce_csrf_checks=True)
    client.force_login(trainer)
    assert client.post(start_url(builtin_ranker)).status_code == 403
    assert EvaluationRun.objects.count() == 0


def test_run_start_trainer_queues_run_and_redirects(
    client, trainer, builtin_ranker, broker_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = login(client, trainer).post(start_url(builtin_ranker))
    assert response.status_code == 303
    assert (
        response["Location"]
        == reverse("evaluation:dashboard", args=["tiny"]) + f"?ranker={builtin_ranker.pk}"
    )
    run = EvaluationRun.objects.get()
    assert (run.status, run.trigger, run.created_by) == (RunStatus.PENDING, RunTrigger.UI, trainer)
    assert broker_queue.messages() == [{"task": "evaluation.run", "kwargs": {"run_id": run.pk}}]
    # The dashboard now shows the live progress bar.
    body = text(client.get(response["Location"]))
    assert 'hx-trigger="every 1s"' in body
    assert (
        f"Evaluation of <strong>{run.what_text}</strong> queued at {run.since_text}, waiting for a worker…"
        in body
    )
    assert (
        '<button type="submit" class="primary" disabled aria-describedby="run-busy">Run evaluation</button>'
        in body
    )


def test_run_start_htmx_returns_polling_progress_bar(client, trainer, builtin_ranker):
    response = login(client, trainer).post(start_url(builtin_ranker), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    run = EvaluationRun.objects.get()
    body = text(response)
    assert body.lstrip().startswith('<div id="run-control">')
    assert f'<div id="run-progress-{run.pk}"' in body
    assert (
        f'hx-get="{reverse("evaluation:run-progress", args=[run.pk])}?reload=1" hx-trigger="every 1s"' in body
    )


def test_run_start_broker_down_gives_clear_503_and_ratings_still_save(
    client, trainer, builtin_ranker, dead_broker
):
    response = login(client, trainer).post(start_url(builtin_ranker))
    assert response.status_code == 503
    assert "The evaluation could not be queued: the task queue (Redis) is not reachable" in text(response)
    assert EvaluationRun.objects.count() == 0
    htmx = client.post(start_url(builtin_ranker), HTTP_HX_REQUEST="true")
    assert htmx.status_code == 503
    assert text(htmx).startswith('<p class="error" role="alert">The evaluation could not be queued')
    rating = rating_record(
        rater=trainer,
        question=Question.objects.get(external_id="q1"),
        answer=Answer.objects.get(external_id="a2"),
        stars=2,
    )
    assert Rating.objects.filter(pk=rating.pk, stars=2).exists()


# ----------------------------------------------------------------------------------------- progress


def test_progress_of_running_run_polls(client, rater, builtin_ranker):
    run = EvaluationRun.objects.create(
        ranker=builtin_ranker,
        collection=builtin_ranker.collection,
        status=RunStatus.RUNNING,
        questions_total=40,
        questions_done=10,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
    )
    body = text(login(client, rater).get(reverse("evaluation:run-progress", args=[run.pk])))
    assert 'hx-trigger="every 1s"' in body
    assert '<span data-testid="progress-count">10 of 40</span> (25%)' in body
    assert '<progress max="40" value="10">' in body


def test_progress_of_finished_run_stops_polling_and_refreshes_page(client, trainer, evaluated):
    ranker, first, second = evaluated
    url = reverse("evaluation:run-progress", args=[second.pk])
    response = login(client, trainer).get(url + "?reload=1", HTTP_HX_REQUEST="true")
    assert "hx-trigger" not in text(response)
    assert response["HX-Refresh"] == "true"
    assert "Evaluation finished: NDCG@10" in text(response)


def test_progress_non_member_gets_404(client, outsider, evaluated):
    ranker, first, second = evaluated
    assert (
        login(client, outsider).get(reverse("evaluation:run-progress", args=[second.pk])).status_code == 404
    )


# ----------------------------------------------------------------------------------------- run and question pages


def test_run_page_lists_questions_worst_first(client, trainer, evaluated):
    ranker, first, second = evaluated
    response = login(client, trainer).get(reverse("evaluation:run", args=[second.pk]))
    assert response.status_code == 200
    listed = [r.question.external_id for r in response.context["page"].object_list]
    expected = list(
        QuestionResult.objects.filter(run=second, ndcg__isnull=False)
        .order_by("ndcg", "question_id")
        .values_list("question__external_id", flat=True)
    )
    assert listed == [*expected, "q6"]
    assert "no known good answer" in text(response)


def test_run_page_rater_gets_403_and_non_member_404(client, rater, outsider, evaluated):
    ranker, first, second = evaluated
    assert login(client, rater).get(reverse("evaluation:run", args=[second.pk])).status_code == 403
    assert login(client, outsider).get(reverse("evaluation:run", args=[second.pk])).status_code == 404
    assert client.get(reverse("evaluation:run", args=[999999])).status_code == 404


def test_run_page_of_failed_run_shows_reason_and_failed_questions(client, trainer, small, fast_retries):
    ranker = http_ranker(small, "http://127.0.0.1:1/rank", retries=2)
    run = evaluate_inline(ranker)
    body = text(login(client, trainer).get(reverse("evaluation:run", args=[run.pk])))
    assert "Evaluation failed: 6 of 6 test questions (100%) could not be ranked" in body
    assert "cannot be reached" in body and "(3 attempts)" in body


def test_run_page_of_stopped_run_says_attempted_failed_not_attempted_and_first_error(
    client, trainer, fake_ranker_server, fast_retries, settings
):
    settings.EVALUATION_CHUNK_SIZE = 3
    collection = many_questions(40)
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    server = fake_ranker_server(rankings={}, fail={f"t{i}" for i in range(1, 41)})
    run = evaluate_inline(http_ranker(collection, server.url))
    login(client, trainer)
    body = text(client.get(reverse("evaluation:run", args=[run.pk])))
    assert "Evaluation failed: Stopped after attempting 3 of 40 test questions" in body
    outcome = body.split('data-testid="run-outcome">')[1].split("</dl>")[0]
    assert [" ".join(re.sub(r"<[^>]+>", " ", d).split()) for d in outcome.split("<div>")[1:]] == [
        "Attempted 3 of 40 test questions the ranker was asked",
        "Failed 3 of those, not ranked (listed below with their errors)",
        "Not attempted 37 never asked: the run stopped once it could no longer succeed",
    ]
    assert f'First error: <span class="error">Ranker unavailable: ranker at {server.url} answered 500' in body
    dashboard = text(client.get(reverse("evaluation:dashboard", args=[collection.slug])))
    assert (
        "3 of 40 attempted, 3 failed, 37 not attempted. First error: Ranker unavailable: ranker at"
        in dashboard
    )


def question_url(run, external_id: str) -> str:
    return reverse("evaluation:question", args=[run.pk, Question.objects.get(external_id=external_id).pk])


def test_question_page_shows_top_k_with_stars_and_gains_beside_ideal(client, trainer, evaluated):
    ranker, first, second = evaluated
    response = login(client, trainer).get(question_url(first, "q1"))
    assert response.status_code == 200
    top, ideal = response.context["top"], response.context["ideal"]
    assert [(r.answer_id, r.label, r.stars, r.gain) for r in top] == [
        ("a3", 1, "★☆☆", 1.0),
        ("a1", 3, "★★★", 3.0),
        ("a2", None, "unrated", 0.0),
    ]
    assert [(r.answer_id, r.gain) for r in ideal] == [("a1", 3.0), ("a5", 2.0), ("a3", 1.0)]
    assert top[1].contribution == pytest.approx(3 / 1.5849625)
    body = text(response)
    assert "Heat transfer" in body and "Turbulent layer" in body
    assert reverse("rate-question", args=["tiny", Question.objects.get(external_id="q1").pk]) in body
    assert "Why the two disagree" not in body  # a hit with NDCG 0.61: they agree


def test_question_page_explains_hit_with_low_ndcg(client, trainer, evaluated):
    ranker, first, second = evaluated
    # v2 ranks a3 (1 star) first and drops a1 (3 stars): a hit for accuracy@5, NDCG 0.25.
    response = login(client, trainer).get(question_url(second, "q1"))
    explanation = response.context["explanation"]
    assert explanation.startswith(
        "Accuracy@5 counts this question as a success because the answer at rank 1 is rated 1 star"
    )
    assert "NDCG@10 is only 0.210 because" in explanation


def test_question_page_explains_miss_with_some_ndcg(client, trainer, evaluated):
    ranker, first, second = evaluated
    explanation = login(client, trainer).get(question_url(first, "q3")).context["explanation"]
    assert explanation == (
        "Accuracy@5 counts this question as a miss: no answer in the top 5 is rated at least 1 star. "
        "NDCG@10 is still 0.356 because a relevant answer appears at rank 6; NDCG gives it credit, less the "
        "lower it is ranked."
    )


def test_question_page_marks_unknown_answer_ids(client, trainer, evaluated):
    ranker, first, second = evaluated
    body = text(login(client, trainer).get(question_url(first, "q4")))
    assert 'zz</span> <span class="error">(not an answer of this collection)</span>' in body.replace(
        "  ", " "
    )


def test_question_page_rater_403_and_wrong_question_404(client, rater, trainer, evaluated):
    ranker, first, second = evaluated
    assert login(client, rater).get(question_url(first, "q1")).status_code == 403
    train_question = Question.objects.get(external_id="q7")
    url = reverse("evaluation:question", args=[first.pk, train_question.pk])
    assert login(client, trainer).get(url).status_code == 404


# ----------------------------------------------------------------------------------------- compare


def test_compare_two_runs_winners_and_losers_first(client, trainer, evaluated):
    ranker, first, second = evaluated
    url = reverse("evaluation:compare", args=["tiny"]) + f"?a={first.pk}&b={second.pk}"
    response = login(client, trainer).get(url)
    assert response.status_code == 200
    winners = [(d.external_id, round(d.delta, 4)) for d in response.context["winners"]]
    losers = [(d.external_id, round(d.delta, 4)) for d in response.context["losers"]]
    assert [w[0] for w in winners] == ["q4"]
    assert [loser[0] for loser in losers] == ["q1"]
    assert winners[0][1] == pytest.approx(1 - 2 / (3 + 2 / 1.5849625), abs=1e-4)
    assert response.context["unchanged"] == 3
    assert [d.external_id for d in response.context["unpaired"]] == ["q6"]


def test_compare_rejects_runs_of_other_collection_with_400(client, trainer, evaluated, other_collection):
    ranker, first, second = evaluated
    url = reverse("evaluation:compare", args=["tiny"])
    assert login(client, trainer).get(url + f"?a={first.pk}&b=abc").status_code == 400
    assert client.get(url + f"?a={first.pk}&b=999999").status_code == 400
    assert "Choose two evaluation runs of this collection" in text(client.get(url + "?a=1"))


def test_compare_rater_gets_403(client, rater, evaluated):
    assert login(client, rater).get(reverse("evaluation:compare", args=["tiny"])).status_code == 403


def test_dashboard_chart_marks_champion_changes_with_a_table_view(client, trainer, evaluated):
    from rankers.services import version_promote

    ranker, first, second = evaluated
    v1, v2 = (RankerVersion.objects.get(ranker=ranker, label=label) for label in ("v1", "v2"))
    version_promote(version=v1, changed_by=None, reason="policy")
    version_promote(version=v2, changed_by=trainer, reason="by hand")

    response = login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"]))

    marks = json.loads(
        re.search(
            r'<script id="history-changes" type="application/json">(.*?)</script>', response.content.decode()
        ).group(1)
    )
    assert [(m["text"], m["by"]) for m in marks] == [("v1", "policy"), ("v1 → v2", "tom")]
    body = text(response)
    assert "Champion changes (2), the dashed lines on the chart" in body
    assert f"{marks[1]['date']}: v1 → v2, by tom" in body


def test_question_page_rater_gets_no_test_labels(client, rater, evaluated):
    ranker, first, second = evaluated
    result = first.question_results.select_related("question").first()

    response = login(client, rater).get(reverse("evaluation:question", args=[first.pk, result.question_id]))

    assert (result.question.split, response.status_code) == ("test", 403)
    assert (
        "Only the collection&#x27;s trainers see the labels of test questions." in response.content.decode()
    )


def test_run_page_says_at_the_top_when_the_ranker_returned_unknown_answer_ids(client, trainer, evaluated):
    ranker, first, second = evaluated

    body = text(login(client, trainer).get(reverse("evaluation:run", args=[first.pk])))

    assert (
        '<p class="warning" role="alert" data-testid="unknown-ids">The ranker returned 1 answer id that this '
        "collection does not have, on 1 of 6 questions (for example zz)."
    ) in body
    assert 'data-testid="unknown-ids"' not in text(
        login(client, trainer).get(reverse("evaluation:run", args=[second.pk]))
    )


def test_run_api_detail_summarises_unknown_answer_ids(client, trainer, evaluated):
    ranker, first, second = evaluated

    body = login(client, trainer).get(f"/api/evaluations/{first.pk}/").json()

    assert body["unknown_answer_ids"] == {"questions": 1, "ids": 1, "examples": ["zz"]}


def test_question_page_rating_cells_plain_words_once(client, trainer, evaluated):
    """'1 star', never '1 stars'; 'unrated' once per cell (it read 'unrated unrated')."""
    ranker, first, second = evaluated
    body = login(client, trainer).get(question_url(first, "q1")).content.decode()
    top = body[body.index("The ranker's top answers") : body.index("The best order we know")]
    cells = [
        re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip()
        for cell in re.findall(r'<td class="rating">(.*?)</td>', top)
    ]
    assert cells == ["★☆☆ 1 star", "★★★ 3 stars", "unrated"]
    assert 'aria-hidden="true" class="stars">★☆☆</span> 1 star<' in top
