"""The whole loop against PostgreSQL, Redis and a real Celery worker: import Cranfield, evaluate BM25, rate,
retrain, evaluate again; the history has two points and the dashboard shows the change and its verdict."""

import re

import pytest
from django.db import transaction
from django.urls import reverse

from corpus.models import Answer, Question, Role
from evaluation import selectors
from evaluation.models import EvaluationRun, QuestionResult, RunStatus, RunTrigger
from rankers.models import PromotionPolicy
from rankers.services import ranker_create
from ratings.services import rating_record
from tests.evaluation.test_tasks import wait_finished, wait_for
from trainer.models import TrainingStatus
from trainer.services import training_start

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_import_evaluate_rate_retrain_evaluate(
    model_dir, demo_vectors, make_user, client, celery_worker_process, demo_load
):
    collection = demo_load()
    trainer = make_user("trainer-e2e", collection=collection, role=Role.TRAINER)
    rater = make_user("rater-e2e", collection=collection, role=Role.RATER)
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin", is_default=True)
    # Promote unless significantly worse, so the retrained version is what the second run measures.
    ranker.promotion_policy = PromotionPolicy.NOT_WORSE
    ranker.save()

    # 1. Evaluate the first champion from the dashboard's button.
    client.force_login(trainer)
    response = client.post(
        reverse("evaluation:run-start", args=[collection.slug, ranker.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and 'hx-trigger="every 1s"' in response.content.decode()
    first = wait_finished(EvaluationRun.objects.get(ranker=ranker), celery_worker_process, timeout=120)
    assert first.status == RunStatus.SUCCEEDED, first.error
    assert first.questions_done == first.questions_total == 57
    assert first.ranker_version.label == "v1"  # the untrained fusion, the champion from the start

    # 2. Rate: the unrated answers at the top of five test questions, and some training pairs.
    worst = QuestionResult.objects.filter(run=first).order_by("unlabelled_in_top_k").reverse()[:5]
    answers = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    rated = 0
    for result in worst:
        for answer_id, label in zip(result.ranked_answer_ids[:3], result.labels[:3], strict=False):
            if label is None:
                rating_record(rater=rater, question=result.question, answer=answers[answer_id], stars=1)
                rated += 1
    for question in Question.objects.filter(collection=collection, split="train").order_by("pk")[:3]:
        rating_record(rater=rater, question=question, answer=answers["1"], stars=0)
        rated += 1
    assert rated >= 5

    # 3. Retrain: the worker trains a version and starts its evaluation.
    with transaction.atomic():
        training = training_start(ranker=ranker, created_by=trainer)

    def second_run():
        return EvaluationRun.objects.filter(ranker=ranker, trigger=RunTrigger.TRAINING).first()

    # The training's embeddings build finds the 1,400 answers' vectors by text hash (demo_vectors encoded them
    # once for the run); without them it encodes them first: minutes on a loaded 2-core machine.
    second = wait_for(second_run, timeout=300, worker=celery_worker_process, what="the training's evaluation")
    wait_finished(second, celery_worker_process, timeout=120)
    assert second.status == RunStatus.SUCCEEDED, second.error
    training.refresh_from_db()
    assert (training.status, training.decision) == (TrainingStatus.SUCCEEDED, "promoted"), training.error
    assert second.ranker_version.label == "v2"
    assert second.label_count == first.label_count + rated
    assert second.previous_run_id == first.pk
    assert second.verdict in {"real improvement", "within noise", "real drop"}
    assert second.p_value is not None and second.comparison_count >= 50

    # 4. The history has two successful points and the dashboard shows the change and its verdict.
    assert [p.run_id for p in selectors.history(ranker=ranker)] == [first.pk, second.pk]
    body = re.sub(
        r"\s+", " ", client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()
    )
    assert f'data-testid="headline">{second.ndcg_mean:.3f}<' in body
    # The change is split: the new ratings' effect on BM25's old rankings, and the new version's own effect
    # in the headline's measure (nobody rated after it ran). Together they make the headlines' change. The
    # verdict is the run's stored comparison, on rated answers, as every comparison is.
    change = selectors.change_explained(run_a=first, run_b=second)
    assert change.rated_difference == pytest.approx(second.delta)
    assert (change.p_value, change.verdict) == (pytest.approx(second.p_value), second.verdict)
    assert change.label_effect + change.ranker_effect == pytest.approx(second.ndcg_mean - first.ndcg_mean)
    assert f'data-testid="change-total">{change.total_text}</span> since the previous run' in body
    assert f'data-testid="label-effect">{change.label_text}</li>' in body
    assert (
        f"{change.ranker_effect_text}: version v1 → version v2; NDCG@10 on rated answers "
        f"{selectors.signed(second.delta)} "
        f'(<strong class="verdict">{second.verdict}</strong>, {change.p_value_text})'
    ) in body
