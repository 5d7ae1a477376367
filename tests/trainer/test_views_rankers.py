"""The rankers page: who may see it, each ranker's champion, versions, champion changes and training."""

from __future__ import annotations

import re

from django.urls import reverse
from django.utils import timezone

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Answer, Question, Split
from corpus.services import answers_upsert, questions_upsert
from evaluation.models import EvaluationRun, RunStatus
from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.models import RankerVersion
from rankers.services import ranker_create, version_promote
from ratings.models import GroundTruthImport, RatingSource
from ratings.services import rating_record
from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import assert_authz
from trainer.models import Training, TrainingPhase, TrainingStatus
from trainer.services import collection_import


def _url(rankers) -> str:
    return reverse("rankers", args=[rankers.collection.slug])


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_rankers_page_authz(client, rankers, rater, outsider, trainer):
    assert _url(rankers) == "/c/tiny/rankers/"
    assert_authz(
        client, method="get", url=_url(rankers), rater=rater, outsider=outsider, trainer=trainer, ok=200
    )


def test_rankers_page_post_is_405(client, rankers, trainer):
    client.force_login(trainer)
    assert client.post(_url(rankers)).status_code == 405


def test_rankers_page_unknown_collection_is_404(client, trainer):
    client.force_login(trainer)
    assert client.get("/c/nope/rankers/").status_code == 404


def test_rankers_page_shows_champion_method_and_versions(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    text = _text(body)
    assert "Champion v1 : BM25 + semantic similarity, untrained fusion" in text
    assert "Test NDCG@10 not evaluated yet" in text
    v2_row = _text(re.search(r'<tr role="row">\s*<td[^>]*><span><a[^>]*>v2</a>.*?</tr>', body, re.S).group(0))
    assert v2_row.endswith(
        "LambdaMART 1,234 model 0.512 · BM25 0.430 not evaluated Evaluate v2 better than v1 (+0.041)"
    )
    v1_row = _text(re.search(r'<tr role="row" class="champion">.*?</tr>', body, re.S).group(0))
    assert v1_row.startswith("v1 champion ")
    assert v1_row.endswith("BM25 + semantic similarity, untrained fusion 0 – not evaluated Evaluate v1 –")
    version_url = f"/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/"
    assert f'href="{version_url}"' in body


def test_rankers_page_champion_after_promotion_shows_its_test_ndcg(client, rankers, trainer):
    version_promote(version=rankers.v2, changed_by=trainer, reason="Promoted by hand by tom.")
    client.force_login(trainer)

    text = _text(client.get(_url(rankers)).content.decode())

    assert "Champion v2 : LambdaMART" in text
    # The gate's comparison (NDCG@10 on rated answers, 0.412) is not the version's test NDCG@10: that is
    # its latest evaluation's, the dashboard's figure.
    assert "Test NDCG@10 not evaluated yet" in text
    EvaluationRun.objects.create(
        ranker=rankers.ranker,
        ranker_version=rankers.v2,
        collection=rankers.collection,
        status=RunStatus.SUCCEEDED,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
        ndcg_mean=0.382,
        judged_mean=0.62,
    )

    body = client.get(_url(rankers)).content.decode()

    assert "Test NDCG@10 0.382 its latest evaluation, 62% of the top 10 rated" in _text(body)
    v2_row = _text(re.search(r'<tr role="row" class="champion">.*?</tr>', body, re.S).group(0))
    assert v2_row.endswith("0.382 better than v1 (+0.041)")


def test_rankers_page_champion_changes_name_who_or_policy(client, rankers, trainer):
    version_promote(version=rankers.v2, changed_by=trainer, reason="Promoted by hand by tom.")
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    table = re.search(r'<table class="changes stack" role="table">.*?</table>', body, re.S).group(0)
    rows = [_text(row) for row in re.findall(r"<tr role=\"row\">.*?</tr>", table, re.S)[1:]]
    when = timezone.now().strftime("%Y-%m-%d")
    assert [row.split(" ", 2)[2] for row in rows] == [
        "v1 → v2 tom Promoted by hand by tom.",
        "v1 policy Version 1 (untrained fusion of BM25 and semantic similarity), created with the ranker: "
        "the best ranker that needs no ratings. Plain BM25 stays as the baseline version, labelled bm25.",
    ]
    assert all(row.startswith(when) for row in rows)


def test_rankers_page_without_training_has_enabled_button_and_readiness_link(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    button = re.search(r"<button[^>]*data-testid=\"train-button\"[^>]*>", body, re.S).group(0)
    assert "disabled" not in button
    assert 'there are 0. <a href="/c/tiny/rate/?split=train">Rate 10 more training questions</a>.' in body
    assert "hx-trigger" not in body


def test_rankers_page_while_training_runs_disables_button_and_polls(client, rankers, trainer):
    started = timezone.now().replace(hour=9, minute=5)
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.RUNNING,
        phase=TrainingPhase.CROSS_VALIDATE,
        progress=0.4,
        started_at=started,
    )
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    button = re.search(r"<button[^>]*data-testid=\"train-button\"[^>]*>", body, re.S).group(0)
    assert "disabled" in button
    block = re.search(r'<div id="training-\d+".*?</div>\s*<noscript>', body, re.S).group(0)
    assert f'hx-get="/c/tiny/rankers/{rankers.ranker.pk}/training/?reload=1"' in block
    assert 'hx-trigger="every 1s" hx-swap="outerHTML"' in block
    assert _text(block).startswith("Running : Cross-validating candidates · since 09:05")
    assert '<progress max="100" value="40"' in block
    assert f'<a href="/c/tiny/rankers/#ranker-{rankers.ranker.pk}">Refresh</a>' in body


def test_rankers_page_after_training_says_decision_and_links_version(client, rankers, trainer):
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        version=rankers.v2,
        decision="kept",
        decision_reason="v2 vs v1 on 45 test questions: within noise. Kept v1; a new version is promoted only if "
        "significantly better (p < 0.05).",
        finished_at=timezone.now().replace(year=2026, month=11, day=2, hour=10, minute=30),
    )
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    outcome = re.search(r'<p class="outcome" data-testid="training-outcome">.*?</p>', body, re.S).group(0)
    assert _text(outcome) == (
        "Last training, finished 2026-11-02 10:30: v2 not promoted: v2 vs v1 on 45 test questions: within noise. "
        "Kept v1; a new version is promoted only if significantly better (p &lt; 0.05). Show v2"
    )
    assert f'href="/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/">Show v2</a>' in outcome


