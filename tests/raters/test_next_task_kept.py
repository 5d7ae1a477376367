"""``labels_and_mine``: the collection's labels and a rater's rated pairs kept per process, equal to a
fresh read ({question id: {answer id: (rater count, disagreement)}}, {question id: {answer ids rated}})
after writes from other connections, including a transaction that commits after the read."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from corpus.services import collection_create
from raters.next_task import kept
from ratings.services import rating_record, rating_undo
from tests.ratings.conftest import build_corpus

pytestmark = pytest.mark.django_db(transaction=True)


def _in_thread(work) -> None:
    """Run ``work`` on another thread, so on its own database connection (as another process would)."""

    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()


def test_labels_and_mine_follow_other_connections_writes(make_user):
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    ann, bob = make_user("ann"), make_user("bob")
    q, a, c = corpus.q, corpus.a, corpus.collection
    rating_record(rater=ann, question=q["q1"], answer=a["d1"], stars=3)

    def keep(rater_id: int):
        return kept.labels_and_mine(collection=c, rater_id=rater_id, key=("rank", 1))

    assert keep(ann.pk) == ({q["q1"].pk: {a["d1"].pk: (1, 0)}}, {q["q1"].pk: {a["d1"].pk}})
    with CaptureQueriesContext(connection) as nothing_changed:
        labels, mine = keep(ann.pk)
    # The feed, and at most q1's labels and ann's ratings of it again (on PostgreSQL a transaction still
    # open elsewhere on the server holds the position back): never the collection's every label.
    assert not [query for query in nothing_changed if "corpus_question" in query["sql"]]
    assert mine == {q["q1"].pk: {a["d1"].pk}}

    # bob's rating is written in a transaction that stays open while ann's queue reads, and commits after.
    written, go = threading.Event(), threading.Event()

    def bob_rates() -> None:
        with transaction.atomic():
            rating_record(rater=bob, question=q["q1"], answer=a["d1"], stars=0)
            rating_record(rater=bob, question=q["q2"], answer=a["d3"], stars=2)
            written.set()
            assert go.wait(30)

    thread = threading.Thread(target=lambda: (bob_rates(), connection.close()))
    thread.start()
    assert written.wait(30)
    assert keep(ann.pk)[0] == {q["q1"].pk: {a["d1"].pk: (1, 0)}}  # not committed yet
    go.set()
    thread.join(30)
    assert keep(ann.pk) == (
        {q["q1"].pk: {a["d1"].pk: (2, 3)}, q["q2"].pk: {a["d3"].pk: (1, 0)}},
        {q["q1"].pk: {a["d1"].pk}},
    )
    assert keep(bob.pk)[1] == {q["q1"].pk: {a["d1"].pk}, q["q2"].pk: {a["d3"].pk}}

    # An undo on another connection removes bob's first rating of q2, and with it the label.
    _in_thread(lambda: rating_undo(rater=bob, question=q["q2"], answer=a["d3"]))
    assert keep(ann.pk) == ({q["q1"].pk: {a["d1"].pk: (2, 3)}}, {q["q1"].pk: {a["d1"].pk}})
    assert keep(bob.pk)[1] == {q["q1"].pk: {a["d1"].pk}}


def test_labels_and_mine_start_again_when_the_key_moves(make_user):
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    ann = make_user("ann")
    q, a, c = corpus.q, corpus.a, corpus.collection
    rating_record(rater=ann, question=q["q1"], answer=a["d1"], stars=2)
    rating_record(rater=ann, question=q["q3"], answer=a["d5"], stars=1)
    before, _ = kept.labels_and_mine(collection=c, rater_id=ann.pk, key=("rank", 1))
    assert before == {q["q1"].pk: {a["d1"].pk: (1, 0)}, q["q3"].pk: {a["d5"].pk: (1, 0)}}
    # An answer deleted takes its labels with it and writes no mark: the answers' marker moves the key.
    a["d5"].delete()
    after, mine = kept.labels_and_mine(collection=c, rater_id=ann.pk, key=("rank", 2))
    assert (after, mine) == ({q["q1"].pk: {a["d1"].pk: (1, 0)}}, {q["q1"].pk: {a["d1"].pk}})
    assert after[q["q1"].pk] is before[q["q1"].pk]  # read again unchanged: the same dict
