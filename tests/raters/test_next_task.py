from __future__ import annotations

import pytest

from corpus.models import Answer, Question, Role, Split
from raters.next_task.budget import is_overlap_question
from raters.next_task.picking import Overview, next_task, rater_overview, task_for_question
from raters.next_task.table import candidate_table
from raters.next_task.task import (
    PRIORITY_DISAGREEMENT,
    PRIORITY_FEW_RATERS,
    PRIORITY_LOW_NDCG,
    PRIORITY_UNLABELLED_IN_TEST,
    shuffled,
)
from raters.next_task.term_overlap import term_overlap_ranking
from ratings.services import question_skip, rating_record
from tests.raters.conftest import table_refreshed
from tests.ratings.conftest import make_run

pytestmark = pytest.mark.django_db


def rate(rater, question, *answers_and_stars):
    for answer, stars in answers_and_stars:
        rating_record(rater=rater, question=question, answer=answer, stars=stars)


def test_candidate_table_without_ranker_ranks_by_term_overlap(corpus):
    table = candidate_table(collection=corpus.collection)

    a, q = corpus.a, corpus.q
    assert table == {
        q["q1"].pk: [a["d1"].pk, a["d2"].pk],
        q["q2"].pk: [a["d3"].pk, a["d4"].pk],
        q["q3"].pk: [a["d5"].pk, a["d2"].pk],
    }


def test_candidate_table_with_unreachable_ranker_falls_back_to_term_overlap(corpus, unreachable_ranker):
    table = candidate_table(collection=corpus.collection)

    assert table[corpus.q["q1"].pk] == [corpus.a["d1"].pk, corpus.a["d2"].pk]


def test_candidate_table_from_builtin_ranker(corpus, builtin_ranker):
    from rankers.backends import RankQuery, get_backend

    table = candidate_table(collection=corpus.collection)

    backend = get_backend(builtin_ranker)
    ids = {a.external_id: a.pk for a in corpus.a.values()}
    for question in corpus.q.values():
        ranking = backend.rank(RankQuery(external_id=question.external_id, text=question.text), 10)
        assert table[question.pk] == [ids[x] for x in ranking.ids]
    assert table[corpus.q["q1"].pk][0] == corpus.a["d1"].pk
    assert table[corpus.q["q3"].pk][0] == corpus.a["d5"].pk


def test_candidate_table_recomputed_when_answers_change(corpus):
    first = candidate_table(collection=corpus.collection)
    extra = Answer.objects.create(
        collection=corpus.collection, external_id="d7", title="Wing", body="lift attack angle"
    )

    second = candidate_table(collection=corpus.collection)

    assert extra.pk not in first[corpus.q["q1"].pk]
    assert second[corpus.q["q1"].pk][:2] == [corpus.a["d1"].pk, extra.pk]


def test_candidate_table_persisted_needs_no_ranking_queries(corpus, django_assert_max_num_queries):
    candidate_table(collection=corpus.collection)

    # The state: the collection's change markers, the default ranker, its latest evaluation and latest
    # version, the latest finished embeddings build; then the table row's header. No answer or question is
    # read, and the table itself not again in this process.
    with django_assert_max_num_queries(6):
        candidate_table(collection=corpus.collection)


def test_term_overlap_ranking_weights_rare_terms_higher():
    table = term_overlap_ranking(
        questions=[(1, "common rare")], answers=[(10, "common"), (11, "common"), (12, "rare")], k=10
    )

    assert table == {1: [12, 10, 11]}


def test_term_overlap_ranking_ignores_answers_sharing_only_stopwords():
    table = term_overlap_ranking(questions=[(1, "what is the wing")], answers=[(10, "what is the")], k=10)

    assert table == {1: []}


def test_next_task_without_ratings_offers_a_training_question_first(corpus, rater):
    task = next_task(collection=corpus.collection, rater=rater)

    assert task.question_id in {corpus.q["q1"].pk, corpus.q["q3"].pk}
    assert task.priority == PRIORITY_FEW_RATERS
    assert task.reason == (
        "Chosen because 2 answers need more ratings (the target is 1 rater per answer). "
        "It is a training question: its ratings teach the ranker."
    )


def test_next_task_shows_candidates_shuffled_stably(corpus, rater):
    first = next_task(collection=corpus.collection, rater=rater)
    again = next_task(collection=corpus.collection, rater=rater)

    assert first == again
    assert sorted(first.answer_ids) == sorted(
        candidate_table(collection=corpus.collection)[first.question_id]
    )


