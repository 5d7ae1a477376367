"""The training loop's services: start (refusals), run (phases, decision by policy), resume, promote."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from corpus.models import Split
from corpus.services import collection_create
from evaluation.certainty import VersionPair, certainty, comparison_json
from rankers.models import ChampionChange, PromotionPolicy, RankerVersion
from rankers.services import ranker_create, version_promote
from ratings.models import Label, Rating
from tests.rankers.engine_support import es_config
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from tests.servers import free_port
from trainer.models import Training, TrainingPhase, TrainingStatus
from trainer.ranker_display import Predicted
from trainer.services import (
    TRAINING_MAX_ATTEMPTS,
    TrainingConflict,
    TrainingRefused,
    TrainingUnavailable,
    training_claim,
    training_run,
    training_start,
    trainings_resume,
)


@pytest.fixture
def learnable_ranker(db, model_dir):
    data = learnable_collection()
    return ranker_create(collection=data.collection, name="Built-in", kind="builtin")


def test_ranker_create_builtin_has_the_untrained_fusion_champion_from_the_start(db):
    collection = collection_create(name="C", slug="c")

    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")

    assert (ranker.champion.label, ranker.champion.method) == ("v1", "fusion")
    change = ChampionChange.objects.get(ranker=ranker)
    assert (change.version_id, change.previous_id, change.changed_by_id) == (ranker.champion_id, None, None)


def test_training_start_too_few_labels_says_how_many_more_and_links_the_train_queue(db):
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")

    with pytest.raises(TrainingRefused) as refused:
        training_start(ranker=ranker)

    assert str(refused.value) == (
        "Training needs at least 10 training questions with a relevant rated answer (1 star or more); "
        "there are 0. Rate 10 more training questions: /c/c/rate/?split=train"
    )
    assert Training.objects.count() == 0


def test_training_start_http_ranker_without_labels_is_refused_for_too_few(db):
    # An http ranker trains a reranker of its service's answers, on the same readiness rule.
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="S", kind="http", config={"url": "http://r.test/"})

    with pytest.raises(TrainingRefused) as refused:
        training_start(ranker=ranker)

    assert (refused.value.readiness.questions, refused.value.readiness.needed) == (0, 10)


def test_training_start_second_request_conflicts_naming_the_running_one(learnable_ranker):
    first = training_start(ranker=learnable_ranker)

    with pytest.raises(TrainingConflict) as conflict:
        training_start(ranker=learnable_ranker)

    assert conflict.value.training == first
    assert f"(training {first.pk}, queued since" in str(conflict.value)
    assert Training.objects.count() == 1


def test_training_start_broker_down_raises_before_storing(learnable_ranker):
    from config.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        with pytest.raises(TrainingUnavailable, match="task queue is not reachable"):
            training_start(ranker=learnable_ranker)
    finally:
        app.conf.broker_url = previous
    assert Training.objects.count() == 0


def test_training_claim_only_one_worker_wins(learnable_ranker):
    training = Training.objects.create(ranker=learnable_ranker)

    assert training_claim(training_id=training.pk, worker="a") is True
    assert training_claim(training_id=training.pk, worker="b") is False
    training.refresh_from_db()
    assert (training.status, training.claimed_by, training.attempts) == (TrainingStatus.RUNNING, "a", 1)


def test_training_run_promotes_a_significantly_better_version(learnable_ranker):
    training = Training.objects.create(ranker=learnable_ranker)

    done = training_run(training_id=training.pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.status, done.phase, done.progress, done.decision) == (
        TrainingStatus.SUCCEEDED,
        TrainingPhase.DONE,
        1.0,
        "promoted",
    )
    assert done.version.label == "v2"
    assert learnable_ranker.champion_id == done.version.pk
    # 10 test questions: BM25 puts a distractor first on each, the learned version the 3-star answer.
    comparison = done.version.comparison
    assert (comparison["questions"], comparison["champion"], comparison["verdict"]) == (10, "v1", "better")
    assert comparison["challenger_ndcg"] == 1.0
    assert comparison["p_value"] < 0.05
    change = ChampionChange.objects.filter(ranker=learnable_ranker).first()
    assert (change.version_id, change.previous.label, change.figures["verdict"]) == (
        done.version.pk,
        "v1",
        "better",
    )
    assert "Promoted by the policy: promoted only if significantly better (p < 0.05)." in done.decision_reason


def test_training_run_decision_keeps_the_comparison_counting_unrated_answers(learnable_ranker):
    v1 = learnable_ranker.champion
    training = Training.objects.create(ranker=learnable_ranker)

    done = training_run(training_id=training.pk, worker="w")

    # The same figures as the certainty page gives for this pair, worked out again after the decision.
    again = certainty(collection=learnable_ranker.collection, pair=VersionPair(v1, done.version)).comparison
    predicted = done.version.comparison["predicted"]
    assert predicted == comparison_json(again)
    assert set(predicted) == {
        "probability",
        "expected_difference",
        "verdict",
        "verdict_shares",
        "ratings_to_settle",
    }
    shown = Predicted.of(predicted)
    assert shown.clause("v2") in done.decision_reason
    assert done.decision_reason.index("Counting the unrated answers") < done.decision_reason.index(
        "Promoted by"
    )


def test_training_run_settled_policy_promotes_a_version_the_unrated_answers_cannot_overturn(learnable_ranker):
    learnable_ranker.promotion_policy = PromotionPolicy.SETTLED
    learnable_ranker.save()

    done = training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.decision, learnable_ranker.champion.label) == ("promoted", "v2")
    assert (done.version.comparison["verdict"], done.version.comparison["predicted"]["verdict"]) == (
        "better",
        "real improvement",
    )
    assert done.decision_reason.endswith(
        "Promoted by the policy: promoted only if significantly better (p < 0.05) and settled as a real "
        "improvement counting the unrated answers."
    )


def _unrate_test_distractors(collection) -> int:
    """Forget the ratings of the test questions' 0-star answers: each test question keeps one rated
    answer, its relevant one."""
    zero = Label.objects.filter(question__collection=collection, question__split=Split.TEST, gain=0)
    pairs = list(zero.values_list("question_id", "answer_id"))
    for question_id, answer_id in pairs:
        Rating.objects.filter(question_id=question_id, answer_id=answer_id).delete()
    zero.delete()
    return len(pairs)


@pytest.mark.parametrize("policy", [PromotionPolicy.BETTER, PromotionPolicy.SETTLED])
def test_training_run_gives_no_credit_for_ranking_rated_answers_first(learnable_ranker, policy):
    # Read as 0 stars, the unrated distractors made the trained version "better" (p < 0.05) merely for
    # ranking the one rated answer first. As unknown, both versions' test rankings condense to that
    # answer alone: the same judged-only NDCG, within noise, and the champion is kept.
    assert _unrate_test_distractors(learnable_ranker.collection) > 0
    learnable_ranker.promotion_policy = policy
    learnable_ranker.save()

    done = training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.decision, learnable_ranker.champion.label) == ("kept", "v1")
    comparison = done.version.comparison
    assert (comparison["verdict"], comparison["difference"], comparison["champion_ndcg"]) == (
        "within noise",
        0.0,
        1.0,
    )
    assert Predicted.of(comparison["predicted"]).clause("v2") in done.decision_reason


def test_training_run_without_any_rated_test_question_keeps_the_champion_and_says_why(learnable_ranker):
    collection = learnable_ranker.collection
    Rating.objects.filter(question__collection=collection, question__split=Split.TEST).delete()
    Label.objects.filter(question__collection=collection, question__split=Split.TEST).delete()

    done = training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.status, done.decision, learnable_ranker.champion.label) == ("succeeded", "kept", "v1")
    assert done.decision_reason == (
        "v2 could not be compared with v1: no test question has a rated answer yet. Kept v1; rate test "
        "questions (the queue asks for them once an evaluation has run), then train again or promote v2 by "
        "hand."
    )
    comparison = done.version.comparison
    assert (comparison["questions"], comparison["challenger_ndcg"], comparison["p_value"]) == (0, None, None)


def test_training_run_manual_policy_keeps_the_champion(learnable_ranker):
    learnable_ranker.promotion_policy = PromotionPolicy.MANUAL
    learnable_ranker.save()
    training = Training.objects.create(ranker=learnable_ranker)

    done = training_run(training_id=training.pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.decision, learnable_ranker.champion.label) == ("manual", "v1")
    assert done.decision_reason.endswith("The policy is manual: a trainer decides.")


def test_training_run_online_policy_keeps_the_champion_until_an_online_test_wins(learnable_ranker):
    learnable_ranker.promotion_policy = PromotionPolicy.ONLINE
    learnable_ranker.save()
    training = Training.objects.create(ranker=learnable_ranker)

    done = training_run(training_id=training.pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (done.decision, learnable_ranker.champion.label) == ("kept", "v1")
    assert done.decision_reason.endswith(
        "Kept v1; the policy promotes a version on a significant win of its online test: start an online "
        "test of v2."
    )


def test_training_run_same_labels_again_is_within_noise_and_kept(learnable_ranker):
    training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")

    again = training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")

    learnable_ranker.refresh_from_db()
    assert (again.decision, again.version.label, learnable_ranker.champion.label) == ("kept", "v3", "v2")
    assert (again.version.comparison["difference"], again.version.comparison["verdict"]) == (
        0.0,
        "within noise",
    )


def test_training_run_failure_is_recorded_not_left_running(learnable_ranker, monkeypatch):
    from trainer.services import learning

    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(learning, "train", broken)  # where ranker_train looks it up
    training = Training.objects.create(ranker=learnable_ranker)

    done = training_run(training_id=training.pk, worker="w")

    assert (done.status, done.error) == (TrainingStatus.FAILED, "disk full")


def test_training_run_engine_not_answering_fails_in_words_without_class_or_errno(learnable_ranker):
    """A closed port (bound, then closed): the reason a person reads names the engine and what happened,
    never "EngineUnavailable" or "[Errno 111]"."""
    port = free_port()
    engine = ranker_create(
        collection=learnable_ranker.collection,
        name="Engine",
        kind="engine",
        config=es_config(f"http://127.0.0.1:{port}"),
    )
    training = Training.objects.create(ranker=engine)

    done = training_run(training_id=training.pk, worker="w")

    assert (done.status, done.error) == (
        TrainingStatus.FAILED,
        f"engine at http://127.0.0.1:{port}/answers/_search cannot be reached: the connection was refused "
        "(nothing is listening at that address and port) (1 attempt)",
    )


def test_trainings_resume_requeues_silent_worker_then_fails_after_max_attempts(learnable_ranker, settings):
    settings.TRAINING_STALE_SECONDS = 60
    old = timezone.now() - timedelta(seconds=61)
    training = Training.objects.create(
        ranker=learnable_ranker, status=TrainingStatus.RUNNING, heartbeat_at=old, attempts=1, claimed_by="w"
    )

    assert trainings_resume() == [training.pk]
    training.refresh_from_db()
    assert (training.status, training.claimed_by) == (TrainingStatus.QUEUED, "")

    Training.objects.filter(pk=training.pk).update(
        status=TrainingStatus.RUNNING, heartbeat_at=old, attempts=TRAINING_MAX_ATTEMPTS
    )
    assert trainings_resume() == []
    training.refresh_from_db()
    assert training.status == TrainingStatus.FAILED
    assert training.error.startswith("The worker running this training stopped 3 times")


def test_trainings_resume_on_worker_start_takes_back_its_own_jobs(learnable_ranker):
    started = timezone.now()
    training = Training.objects.create(
        ranker=learnable_ranker,
        status=TrainingStatus.RUNNING,
        heartbeat_at=timezone.now(),
        started_at=started - timedelta(seconds=5),
        attempts=1,
        claimed_by="celery@host",
    )

    assert trainings_resume(worker="celery@other", since=started) == []
    assert trainings_resume(worker="celery@host", since=started) == [training.pk]


def test_version_promote_by_hand_records_who_and_refuses_the_champion_again(learnable_ranker, trainer):
    v1 = learnable_ranker.champion
    v2 = RankerVersion.objects.create(ranker=learnable_ranker, label="v2", method="bm25")

    change = version_promote(version=v2, changed_by=trainer, reason="Rolled forward by hand.")

    assert (change.previous_id, change.changed_by_id, change.reason) == (
        v1.pk,
        trainer.pk,
        "Rolled forward by hand.",
    )
    with pytest.raises(ValidationError, match="already the champion"):
        version_promote(version=v2, changed_by=trainer, reason="again")


def test_auto_training_due_after_n_new_training_labels_or_hours(learnable_ranker):
    from ratings.models import Label
    from trainer.selectors import auto_training_due
    from trainer.services import auto_trainings_start

    assert auto_trainings_start() == []  # off by default
    learnable_ranker.auto_train_labels = 2
    learnable_ranker.save(update_fields=["auto_train_labels"])
    assert auto_training_due(ranker=learnable_ranker) is True  # never trained

    done = training_run(training_id=Training.objects.create(ranker=learnable_ranker).pk, worker="w")
    Label.objects.update(updated_at=timezone.now() - timedelta(minutes=10))  # all older than the training
    Training.objects.filter(pk=done.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert auto_training_due(ranker=learnable_ranker) is False
    train_labels = list(
        Label.objects.filter(question__split="train").order_by("pk").values_list("pk", flat=True)
    )
    Label.objects.filter(pk__in=train_labels[:1]).update(updated_at=timezone.now())
    assert auto_training_due(ranker=learnable_ranker) is False  # 1 of 2 new labels
    Label.objects.filter(pk__in=train_labels[:2]).update(updated_at=timezone.now())
    assert auto_training_due(ranker=learnable_ranker) is True

    [started] = auto_trainings_start()
    assert (started.ranker_id, started.trigger, started.status) == (learnable_ranker.pk, "auto", "queued")


def test_auto_training_due_on_schedule(learnable_ranker):
    from trainer.selectors import auto_training_due

    learnable_ranker.auto_train_hours = 24
    learnable_ranker.save(update_fields=["auto_train_hours"])
    last = Training.objects.create(ranker=learnable_ranker, status=TrainingStatus.SUCCEEDED)

    assert auto_training_due(ranker=learnable_ranker) is False
    Training.objects.filter(pk=last.pk).update(created_at=timezone.now() - timedelta(hours=25))
    assert auto_training_due(ranker=learnable_ranker) is True
