"""The Celery task ``judges.run`` in a real worker process, against the reference judge over HTTP."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from corpus.models import Answer, Question, Role
from corpus.services import answers_upsert, collection_create, membership_set, questions_upsert
from judges.models import Judging, JudgingStatus
from judges.services import judge_create, judging_start
from ratings.models import Rating
from ratings.services import rating_record
from tests.judges.conftest import ANSWERS, HUMAN, QUESTIONS
from tests.servers import start_judge_server

pytestmark = pytest.mark.django_db(transaction=True)


def _collection():
    collection = collection_create(name="Tasked", slug="tasked")
    answers_upsert(collection=collection, records=ANSWERS)
    questions_upsert(collection=collection, records=QUESTIONS)
    human = get_user_model().objects.create_user(username="tasked-human", password="pw")
    membership_set(collection=collection, user=human, role=Role.RATER)
    for (q, a), stars in HUMAN.items():
        rating_record(
            rater=human,
            question=Question.objects.get(collection=collection, external_id=q),
            answer=Answer.objects.get(collection=collection, external_id=a),
            stars=stars,
        )
    return collection


def _wait(judging_id: int, statuses, seconds: float = 60) -> Judging:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        judging = Judging.objects.get(pk=judging_id)
        if judging.status in statuses:
            return judging
        time.sleep(0.05)
    raise AssertionError(f"judging {judging_id} still {Judging.objects.get(pk=judging_id).status}")


def test_worker_runs_a_builtin_judging(celery_worker_process):
    collection = _collection()
    judge = judge_create(collection=collection, name="Builtin", kind="builtin")
    with transaction.atomic():
        judging = judging_start(judge=judge, selection="questions", question_ids=["q1", "q2", "q3", "q4"])

    done = _wait(judging.pk, {JudgingStatus.SUCCEEDED, JudgingStatus.FAILED})

    assert done.status == JudgingStatus.SUCCEEDED, done.error + celery_worker_process.log()
    assert done.judged == len(done.pairs) == Rating.objects.filter(rater_id=judge.account.user_id).count()


def test_killed_worker_resumes_the_run_without_judging_twice(celery_worker_process, tmp_path):
    collection = _collection()
    server = start_judge_server("tasked", tmp_path, "--latency-ms", "400")
    try:
        judge = judge_create(
            collection=collection,
            name="Slow",
            kind="openai-chat",
            base_url=server.url,
            model="m",
            concurrency=1,
            requests_per_minute=0,
        )
        with transaction.atomic():
            judging = judging_start(judge=judge, selection="questions", question_ids=["q1", "q2", "q3", "q4"])
        deadline = time.monotonic() + 60
        while Judging.objects.get(pk=judging.pk).judged < 2 and time.monotonic() < deadline:
            time.sleep(0.05)

        celery_worker_process.kill()
        killed = Judging.objects.get(pk=judging.pk)
        assert killed.status == JudgingStatus.RUNNING and 2 <= killed.judged < len(killed.pairs)
        celery_worker_process.start()

        done = _wait(judging.pk, {JudgingStatus.SUCCEEDED, JudgingStatus.FAILED})
    finally:
        server.stop()

    assert done.status == JudgingStatus.SUCCEEDED, done.error + celery_worker_process.log()
    assert done.attempts == 2
    ratings = Rating.objects.filter(rater_id=judge.account.user_id)
    assert ratings.count() == len(done.pairs) == done.judged