def test_next_task_never_offers_a_pair_the_rater_rated(corpus, rater):
    a, q = corpus.a, corpus.q
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(rater, q["q3"], (a["d5"], 3))

    task = next_task(collection=corpus.collection, rater=rater, split="train")

    assert (task.question_id, task.answer_ids) == (q["q3"].pk, [a["d2"].pk])
    assert task.reason.startswith("Chosen because 1 answer needs more ratings")


def test_next_task_least_rated_question_first_whatever_its_split(corpus, rater):
    a, q = corpus.a, corpus.q
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(rater, q["q3"], (a["d5"], 3), (a["d2"], 1))

    task = next_task(collection=corpus.collection, rater=rater)

    assert (task.question_id, task.priority) == (q["q2"].pk, PRIORITY_FEW_RATERS)
    assert task.reason.endswith("It is a test question: its ratings measure the ranker.")


def test_next_task_none_when_every_pair_rated(corpus, rater):
    a, q = corpus.a, corpus.q
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(rater, q["q2"], (a["d3"], 3), (a["d4"], 1))
    rate(rater, q["q3"], (a["d5"], 3), (a["d2"], 1))

    assert next_task(collection=corpus.collection, rater=rater) is None


def test_next_task_pairs_at_target_not_offered_to_another_rater(corpus, rater, make_user):
    a, q = corpus.a, corpus.q
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(rater, q["q3"], (a["d5"], 3), (a["d2"], 1))
    second = make_user("sam", collection=corpus.collection, role=Role.RATER)

    task = next_task(collection=corpus.collection, rater=second)

    assert task.question_id == q["q2"].pk


def test_next_task_skipped_question_never_offered(corpus, rater):
    a, q = corpus.a, corpus.q
    question_skip(rater=rater, question=q["q1"], reason="too technical")
    rate(rater, q["q3"], (a["d5"], 3), (a["d2"], 1))

    task = next_task(collection=corpus.collection, rater=rater)

    assert task.question_id == q["q2"].pk


def test_next_task_exclude_passes_over_a_question_once(corpus, rater):
    first = next_task(collection=corpus.collection, rater=rater)

    other = next_task(collection=corpus.collection, rater=rater, exclude=[first.question_id])

    assert other.question_id != first.question_id


def test_next_task_unlabelled_in_latest_evaluation_comes_first(corpus, rater, unreachable_ranker):
    a, q = corpus.a, corpus.q
    make_run(unreachable_ranker, {q["q2"]: (["d4", "d6", "d3", "unknown-doc"], 0.5)})
    table_refreshed(corpus.collection)  # the evaluation's top k: read by the table's job

    task = next_task(collection=corpus.collection, rater=rater)

    assert (task.question_id, task.priority) == (q["q2"].pk, PRIORITY_UNLABELLED_IN_TEST)
    assert task.reason == (
        "Chosen because 3 answers in this test question's top 10 are not rated yet, so we cannot tell how "
        "well the ranker did on it (NDCG@10, the score of how well the ranker puts the best answers in its "
        "top 10)."
    )
    # The ranker's current top 10 (here term overlap: d3, d4) plus the evaluated top 10 (d6).
    assert sorted(task.answer_ids) == sorted([a["d3"].pk, a["d4"].pk, a["d6"].pk])


def test_next_task_evaluation_unlabelled_counts_only_still_unlabelled(
    corpus, rater, make_user, unreachable_ranker
):
    a, q = corpus.a, corpus.q
    make_run(unreachable_ranker, {q["q2"]: (["d4", "d6", "d3"], 0.5)})
    table_refreshed(corpus.collection)  # the evaluation's top k: read by the table's job
    other = make_user("sam", collection=corpus.collection, role=Role.RATER)
    rate(other, q["q2"], (a["d4"], 1), (a["d3"], 3))

    task = next_task(collection=corpus.collection, rater=rater)

    assert task.reason.startswith("Chosen because 1 answer in this test question's top 10 is not rated yet")


def test_next_task_disagreement_offered_for_a_further_opinion(corpus, rater, make_user):
    a, q = corpus.a, corpus.q
    first, second = (make_user(n, collection=corpus.collection, role=Role.RATER) for n in ("ann", "ben"))
    rate(first, q["q1"], (a["d1"], 0), (a["d2"], 1))
    rate(second, q["q1"], (a["d1"], 3))
    rate(first, q["q2"], (a["d3"], 3), (a["d4"], 1))
    rate(first, q["q3"], (a["d5"], 3), (a["d2"], 1))

    task = next_task(collection=corpus.collection, rater=rater)

    assert (task.question_id, task.priority) == (q["q1"].pk, PRIORITY_DISAGREEMENT)
    assert task.reason == (
        "Chosen because raters disagree by 2 or more stars on 1 answer; a further opinion settles them."
    )
    assert sorted(task.answer_ids) == sorted([a["d1"].pk, a["d2"].pk])


