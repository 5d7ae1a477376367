"""The reasons shown to raters ("Chosen because …").

Raters are not expected to know the measures: a measure's name always comes with plain words saying what
it is (tests/raters/test_next_task_reasons.py checks every reason below for that).
"""

from __future__ import annotations

from corpus.models import Split
from evaluation.numbers import figure
from raters.next_task.task import DISPUTED_SPREAD


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def ndcg_words(k: int) -> str:
    """NDCG@k named with what it means, for raters."""
    return f"NDCG@{k}, the score of how well the ranker puts the best answers in its top {k}"


def reason_unlabelled(*, count: int, k: int) -> str:
    return (
        f"Chosen because {_plural(count, 'answer', 'answers')} in this test question's top {k} "
        f"{'is' if count == 1 else 'are'} not rated yet, so we cannot tell how well the ranker did on it "
        f"({ndcg_words(k)})."
    )


def reason_few_raters(*, count: int, target: int, overlap: bool, split: str) -> str:
    why_target = (
        f"this question is one of those several people rate, to check that raters agree; each answer "
        f"gets {_plural(target, 'rater', 'raters')}"
        if overlap
        else f"the target is {_plural(target, 'rater', 'raters')} per answer"
    )
    split_note = (
        "It is a training question: its ratings teach the ranker."
        if split == Split.TRAIN
        else "It is a test question: its ratings measure the ranker."
    )
    return (
        f"Chosen because {_plural(count, 'answer needs', 'answers need')} more ratings ({why_target}). "
        f"{split_note}"
    )


def reason_disagreement(*, count: int) -> str:
    return (
        f"Chosen because raters disagree by {DISPUTED_SPREAD} or more stars on "
        f"{_plural(count, 'answer', 'answers')}; a further opinion settles them."
    )


def reason_judge_disagreement(*, count: int) -> str:
    return (
        f"Chosen because a judge (a model) grades {_plural(count, 'answer', 'answers')} "
        f"{DISPUTED_SPREAD} or more stars apart from people; your rating shows which is right."
    )


def reason_judge_uncertain(*, count: int) -> str:
    return (
        f"Chosen because a judge (a model) was least sure of its grade for "
        f"{_plural(count, 'answer', 'answers')} here and no person has rated "
        f"{'it' if count == 1 else 'them'}; your rating shows whether the judge was right."
    )


def reason_low_ndcg(*, ndcg: float, k: int) -> str:
    return (
        f"Chosen because the ranker did worst on this question in the latest evaluation "
        f"({ndcg_words(k)}: {figure(ndcg)} of at most 1.000); another look at its top answers may show what "
        "it gets wrong."
    )


REASON_SKIPPED = "You skipped this question earlier. You can still rate its answers."
REASON_ALL_RATED = "You have rated every answer this question needs. You can still change your ratings."
REASON_NOT_NEEDED = "This question needs nothing more from you, but you are welcome to rate it."