def test_rankers_page_http_ranker_trains_a_reranker_of_its_answers(client, collection, trainer):
    ranker_create(collection=collection, name="Service", kind="http", config={"url": "http://r.test/"})
    client.force_login(trainer)

    body = client.get(reverse("rankers", args=[collection.slug])).content.decode()

    assert "Service" in body
    assert "Train new version" in body
    assert "Training settings" in body
    assert "Training here learns a reranker of its top 50 answers (v1 is the service as it is)" in _text(body)
    assert "Champion none yet" in _text(body)


def test_rankers_page_is_linked_from_manage_dashboard_and_home(client, rankers, trainer):
    client.force_login(trainer)
    link = 'href="/c/tiny/rankers/"'

    for url in ("/c/tiny/manage/", "/evaluation/c/tiny/", "/"):
        assert link in client.get(url).content.decode(), url


def test_rankers_page_long_history_lists_the_most_recent_fifty(client, rankers, trainer):
    from rankers.models import RankerVersion

    RankerVersion.objects.bulk_create(
        [RankerVersion(ranker=rankers.ranker, label=f"v{n}", method="bm25") for n in range(3, 53)]
    )
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    assert "The 50 most recent of 53 versions." in body  # v1, the bm25 baseline, v2 and 50 more
    table = re.search(r'<table class="versions stack" role="table">.*?</table>', body, re.S).group(0)
    assert table.count('<tr role="row"') == 51  # the header and 50 versions


