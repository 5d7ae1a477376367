"""Answer embeddings as a job: parts, reuse by text hash, assembling, working beside another process."""

from __future__ import annotations

import time

import numpy as np
import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import collection_create
from rankers import semantic
from rankers.index import load_index
from rankers.models import BuildStatus, EmbeddingBuild
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

ANSWERS = [AnswerRecord(f"a{i}", f"Title {i}", f"body of answer {i} about wings") for i in range(5)]


@pytest.fixture
def small(model_dir, settings, tmp_path, monkeypatch):
    settings.EMBEDDINGS_DIR = tmp_path / "embeddings"
    monkeypatch.setattr(semantic.build, "PART_SIZE", 2)  # 5 answers: 3 parts
    collection = collection_create(name="C", slug="c")
    collection_import(collection=collection, answers=ANSWERS)
    return collection


def test_embeddings_plan_then_parts_then_assemble_in_index_order(small):
    index = load_index(collection=small)
    build, created = semantic.embeddings_build_for(index=index)

    parts = semantic.embeddings_plan(build_id=build.pk, index=index)
    for part in parts:
        semantic.embeddings_part(build_id=build.pk, part=part)

    build.refresh_from_db()
    assert (created, parts, build.status, build.parts_done, build.answers_total) == (
        True,
        [0, 1, 2],
        BuildStatus.SUCCEEDED,
        3,
        5,
    )
    vectors = semantic.answer_vectors(index=index)
    expected = semantic.encoding.load_encoder().encode(
        [semantic.answer_text(a.title, a.body) for a in ANSWERS]
    )
    assert np.allclose(vectors, expected, atol=1e-6)
    assert not list(semantic.embeddings_dir(collection_id=small.pk).glob("part-*"))


def test_embeddings_part_done_twice_is_harmless_and_a_claimed_build_is_not_planned_again(small):
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    parts = semantic.embeddings_plan(build_id=build.pk, index=index)
    semantic.embeddings_part(build_id=build.pk, part=0)
    semantic.embeddings_part(build_id=build.pk, part=0)  # a redelivered message

    again = semantic.embeddings_plan(build_id=build.pk, index=index)  # a second planner: what is left

    assert (parts, again) == ([0, 1, 2], [1, 2])
    build.refresh_from_db()
    assert (build.status, build.parts_done) == (BuildStatus.RUNNING, 1)


def test_embeddings_new_state_reencodes_only_changed_texts(small):
    semantic.embeddings_build_now(collection=small, index=load_index(collection=small))
    collection_import(collection=small, answers=[AnswerRecord("a0", "Title 0", "a new body about flutter")])
    index = load_index(collection=small)

    vectors = semantic.embeddings_build_now(collection=small, index=index)

    build = EmbeddingBuild.objects.get(collection=small, fingerprint=index.fingerprint)
    assert (build.answers_total, build.answers_reused, build.parts_total) == (5, 4, 1)
    fresh = semantic.encoding.load_encoder().encode(["Title 0. a new body about flutter"])[0]
    assert np.allclose(vectors[index.position["a0"]], fresh, atol=1e-6)


def test_embeddings_build_now_finishes_a_build_another_worker_planned(small):
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)  # a worker claimed and planned it
    semantic.embeddings_part(build_id=build.pk, part=1)  # and finished one part

    vectors = semantic.embeddings_build_now(collection=small, index=index)

    build.refresh_from_db()
    assert (vectors.shape, build.status) == ((5, 384), BuildStatus.SUCCEEDED)


def test_embeddings_resume_queues_the_unfinished_parts_of_a_silent_build(small):
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)
    semantic.embeddings_part(build_id=build.pk, part=0)
    EmbeddingBuild.objects.filter(pk=build.pk).update(heartbeat_at=None)

    assert semantic.embeddings_resume(stale_seconds=60) == [(build.pk, 1), (build.pk, 2)]
    assert semantic.embeddings_resume(stale_seconds=60) == []  # the heartbeat was renewed