def test_next_task_lowest_ndcg_last_and_worst_first(corpus, rater, make_user, unreachable_ranker):
    a, q = corpus.a, corpus.q
    q4 = Question.objects.create(
        collection=corpus.collection, external_id="q4", text="Cooking pasta", split=Split.TEST
    )
    make_run(unreachable_ranker, {q["q2"]: (["d3", "d4"], 0.5), q4: (["d6"], 0.25)})
    table_refreshed(corpus.collection)  # the evaluation's top k: read by the table's job
    other = make_user("sam", collection=corpus.collection, role=Role.RATER)
    rate(other, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(other, q["q2"], (a["d3"], 3), (a["d4"], 1))
    rate(other, q["q3"], (a["d5"], 3), (a["d2"], 1))
    rate(other, q4, (a["d6"], 3))

    task = next_task(collection=corpus.collection, rater=rater)

    assert (task.question_id, task.priority) == (q4.pk, PRIORITY_LOW_NDCG)
    assert task.reason.startswith(
        "Chosen because the ranker did worst on this question in the latest evaluation "
    )
    assert ": 0.250 of at most 1.000)" in task.reason
    rate(rater, q4, (a["d6"], 3))
    assert next_task(collection=corpus.collection, rater=rater).question_id == q["q2"].pk


def test_next_task_overlap_sample_wants_more_raters(corpus, rater, make_user):
    a, q = corpus.a, corpus.q
    corpus.collection.overlap_fraction = 1.0
    corpus.collection.save(update_fields=["overlap_fraction"])
    first, second = (make_user(n, collection=corpus.collection, role=Role.RATER) for n in ("ann", "ben"))
    for other in (first, second):
        rate(other, q["q1"], (a["d1"], 2), (a["d2"], 0))
        rate(other, q["q2"], (a["d3"], 3), (a["d4"], 1))
        rate(other, q["q3"], (a["d5"], 3), (a["d2"], 1))

    task = next_task(collection=corpus.collection, rater=rater)

    assert task.priority == PRIORITY_FEW_RATERS
    assert "to check that raters agree; each answer gets 3 raters" in task.reason
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))
    rate(rater, q["q2"], (a["d3"], 3), (a["d4"], 1))
    rate(rater, q["q3"], (a["d5"], 3), (a["d2"], 1))
    fourth = make_user("dan", collection=corpus.collection, role=Role.RATER)
    assert next_task(collection=corpus.collection, rater=fourth) is None


def test_is_overlap_question_samples_about_the_fraction():
    sampled = sum(
        is_overlap_question(collection_slug="cranfield", external_id=str(i), fraction=0.1)
        for i in range(2000)
    )

    assert 160 <= sampled <= 240
    assert is_overlap_question(collection_slug="c", external_id="x", fraction=0.1) == (
        is_overlap_question(collection_slug="c", external_id="x", fraction=0.1)
    )


def test_shuffled_is_stable_per_rater_and_question_and_differs_between_raters():
    ids = list(range(1, 21))

    mine = shuffled(ids, rater_id=1, question_id=7)

    assert mine == shuffled(list(reversed(ids)), rater_id=1, question_id=7)
    assert sorted(mine) == ids
    assert mine != ids
    assert mine != shuffled(ids, rater_id=2, question_id=7)


def test_task_for_question_all_rated_shows_them_for_review(corpus, rater):
    a, q = corpus.a, corpus.q
    rate(rater, q["q1"], (a["d1"], 2), (a["d2"], 0))

    task = task_for_question(collection=corpus.collection, rater=rater, question=q["q1"])

    assert sorted(task.answer_ids) == sorted([a["d1"].pk, a["d2"].pk])
    assert task.priority is None
    assert (
        task.reason == "You have rated every answer this question needs. You can still change your ratings."
    )


def test_rater_overview_counts_pairs_and_waiting_questions(corpus, rater, make_user):
    a, q = corpus.a, corpus.q
    other = make_user("sam", collection=corpus.collection, role=Role.RATER)
    rate(other, q["q1"], (a["d1"], 2), (a["d6"], 0))
    rate(rater, q["q3"], (a["d5"], 3))

    overview = rater_overview(collection=corpus.collection, rater=rater)

    # Candidates: q1 d1 d2, q2 d3 d4, q3 d5 d2; plus the rated q1/d6.
    assert overview == Overview(pairs_total=7, pairs_rated=3, questions_waiting=3, my_ratings=1)