def test_rankers_page_methods_in_plain_words(client, rankers, trainer):
    from rankers.models import RankerVersion

    for label, method in (("v3", "fusion"), ("v4", "learned-fusion")):
        RankerVersion.objects.create(ranker=rankers.ranker, label=label, method=method)
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    methods = re.findall(r'<td role="cell" data-label="Method">(.*?)</td>', body)
    assert methods == [
        "learned fusion of BM25, semantic similarity, RM3 and rating propagation",
        "BM25 + semantic similarity, untrained fusion",
        "LambdaMART",
        "plain BM25",
        "BM25 + semantic similarity, untrained fusion",
    ]


# The demo's first training as the learner stores it: the learned models lost cross-validation (0.4901 vs
# 0.5646), so training kept the untrained fusion, the same model as v1, within noise on the test questions.
DEMO_DETAILS = {
    "first_stage": "bm25",
    "training_questions": 93,
    "learnable_questions": 87,
    "min_cv_gain": 0.005,
    "cv_judged_only": True,
    "cv_rated_share": 0.3355,
    "rated_per_question": {"k": 10, "mean": 8.0753, "under_k": 66, "to_k": 305},
    "candidates": [
        {"name": "bm25", "trained": False, "cv_ndcg": 0.522625, "chosen": False, "spread": 0.01},
        {"name": "fusion", "trained": False, "cv_ndcg": 0.564628, "chosen": True, "spread": 0.012},
        {"name": "learned-fusion", "trained": True, "cv_ndcg": 0.490059, "chosen": False, "spread": 0.02},
        {"name": "lambdamart", "trained": True, "cv_ndcg": 0.374786, "chosen": False, "spread": 0.03},
    ],
    "reason": "The best candidate that learned from ratings (learned-fusion, CV NDCG@10 0.4901) did not beat "
    "fusion (0.5646), which needs no ratings, by at least 0.005.",
}


def _demo_training(rankers):
    details = {
        **DEMO_DETAILS,
        "params": {"signals": ["bm25", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)},
    }
    v3 = RankerVersion.objects.create(
        ranker=rankers.ranker,
        label="v3",
        method="fusion",
        uses_model=True,
        label_count=751,
        details=details,
        comparison={
            "k": 10,
            "questions": 57,
            "challenger_ndcg": 0.43611,
            "champion_ndcg": 0.43611,
            "difference": 0.0,
            "ci_low": 0.0,
            "ci_high": 0.0,
            "p_value": 1.0,
            "verdict": "within noise",
            "champion": "v1",
            "champion_id": rankers.v1.pk,
        },
    )
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        version=v3,
        decision="kept",
        decision_reason="v3 vs v1 on 57 test questions: NDCG@10 0.436 vs 0.436 (+0.000, p = 1.000): within "
        "noise. Kept v1; a new version is promoted only if significantly better (p < 0.05).",
        finished_at=timezone.now().replace(year=2026, month=11, day=2, hour=10, minute=30),
    )
    return v3


def test_rankers_page_explanation_names_the_import_that_made_unlisted_answers_0_stars(
    client, rankers, trainer
):
    v3 = _demo_training(rankers)
    v3.details = {
        **v3.details,
        "complete_questions": 93,
        "unlisted_incorrect": [{"id": 7, "name": "import 7 (cranfield-gt.csv)", "questions": 93}],
    }
    v3.save(update_fields=["details"])
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    said = re.search(r'data-testid="explained-unlisted">(.*?)</p>', body, re.S).group(1)
    assert _text(said) == (
        "The training read the answers not listed for 93 training questions as 0 stars, because import 7 "
        "(cranfield-gt.csv) says that answers not listed for a judged question are incorrect. Change it for "
        "the next training ."
    )
    assert 'href="/c/tiny/manage/#imports-heading">Change it for the next training</a>' in said


