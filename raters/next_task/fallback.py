"""What the queue serves while a collection has no candidate table yet (its first build is under way in
the background, :mod:`.refresh`): term-overlap candidates (:mod:`.term_overlap`, as the table's job uses
until a ranker answers) for a few questions only, those with the fewest ratings, ranked over at most
``FALLBACK_ANSWERS`` answers. So a rater's request builds no table, and its cost does not grow with the
number of answers: about ``FALLBACK_QUESTIONS`` questions over ``FALLBACK_ANSWERS`` answers, once per
process and collection state (kept while the state stays), a few tens of milliseconds.

The evaluation's top k is not read here (that is the job's work, over every question): until the first
table is saved, the queue offers these questions by the number of raters their pairs still need.
"""

from __future__ import annotations

from django.db.models import Count

from corpus.models import Collection, Question
from raters.next_task.pool import answer_texts, top_k
from raters.next_task.term_overlap import term_overlap_ranking

# Enough questions for several raters at once to each get a different one (the queue spreads equally
# urgent questions over raters), few enough to rank in a moment.
FALLBACK_QUESTIONS = 20
# The answers ranked: all of them in a collection up to this size (the Cranfield demo has 1,400); the
# first ones (by id) in a larger one, whose first table takes longer to build.
FALLBACK_ANSWERS = 2000

# Per process: collection id -> (the state it was made for, {question id: its top k answer ids}).
_KEPT: dict[int, tuple[tuple, dict[int, list[int]]]] = {}


def fallback_table(*, collection: Collection, state: dict) -> tuple[tuple, dict[int, list[int]]]:
    """(its key, {question id: top k answer ids by term overlap}) for the ``FALLBACK_QUESTIONS`` questions
    with the fewest ratings, over the first ``FALLBACK_ANSWERS`` answers; made once per process for the
    collection's ``state`` (``table.table_state``: its answers, ranker and questions)."""
    key = ("term overlap", collection.pk, state["rank"], state["questions"])
    kept = _KEPT.get(collection.pk)
    if kept is not None and kept[0] == key:
        return kept
    questions = list(
        Question.objects.filter(collection=collection)
        .annotate(rated=Count("ratings"))
        .order_by("rated", "id")
        .values_list("id", "text")[:FALLBACK_QUESTIONS]
    )
    answers = answer_texts(collection=collection, limit=FALLBACK_ANSWERS) if questions else []
    table = term_overlap_ranking(questions=questions, answers=answers, k=top_k(collection=collection))
    kept = _KEPT[collection.pk] = (key, table)
    return kept
