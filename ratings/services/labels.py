"""Labels: each pair's gain from its raters' stars (the median rule), recomputed after every write.

A label is the median of its raters' stars with a half rounded down (2 and 3 → 2; 1, 2, 3 → 2), so a
single lenient rater can't lift a pair above what most raters said. People's ratings always count; a
judge's only when a trainer trusts it (``counted_stars``). On PostgreSQL the recomputation is one
statement where the ratings are (``_labels_statement``, also prepared for the rating save in
``write``); elsewhere the same rule runs in Python. Both are tested to agree.

Both also mark each question whose pairs they recomputed (``LabelChange``, ``_changes_mark``): whatever a
write did to a pair's ratings, its label is recomputed here, so the mark is the feed of changes to ratings
and labels that the rating queue reads (``ratings.selectors.label_changes``) instead of every label of the
collection on every call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.utils import timezone

from corpus.models import Question
from ratings.models import JudgeAccount, Label, LabelChange, Rating

Pair = tuple[int, int]  # (question_id, answer_id)


def aggregate_stars(stars: Sequence[int]) -> tuple[int, float, int]:
    """(gain, mean, disagreement) of raters' stars: gain = median, a half rounded down; disagreement = max − min."""
    if not stars:
        raise ValueError("a label needs at least one rating")
    ordered = sorted(stars)
    n = len(ordered)
    middle = n // 2
    gain = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) // 2
    return gain, sum(ordered) / n, ordered[-1] - ordered[0]


def labels_recompute(*, pairs: Iterable[Pair]) -> int:
    """Recompute the labels of the given pairs from their ratings (a pair with no ratings loses its label).

    Returns the number of labels written. Call inside the transaction that changed the ratings.
    """
    wanted = set(pairs)
    if not wanted:
        return 0
    if connection.vendor == "postgresql":
        return _labels_recompute_postgresql(wanted)
    return _labels_recompute_python(wanted)


def counted_stars(
    ratings: Sequence[tuple[int, int | None]], trust: dict[int, tuple[bool, bool]]
) -> list[int]:
    """The stars that count toward one pair's label, from ``(stars, judge rater id or None)`` per rating.

    ``trust`` maps a judge's rater id to (counts, human_wins). People's ratings always count; a judge's
    counts only when trusted, and with ``human_wins`` only when no person rated the pair.
    """
    humans = [stars for stars, judge in ratings if judge is None]
    counted = list(humans)
    for stars, judge in ratings:
        if judge is None:
            continue
        counts, human_wins = trust.get(judge, (False, True))
        if counts and not (human_wins and humans):
            counted.append(stars)
    return counted


def _labels_recompute_python(wanted: set[Pair]) -> int:
    """Any database: read the pairs' ratings, keep those that count (``counted_stars``), aggregate with
    ``aggregate_stars``, upsert, delete the unrated."""
    return len(_labels_write_python(wanted))


def _labels_write_python(wanted: set[Pair]) -> dict[Pair, Label]:
    """``_labels_recompute_python``'s work; returns the labels written, by pair."""
    trust = {
        user_id: (counts, human_wins)
        for user_id, counts, human_wins in JudgeAccount.objects.values_list("user_id", "counts", "human_wins")
    }
    ratings_by_pair: dict[Pair, list[tuple[int, int | None]]] = defaultdict(list)
    question_ids = {q for q, _ in wanted}
    for chunk in _chunks(sorted(question_ids), 500):
        rows = Rating.objects.filter(question_id__in=chunk).values_list(
            "question_id", "answer_id", "stars", "rater_id"
        )
        for q, a, s, rater_id in rows:
            if (q, a) in wanted:
                ratings_by_pair[(q, a)].append((s, rater_id if rater_id in trust else None))
    labels = []
    labelled: set[Pair] = set()
    for (q, a), ratings in ratings_by_pair.items():
        stars = counted_stars(ratings, trust)
        if not stars:
            continue
        gain, mean, spread = aggregate_stars(stars)
        humans = sum(1 for _, judge in ratings if judge is None)
        labelled.add((q, a))
        labels.append(
            Label(
                question_id=q,
                answer_id=a,
                gain=gain,
                rater_count=len(stars),
                mean_stars=mean,
                disagreement=spread,
                judge_count=len(stars) - humans,
            )
        )
    Label.objects.bulk_create(
        labels,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["question", "answer"],
        update_fields=["gain", "rater_count", "mean_stars", "disagreement", "judge_count", "updated_at"],
    )
    unrated = wanted - labelled
    for q, a in unrated:
        Label.objects.filter(question_id=q, answer_id=a).delete()
    _changes_mark(question_ids)
    return {(label.question_id, label.answer_id): label for label in labels}


def label_changes_mark(*, question_ids: Iterable[int]) -> None:
    """Mark the questions' ratings or labels as changed by a write that did not go through the label
    recomputation (a bench's bulk delete of a collection's ratings and labels), so the processes keeping
    them (the rating queue) read them again. Call in the transaction of that write."""
    _changes_mark(question_ids)