def test_embeddings_finished_build_whose_file_is_gone_is_built_again(small, settings, tmp_path):
    index = load_index(collection=small)
    semantic.embeddings_build_now(collection=small, index=index)
    settings.EMBEDDINGS_DIR = tmp_path / "moved"  # the directory was wiped or moved
    semantic.forget_vectors()

    vectors = semantic.embeddings_build_now(collection=small, index=index)

    assert vectors.shape == (5, 384)
    assert (tmp_path / "moved" / f"collection-{small.pk}" / f"vectors-{index.fingerprint}.npy").exists()


def test_embeddings_part_counts_itself_once_without_looking_at_other_parts(small):
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)
    semantic.embeddings_part(build_id=build.pk, part=2)
    semantic.embeddings_part(build_id=build.pk, part=2)  # a redelivered message: counted once
    # each part reads its own slice of the todo file, in part order
    todo = np.load(semantic._todo_file(small.pk, build.fingerprint))

    build.refresh_from_db()
    assert (build.status, build.parts_done, list(todo)) == (
        BuildStatus.RUNNING,
        1,
        ["a0", "a1", "a2", "a3", "a4"],
    )


def test_embeddings_resume_assembles_a_build_whose_last_part_died_before_counting(small):
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)
    semantic.embeddings_part(build_id=build.pk, part=0)
    semantic.embeddings_part(build_id=build.pk, part=1)
    # the last part's worker wrote its file, then died before counting it
    last = semantic.encoding.load_encoder().encode([semantic.answer_text(ANSWERS[4].title, ANSWERS[4].body)])
    semantic._save_first(semantic._part_file(small.pk, build.fingerprint, 2), last)
    EmbeddingBuild.objects.filter(pk=build.pk).update(heartbeat_at=None)

    pending = semantic.embeddings_resume(stale_seconds=60)
    for build_id, part in pending:
        semantic.embeddings_part(build_id=build_id, part=part)

    build.refresh_from_db()
    assert (pending, build.status, build.parts_done) == ([(build.pk, 0)], BuildStatus.SUCCEEDED, 3)
    assert semantic.answer_vectors(index=index).shape == (5, 384)


def test_embeddings_part_looks_its_answers_up_by_external_id_without_an_order(small):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)

    with CaptureQueriesContext(connection) as queries:
        semantic.embeddings_part(build_id=build.pk, part=0)

    # an ORDER BY (the model's default: collection, id) makes SQLite walk every answer of the collection
    answers = [q["sql"] for q in queries.captured_queries if 'FROM "corpus_answer"' in q["sql"]]
    assert [("ORDER BY" in sql, '"external_id" IN' in sql) for sql in answers] == [(False, True)]


class _EncoderAwaitingABeat:
    """The real encoder, which returns only once the build's heartbeat has moved while it encodes (or
    after 10 s): a part that takes longer than a beat must keep its build alive."""

    def __init__(self, build_id: int) -> None:
        self.build_id = build_id
        self.beat_seen = False

    def encode(self, texts, **kwargs):
        before = EmbeddingBuild.objects.get(pk=self.build_id).heartbeat_at
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self.beat_seen:
            self.beat_seen = EmbeddingBuild.objects.get(pk=self.build_id).heartbeat_at != before
            time.sleep(0.02)
        return semantic.encoding.load_encoder().encode(texts, **kwargs)


def test_embeddings_part_beats_while_it_encodes(small, transactional_db, settings, monkeypatch):
    settings.EVALUATION_STALE_SECONDS = 0.4  # a beat every 0.1 s
    index = load_index(collection=small)
    build, _ = semantic.embeddings_build_for(index=index)
    semantic.embeddings_plan(build_id=build.pk, index=index)
    encoder = _EncoderAwaitingABeat(build.pk)
    monkeypatch.setattr(semantic.build, "load_encoder", lambda: encoder)

    semantic.embeddings_part(build_id=build.pk, part=0)

    build.refresh_from_db()
    assert (encoder.beat_seen, build.parts_done) == (True, 1)
