"""``judge_pairs``: the judges' disputed and least certain pairs kept per process (outside a transaction,
for a key), equal to a fresh read after each change (a person rating a judged pair, a judge grading again
with another certainty, an undo, a new judge), and read with as many queries at any number of judgments."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from corpus.models import Answer
from corpus.services import collection_create
from judges.services import judge_create
from raters.next_task import judge_reads
from raters.next_task.judge_reads import judge_disputed_pairs, judge_pairs, judge_uncertain_pairs
from ratings.services import judge_ratings_record, rating_record, rating_undo
from tests.ratings.conftest import build_corpus

pytestmark = pytest.mark.django_db(transaction=True)

KEY = ("rank", 1)


def _same_as_fresh(collection) -> tuple[dict, dict]:
    """The kept pairs (for per_judge 20 and 1), asserted equal to a read from scratch; returns the kept."""
    kept = judge_pairs(collection=collection, key=KEY)
    assert kept == (judge_disputed_pairs(collection=collection), judge_uncertain_pairs(collection=collection))
    one = judge_uncertain_pairs(collection=collection, per_judge=1, key=KEY)
    assert one == judge_uncertain_pairs(collection=collection, per_judge=1)
    return kept


def test_judge_pairs_kept_equal_a_fresh_read_after_each_change(make_user, monkeypatch):
    # Two judgments kept a judge: people rating them empties the front, which is then read again, two
    # judgments at a time.
    monkeypatch.setattr(judge_reads, "FRONT_KEPT", 2)
    monkeypatch.setattr(judge_reads, "FRONT_BATCH", 2)
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    q, a, c = corpus.q, corpus.a, corpus.collection
    ann = make_user("ann")
    judge = judge_create(collection=c, name="J", kind="builtin")
    rating_record(rater=ann, question=q["q1"], answer=a["d1"], stars=3)
    judge_ratings_record(
        account=judge.account,
        judgments=[
            (q["q1"].pk, a["d1"].pk, 0, "", 0.5),  # 3 stars from ann's label: disputed
            (q["q1"].pk, a["d2"].pk, 1, "", 0.1),
            (q["q2"].pk, a["d3"].pk, 2, "", 0.2),
            (q["q3"].pk, a["d5"].pk, 2, "", 0.3),
            (q["q2"].pk, a["d4"].pk, 2, "", 0.4),
            (q["q3"].pk, a["d2"].pk, 2, "", None),  # no certainty: never chosen
        ],
    )
    disputed, uncertain = _same_as_fresh(c)
    assert disputed == {q["q1"].pk: [a["d1"].pk]}
    assert uncertain == {
        q["q1"].pk: [a["d2"].pk],
        q["q2"].pk: [a["d3"].pk, a["d4"].pk],
        q["q3"].pk: [a["d5"].pk],
    }

    # ann rates the two least certain: the kept front of two is empty, so it is read again.
    rating_record(rater=ann, question=q["q1"], answer=a["d2"], stars=1)
    rating_record(rater=ann, question=q["q2"], answer=a["d3"], stars=2)
    _, uncertain = _same_as_fresh(c)
    assert uncertain == {q["q3"].pk: [a["d5"].pk], q["q2"].pk: [a["d4"].pk]}

    # The judge grades q3·d5 again, now sure of it: it leaves the front; q2's list stays the very list.
    judge_ratings_record(account=judge.account, judgments=[(q["q3"].pk, a["d5"].pk, 2, "", 0.95)])
    _, after = _same_as_fresh(c)
    assert after[q["q2"].pk] is uncertain[q["q2"].pk]
    assert q["q3"].pk in after  # 0.95 is still among its 20 least certain

    # ann agrees with the judge now (0 stars): no dispute left; her undo brings it back.
    rating_record(rater=ann, question=q["q1"], answer=a["d1"], stars=0)
    assert _same_as_fresh(c)[0] == {}
    rating_undo(rater=ann, question=q["q1"], answer=a["d1"])
    assert _same_as_fresh(c)[0] == {q["q1"].pk: [a["d1"].pk]}

    # A second judge: the key moves and everything is read again.
    other = judge_create(collection=c, name="K", kind="builtin")
    judge_ratings_record(
        account=other.account,
        judgments=[(q["q1"].pk, a["d1"].pk, 3, "", 0.05), (q["q2"].pk, a["d1"].pk, 1, "", 0.6)],
    )
    disputed, uncertain = _same_as_fresh(c)
    assert disputed == {q["q1"].pk: [a["d1"].pk]}  # the first judge's 0 stars from ann's 3, not K's 3
    assert uncertain[q["q2"].pk] == [a["d4"].pk, a["d1"].pk]  # J's first, then K's (q1·d1: ann rated it)


def _queries_after_a_rating(collection, rater, question, answer, stars: int) -> list[str]:
    rating_record(rater=rater, question=question, answer=answer, stars=stars)
    with CaptureQueriesContext(connection) as queries:
        kept = judge_pairs(collection=collection, key=KEY)
    assert kept == (judge_disputed_pairs(collection=collection), judge_uncertain_pairs(collection=collection))
    return [query["sql"] for query in queries]


def test_judge_pairs_queries_do_not_grow_with_judgments(make_user):
    corpus = build_corpus(collection_create(name="Tiny", slug="tiny"))
    q, a, c = corpus.q, corpus.a, corpus.collection
    ann = make_user("ann")
    judge = judge_create(collection=c, name="J", kind="builtin")
    judge_ratings_record(account=judge.account, judgments=[(q["q1"].pk, a["d1"].pk, 0, "", 0.5)])
    judge_pairs(collection=c, key=KEY)
    few = _queries_after_a_rating(c, ann, q["q1"], a["d1"], 3)

    # 60 more answers, each judged for every question (180 judgments), and people's ratings of some.
    more = Answer.objects.bulk_create(
        [Answer(collection=c, external_id=f"m{i}", title="more", body="more") for i in range(60)]
    )
    judge_ratings_record(
        account=judge.account,
        judgments=[
            (question.pk, answer.pk, i % 4, "", i / 180)
            for i, (question, answer) in enumerate(
                (question, answer) for question in q.values() for answer in more
            )
        ],  # fmt: skip
    )
    for answer in more[:20]:
        rating_record(rater=ann, question=q["q2"], answer=answer, stars=3)
    judge_pairs(collection=c, key=KEY)
    many = _queries_after_a_rating(c, ann, q["q3"], a["d5"], 1)

    # The same statements: the judges, the feed, and the changed question's ratings and labels; none reads
    # the collection's judgments or labels (a join of its questions).
    assert len(many) == len(few) == 4
    assert not [sql for sql in many if "corpus_question" in sql]