def _changes_mark(question_ids: Iterable[int]) -> None:
    """Mark the questions' ratings and labels as changed by this transaction (``LabelChange``): on
    PostgreSQL with the transaction's id, elsewhere one more than the collection's highest mark (SQLite
    runs one writer at a time, so marks grow in the order writes commit). Rows in question order, so two
    transactions marking the same questions wait for each other instead of deadlocking."""
    change, question = LabelChange._meta.db_table, Question._meta.db_table
    if connection.vendor == "postgresql":
        mark = "pg_current_xact_id()::text::bigint"
    else:
        mark = (
            f"(SELECT coalesce(max(c.mark), 0) + 1 FROM {change} c WHERE c.collection_id = q.collection_id)"
        )
    with connection.cursor() as cursor:
        for chunk in _chunks(sorted(set(question_ids)), 500):
            cursor.execute(
                f"INSERT INTO {change} (question_id, collection_id, mark) "
                f"SELECT q.id, q.collection_id, {mark} FROM {question} q "
                f"WHERE q.id IN ({', '.join(['%s'] * len(chunk))}) ORDER BY q.id "
                "ON CONFLICT (question_id) DO UPDATE SET mark = excluded.mark",
                chunk,
            )


def _labels_recompute_postgresql(wanted: set[Pair]) -> int:
    """``labels_recompute`` in one statement: the same aggregate (see ``aggregate_stars``) computed where the
    ratings are. A rating save is on the hot path and this saves a round trip and most of the ORM work.

    percentile_cont(0.5) is the median, the mean of the two middle values for an even count, so its floor
    is the median with a half rounded down; the mean is a float division like Python's. Which ratings
    count is ``counted_stars``'s rule: people's always; a judge's (a rater with a JudgeAccount) only when
    trusted, and with human_wins only on pairs no person rated.
    """
    sql, params = _labels_recompute_sql(wanted)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        written, _ = cursor.fetchone()
    return written


def _labels_recompute_sql(wanted: set[Pair], *, returning_labels: bool = False) -> tuple[str, list[Any]]:
    """The statement of ``_labels_recompute_postgresql`` and its parameters; it returns (written, removed),
    or with ``returning_labels`` the labels written: (question, answer, gain, rater count) rows."""
    question_ids, answer_ids = zip(*wanted, strict=True)
    sql = _labels_statement("%s", "%s", "%s", returning_labels=returning_labels)
    return sql, [list(question_ids), list(answer_ids), timezone.now()]


def _labels_statement(questions: str, answers: str, now: str, *, returning_labels: bool) -> str:
    """``_labels_recompute_sql``'s text with these placeholders for its three parameters."""
    label, rating, judge = Label._meta.db_table, Rating._meta.db_table, JudgeAccount._meta.db_table
    change, question = LabelChange._meta.db_table, Question._meta.db_table
    # PostgreSQL runs a data-modifying CTE (``removed``, ``marked``: ``_changes_mark`` in SQL) to completion
    # whether the final SELECT reads it or not.
    result = (
        "SELECT * FROM written"
        if returning_labels
        else "SELECT (SELECT count(*) FROM written), (SELECT count(*) FROM removed)"
    )
    return f"""
        WITH wanted(question_id, answer_id) AS (SELECT * FROM unnest({questions}::bigint[], {answers}::bigint[])),
        pair_ratings AS (
            SELECT r.question_id, r.answer_id, r.stars, j.id IS NOT NULL AS by_judge,
                   coalesce(j.counts, true) AS counts, coalesce(j.human_wins, false) AS human_wins
            FROM {rating} r JOIN wanted w ON r.question_id = w.question_id AND r.answer_id = w.answer_id
            LEFT JOIN {judge} j ON j.user_id = r.rater_id
        ),
        counted AS (
            SELECT p.* FROM pair_ratings p
            WHERE p.counts AND NOT (p.human_wins AND EXISTS (
                SELECT 1 FROM pair_ratings h
                WHERE h.question_id = p.question_id AND h.answer_id = p.answer_id AND NOT h.by_judge
            ))
        ),
        aggregated AS (
            SELECT question_id, answer_id,
                   floor(percentile_cont(0.5) WITHIN GROUP (ORDER BY stars))::smallint AS gain,
                   count(*) AS rater_count,
                   sum(stars)::float8 / count(*) AS mean_stars,
                   (max(stars) - min(stars))::smallint AS disagreement,
                   count(*) FILTER (WHERE by_judge) AS judge_count
            FROM counted
            GROUP BY question_id, answer_id
        ),
        written AS (
            INSERT INTO {label} (question_id, answer_id, gain, rater_count, mean_stars, disagreement,
                                 judge_count, updated_at)
            SELECT question_id, answer_id, gain, rater_count, mean_stars, disagreement, judge_count, {now}
            FROM aggregated
            ON CONFLICT (question_id, answer_id) DO UPDATE SET
                gain = EXCLUDED.gain, rater_count = EXCLUDED.rater_count, mean_stars = EXCLUDED.mean_stars,
                disagreement = EXCLUDED.disagreement, judge_count = EXCLUDED.judge_count,
                updated_at = EXCLUDED.updated_at
            RETURNING question_id, answer_id, gain, rater_count
        ),
        removed AS (
            DELETE FROM {label} l USING wanted w
            WHERE l.question_id = w.question_id AND l.answer_id = w.answer_id
              AND NOT EXISTS (
                  SELECT 1 FROM aggregated a WHERE a.question_id = w.question_id AND a.answer_id = w.answer_id
              )
            RETURNING 1
        ),
        marked AS (
            INSERT INTO {change} (question_id, collection_id, mark)
            SELECT q.id, q.collection_id, pg_current_xact_id()::text::bigint FROM {question} q
            WHERE q.id IN (SELECT question_id FROM wanted) ORDER BY q.id
            ON CONFLICT (question_id) DO UPDATE SET mark = EXCLUDED.mark
            RETURNING 1
        )
        {result}
    """


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
