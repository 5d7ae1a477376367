"""The queue's modes: ``decide`` rates the pairs that decide whether the challenger beats the champion
(or how sure we are of the headline); ``unsure`` rates the training pairs the ranker is least sure of."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User

from corpus.models import Collection, Question, Split
from evaluation.certainty import (
    VersionPair,
    deciding_pairs,
    unsure_training_pairs,
    version_pair,
    version_text,
    why_nothing_decides,
)
from rankers.selectors import default_ranker
from raters.next_task.pool import top_k
from raters.next_task.reasons import ndcg_words
from raters.next_task.table import candidate_table
from raters.next_task.task import PRIORITY_FEW_RATERS, PRIORITY_UNLABELLED_IN_TEST, Task, shuffled
from ratings.models import Rating, Skip

MODE_DECIDE = "decide"
MODE_UNSURE = "unsure"
MODES = (MODE_DECIDE, MODE_UNSURE)
# A question's page shows its deciding pairs down to this share of its best one (the rest decide little).
DECIDING_SHARE = 0.05


@dataclass(frozen=True)
class PairTask:
    """One pair to rate, with the plain reason shown to the rater and its value (the expected reduction
    of the doubt, see ``evaluation.uncertainty.settle``; for ``unsure``, the variance of its stars)."""

    question_id: int
    answer_id: int
    reason: str
    value: float


def mode_reason(*, mode: str, pair: VersionPair | None, k: int, plural: bool = False) -> str:
    """The plain reason of a mode's pick ("this answer decides whether version v4 is better than ...")."""
    these = "these answers decide" if plural else "this answer decides"
    their = "their ratings" if plural else "its rating"
    settle = "settle" if plural else "settles"
    narrow = "narrow" if plural else "narrows"
    teach = "teach" if plural else "teaches"
    if mode == MODE_UNSURE:
        return (
            "Chosen because the ranker is least sure about this training question's answers: "
            f"{their} {teach} it most."
        )
    if pair is not None and pair.challenger is not None:
        return (
            f"Chosen because {these} whether {version_text(pair.challenger)} is better than "
            f"{version_text(pair.champion)}: {their} {settle} that comparison faster than any others."
        )
    return (
        f"Chosen because {these} how sure we are of the ranker's overall score ({ndcg_words(k)}): "
        f"{their} {narrow} the doubt about it most."
    )


def _decide_pair(collection: Collection, champion_id: object, challenger_id: object) -> VersionPair | None:
    """The default ranker's versions that decide mode compares (None without a ranker or a version)."""
    ranker = default_ranker(collection=collection)
    if ranker is None:
        return None
    return version_pair(ranker=ranker, champion_id=champion_id, challenger_id=challenger_id)


def mode_summary(
    *, collection: Collection, mode: str, champion_id: object = None, challenger_id: object = None
) -> str:
    """What a rater in this queue mode is rating, naming the versions the mode compares (the same pair as
    its picks' reasons: :func:`evaluation.certainty.version_pair`)."""
    if mode == MODE_UNSURE:
        return "You are rating the training questions the ranker is least sure of."
    pair = _decide_pair(collection, champion_id, challenger_id)
    if pair is not None and pair.challenger is not None:
        return (
            f"You are rating the answers that decide whether {version_text(pair.challenger)} is better than "
            f"{version_text(pair.champion)}."
        )
    return "You are rating the answers that decide how sure we are of the ranker's score."


@dataclass(frozen=True)
class ModePicks:
    """What a mode wants from a rater, and when that is nothing, why (a plain sentence; "" otherwise)."""

    pairs: list[PairTask]
    why_none: str