def test_rankers_page_explains_the_last_training_first(client, rankers, trainer):
    _demo_training(rankers)
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    section = re.search(r'<section class="card ranker".*?<h3 id="versions-', body, re.S).group(0)
    # First in the ranker's block: before its facts, its Train button and its versions.
    assert section.index('data-testid="training-explained"') < section.index('<dl class="facts">')
    summary = re.search(r'data-testid="explained-summary">(.*?)</p>', section, re.S).group(1)
    assert _text(summary) == (
        "It tried 4 ways of ranking, 2 of which learn from the 751 ratings of 93 training "
        "questions, and scored each by cross-validation (on questions it had not learned from, rated answers "
        "only). No model that learns from ratings beat the untrained fusion, which needs none: the best of them, "
        "the learned fusion, scored 0.490 against 0.565 (a lead of at least 0.005 is needed). So training kept "
        "the untrained fusion. v3 is therefore the same model as v1. On the 57 test questions v3 scored 0.436 "
        "against v1&#x27;s 0.436 in NDCG@10 on rated answers (+0.000): within noise. v1 stays the champion."
    )
    table = re.search(r'<table class="candidates".*?</table>', section, re.S).group(0)
    assert [_text(row) for row in re.findall(r"<tr.*?</tr>", table, re.S)] == [
        "Candidate Cross-validated NDCG@10 Kept",
        "Plain BM25 needs no ratings 0.523 not kept",
        "BM25 + semantic similarity, untrained fusion needs no ratings 0.565 kept",
        "Learned fusion of BM25, semantic similarity, RM3 and rating propagation learns from ratings 0.490 not "
        "kept",
        "LambdaMART learns from ratings 0.375 not kept",
    ]
    next_step = re.search(r'data-testid="explained-next">(.*?)</p>', section, re.S).group(1)
    assert _text(next_step) == (
        "What would help next: More rated answers in the training questions&#x27; top 10. The 93 training "
        "questions have 8.1 rated answers each on average, but in cross-validation rated answers held only 34% "
        "of the top 10 places of the kept ranking: about 620 of those places hold an unrated answer. Rating them "
        "(the rating queue of training questions shows their top answers) gives the learners more to learn from "
        "and cross-validation more to score them on. Whether that is enough for a model that learns to beat "
        "what needs no ratings shows at the next training."
    )
    technical = re.search(r'<details class="technical">(.*?)</details>', section, re.S).group(1)
    assert "66 of the 93 training questions have fewer than 10 rated answers" in technical
    assert "The best candidate that learned from ratings (learned-fusion, CV NDCG@10 0.4901)" in technical


def test_rankers_page_says_a_version_is_the_same_model_in_its_row_and_the_training_message(
    client, rankers, trainer
):
    v3 = _demo_training(rankers)
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    row = re.search(rf'<tr role="row">\s*<td[^>]*><span><a[^>]*>{v3.label}</a>.*?</tr>', body, re.S).group(0)
    assert '<span class="badge same" data-testid="same-model">same model as v1</span>' in row
    outcome = re.search(r'<p class="outcome" data-testid="training-outcome">.*?</p>', body, re.S).group(0)
    assert _text(outcome).startswith(
        "Last training, finished 2026-11-02 10:30: v3 is the same model as v1 (the untrained fusion): training "
        "kept it because no model that learns from ratings beat it in cross-validation. v3 not promoted: v3 vs "
        "v1 on 57 test questions"
    )


def test_rankers_page_without_a_finished_training_explains_nothing(client, rankers, trainer):
    Training.objects.create(ranker=rankers.ranker, status=TrainingStatus.FAILED, error="Engine down.")
    client.force_login(trainer)

    assert 'data-testid="training-explained"' not in client.get(_url(rankers)).content.decode()


def test_rankers_page_evaluate_a_version_never_evaluated_comes_back_with_its_run(client, rankers, trainer):
    client.force_login(trainer)
    body = client.get(_url(rankers)).content.decode()
    form = re.search(
        rf'<form method="post" action="([^"]+)" class="inline">(?:(?!</form>).)*?name="version" value="{rankers.v2.pk}"'
        r'(?:(?!</form>).)*?name="next" value="([^"]+)"',
        body,
        re.S,
    )
    action, back = form.group(1), form.group(2)

    response = client.post(action, {"version": rankers.v2.pk, "next": back})

    assert (response.status_code, response["Location"]) == (
        303,
        f"/c/tiny/rankers/#ranker-{rankers.ranker.pk}",
    )
    run = EvaluationRun.objects.get(ranker_version=rankers.v2)
    assert (run.status, run.ranker_id) == (RunStatus.PENDING, rankers.ranker.pk)


