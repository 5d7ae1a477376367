"""Every reason the queue can show a rater ("Chosen because …") names a measure only with plain words
saying what it is, and uses none of the team's shorthand."""

from __future__ import annotations

import itertools
import re

import pytest

from corpus.models import Split
from evaluation.certainty import VersionPair
from rankers.models import RankerVersion
from raters.next_task.modes import MODES, mode_reason
from raters.next_task.reasons import (
    REASON_ALL_RATED,
    REASON_NOT_NEEDED,
    REASON_SKIPPED,
    reason_disagreement,
    reason_few_raters,
    reason_judge_disagreement,
    reason_judge_uncertain,
    reason_low_ndcg,
    reason_unlabelled,
)

# Shorthand raters are not expected to know; each may appear only next to its plain words.
JARGON = {
    r"NDCG@\d+": "the score of how well the ranker puts the best answers in its top",
}
BANNED = [r"judged@\d+", r"overlap set", r"overlap sample", r"\bCI\b", r"p-value"]


def every_reason() -> list[str]:
    reasons = [REASON_SKIPPED, REASON_ALL_RATED, REASON_NOT_NEEDED]
    for count, k in itertools.product((1, 2), (5, 10)):
        reasons.append(reason_unlabelled(count=count, k=k))
        reasons.append(reason_disagreement(count=count))
        reasons.append(reason_judge_disagreement(count=count))
        reasons.append(reason_judge_uncertain(count=count))
        reasons.append(reason_low_ndcg(ndcg=0.25, k=k))
        for overlap, split in itertools.product((True, False), (Split.TRAIN, Split.TEST)):
            reasons.append(reason_few_raters(count=count, target=count + 1, overlap=overlap, split=split))
    champion, challenger = RankerVersion(label="v3"), RankerVersion(label="v4")
    for mode, pair, plural in itertools.product(
        MODES,
        (None, VersionPair(champion=champion, challenger=None), VersionPair(champion, challenger)),
        (False, True),
    ):
        reasons.append(mode_reason(mode=mode, pair=pair, k=10, plural=plural))
    return reasons


def jargon_without_plain_words(reason: str) -> list[str]:
    found = [b for b in BANNED if re.search(b, reason, flags=re.IGNORECASE)]
    for term, words in JARGON.items():
        if re.search(term, reason) and words not in reason:
            found.append(term)
    return found


@pytest.mark.parametrize("reason", every_reason())
def test_queue_reason_has_plain_words_for_every_measure(reason):
    assert jargon_without_plain_words(reason) == []


def test_queue_reason_unlabelled_exact_text():
    assert reason_unlabelled(count=2, k=10) == (
        "Chosen because 2 answers in this test question's top 10 are not rated yet, so we cannot tell how "
        "well the ranker did on it (NDCG@10, the score of how well the ranker puts the best answers in its "
        "top 10)."
    )


def test_queue_reason_checker_catches_bare_jargon():
    assert jargon_without_plain_words("Chosen because its NDCG@10 is uncertain.") == [r"NDCG@\d+"]
    assert jargon_without_plain_words("Chosen because judged@10 is low.") == [r"judged@\d+"]
    assert jargon_without_plain_words("Chosen because it is in the overlap set.") == [r"overlap set"]
