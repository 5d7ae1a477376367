"""Until a ranker can answer, a question's top k comes from plain term overlap between question and answers."""

from __future__ import annotations

import math
from collections import defaultdict

from raters.next_task.terms import terms_of


def term_overlap_ranking(
    *, questions: list[tuple[int, str]], answers: list[tuple[int, str]], k: int
) -> dict[int, list[int]]:
    """Each question's top k answers by shared terms, each term weighted by its rarity (idf).

    Only answers sharing at least one term are candidates. Ties go to the older answer.
    """
    postings: dict[str, list[int]] = defaultdict(list)
    for answer_id, text in answers:
        for term in terms_of(text):
            postings[term].append(answer_id)
    n = max(len(answers), 1)
    table: dict[int, list[int]] = {}
    for question_id, text in questions:
        scores: dict[int, float] = defaultdict(float)
        for term in terms_of(text):
            ids = postings.get(term)
            if not ids:
                continue
            weight = math.log(1 + n / len(ids))
            for answer_id in ids:
                scores[answer_id] += weight
        table[question_id] = [a for a, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]]
    return table