def _relevant_training_labels(collection, rater, *, source: str = RatingSource.WEB) -> None:
    """Ten training questions, each with one answer rated 3 stars (``source``) and nothing else: at least
    9 of each one's top 10 are unrated."""
    answers_upsert(collection=collection, records=[AnswerRecord("a1", "Boundary layer", "A flat plate.")])
    questions_upsert(
        collection=collection,
        records=[QuestionRecord(f"t{i}", f"boundary layer {i}", Split.TRAIN) for i in range(10)],
    )
    answer = Answer.objects.get(collection=collection, external_id="a1")
    for question in Question.objects.filter(collection=collection, split=Split.TRAIN):
        rating_record(rater=rater, question=question, answer=answer, stars=3, source=source)


def _readiness(client, rankers) -> str:
    body = client.get(_url(rankers)).content.decode()
    return re.search(rf'id="readiness-{rankers.ranker.pk}">(.*?)</p>', body, re.S).group(1)


def test_rankers_page_readiness_says_positive_only_labels_teach_nothing_and_the_two_ways_out(
    client, rankers, rater, trainer
):
    _relevant_training_labels(rankers.collection, rater)
    client.force_login(trainer)

    assert _readiness(client, rankers) == (
        "10 training questions have a relevant rated answer: enough to train. Every rated answer of the "
        "training questions is relevant (1 star or more) and no import says the answers it does not list "
        "are incorrect, so the learners cannot tell good answers from bad ones: a training would learn "
        'nothing. Two ways out: <a href="/c/tiny/rate/?mode=unsure">rate the unrated answers of the training '
        "questions&#x27; top 10 (at least 90: the queue asks raters for them)</a>, or "
        '<a href="/c/tiny/manage/#import-heading">import the judgments as a ground truth with '
        "“Answers not listed for a judged question are incorrect (0 stars)” on</a>."
    )


def test_rankers_page_readiness_with_a_zero_star_training_label_says_only_enough(
    client, rankers, rater, trainer
):
    _relevant_training_labels(rankers.collection, rater)
    question = Question.objects.get(collection=rankers.collection, external_id="t0")
    answers_upsert(collection=rankers.collection, records=[AnswerRecord("a2", "Shock", "Shock waves.")])
    answer = Answer.objects.get(collection=rankers.collection, external_id="a2")
    rating_record(rater=rater, question=question, answer=answer, stars=0)
    client.force_login(trainer)

    assert (
        _readiness(client, rankers) == "10 training questions have a relevant rated answer: enough to train."
    )


def _imported_relevant_training_labels(collection, *, unlisted_incorrect: bool) -> GroundTruthImport:
    """Ten training questions, each with one answer judged 3 stars by an import, and nothing else."""
    summary = collection_import(
        collection=collection,
        answers=[AnswerRecord("a1", "Boundary layer", "A flat plate.")],
        questions=[QuestionRecord(f"t{i}", f"boundary layer {i}", Split.TRAIN) for i in range(10)],
        judgments=[JudgmentRecord(f"t{i}", "a1", 3, "qrels.txt", i + 1) for i in range(10)],
        unlisted_incorrect=unlisted_incorrect,
        files=["qrels.txt"],
    )
    assert summary.ground_truth_import is not None
    return summary.ground_truth_import


def test_rankers_page_readiness_with_an_imported_ground_truth_says_only_enough(client, rankers, trainer):
    # An import whose unlisted answers are incorrect (0 stars): the learners see bad answers.
    _imported_relevant_training_labels(rankers.collection, unlisted_incorrect=True)
    client.force_login(trainer)

    assert (
        _readiness(client, rankers) == "10 training questions have a relevant rated answer: enough to train."
    )


def test_rankers_page_readiness_with_the_option_off_says_turn_it_on_for_the_import(client, rankers, trainer):
    record = _imported_relevant_training_labels(rankers.collection, unlisted_incorrect=False)
    client.force_login(trainer)

    assert _readiness(client, rankers).endswith(
        "(at least 90: the queue asks raters for them)</a>, or turn on “Answers not listed for a judged "
        f'question are incorrect (0 stars)” for <a href="/c/tiny/manage/#import-{record.pk}">import '
        f"{record.pk} (qrels.txt)</a>."
    )