def _mode_pairs(
    collection: Collection, rater: User, mode: str, champion_id: object, challenger_id: object
) -> tuple[list[PairTask], VersionPair | None, int]:
    """The mode's pairs for this rater, the versions compared, and how many pairs the mode chose before
    those the rater rated or skipped were left out."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    mine = set(
        Rating.objects.filter(rater=rater, question__collection=collection).values_list(
            "question_id", "answer_id"
        )
    )
    skipped = set(
        Skip.objects.filter(rater=rater, question__collection=collection).values_list(
            "question_id", flat=True
        )
    )
    k = top_k(collection=collection)
    pair = None
    if mode == MODE_DECIDE:
        pair = _decide_pair(collection, champion_id, challenger_id)
        chosen = deciding_pairs(collection=collection, pair=pair) if pair else []
    else:
        train = list(
            Question.objects.filter(collection=collection, split=Split.TRAIN).values_list("id", flat=True)
        )
        chosen = unsure_training_pairs(
            collection=collection, candidates=candidate_table(collection=collection), question_ids=train
        )
    reason = mode_reason(mode=mode, pair=pair, k=k)
    tasks = [
        PairTask(p.question_id, p.answer_id, reason, p.value)
        for p in chosen
        if (p.question_id, p.answer_id) not in mine and p.question_id not in skipped
    ]
    return tasks, pair, len(chosen)


def _why_none(collection: Collection, mode: str, pair: VersionPair | None, chosen: int) -> str:
    if chosen:
        return (
            f"You have rated (or skipped the question of) each of the {chosen} pair{'s' if chosen != 1 else ''} "
            f"this mode wants."
        )
    if mode == MODE_UNSURE:
        if not Question.objects.filter(collection=collection, split=Split.TRAIN).exists():
            return "The collection has no training questions."
        return (
            f"The ranker is sure of every answer in the training questions' top {top_k(collection=collection)} "
            "that nobody has rated (or every one is rated)."
        )
    if pair is None:
        if default_ranker(collection=collection) is None:
            return (
                "The collection has no default ranker, so there is no version whose score a rating decides."
            )
        return "The default ranker has no version yet, so there is no score a rating decides."
    return why_nothing_decides(collection=collection, pair=pair)


def mode_picks(
    *,
    collection: Collection,
    rater: User,
    mode: str,
    champion_id: object = None,
    challenger_id: object = None,
) -> ModePicks:
    """``mode_pairs``, and when it finds nothing, why: the API's queue says so before it offers what the
    rating page would."""
    pairs, pair, chosen = _mode_pairs(collection, rater, mode, champion_id, challenger_id)
    return ModePicks(pairs, "" if pairs else _why_none(collection, mode, pair, chosen))


def mode_pairs(
    *,
    collection: Collection,
    rater: User,
    mode: str,
    champion_id: object = None,
    challenger_id: object = None,
) -> list[PairTask]:
    """Every pair the mode wants from this rater, most useful first (never one they rated, nor one of a
    question they skipped).

    ``decide``: unrated test pairs by how much their rating would settle whether the challenger beats the
    champion (the headline without a challenger; ``evaluation.certainty.deciding_pairs``). ``unsure``:
    unrated pairs in training questions' top k by how unsure the relevance model is of their stars
    (``evaluation.certainty.unsure_training_pairs``). ``ValueError`` for another mode.
    """
    return _mode_pairs(collection, rater, mode, champion_id, challenger_id)[0]


def next_mode_task(
    *,
    collection: Collection,
    rater: User,
    mode: str,
    exclude: Iterable[int] = (),
    champion_id: object = None,
    challenger_id: object = None,
) -> Task | None:
    """The question holding the mode's most useful pair, showing its useful pairs (those worth at least
    ``DECIDING_SHARE`` of its best one, at most k), or None when the mode wants nothing more."""
    excluded = set(exclude)
    pairs, pair, _ = _mode_pairs(collection, rater, mode, champion_id, challenger_id)
    pairs = [p for p in pairs if p.question_id not in excluded]
    if not pairs:
        return None
    first = pairs[0]
    k = top_k(collection=collection)
    answers = [
        p.answer_id
        for p in pairs
        if p.question_id == first.question_id and p.value >= DECIDING_SHARE * first.value
    ][:k]
    priority = PRIORITY_UNLABELLED_IN_TEST if mode == MODE_DECIDE else PRIORITY_FEW_RATERS
    reason = mode_reason(mode=mode, pair=pair, k=k, plural=len(answers) > 1)
    return Task(
        first.question_id,
        priority,
        reason,
        shuffled(answers, rater_id=rater.pk, question_id=first.question_id),
    )
