"""One question's priority for a rater (the queue's rules, :mod:`raters.next_task.picking`), its sort key
within the priority, the reason shown and the answers to show."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from corpus.models import Split
from raters.next_task.budget import budgeted
from raters.next_task.picking.state import State
from raters.next_task.reasons import (
    reason_disagreement,
    reason_few_raters,
    reason_judge_disagreement,
    reason_judge_uncertain,
    reason_low_ndcg,
    reason_unlabelled,
)
from raters.next_task.task import (
    DISPUTED_SPREAD,
    PRIORITY_DISAGREEMENT,
    PRIORITY_FEW_RATERS,
    PRIORITY_JUDGE_DISAGREEMENT,
    PRIORITY_JUDGE_UNCERTAIN,
    PRIORITY_LOW_NDCG,
    PRIORITY_UNLABELLED_IN_TEST,
)
from raters.next_task.untouched import Assessment


def spread_key(rater_id: int, question_id: int) -> bytes:
    """Orders equally urgent questions differently per rater, so raters working at once rarely collide."""
    return hashlib.sha256(f"spread:{rater_id}:{question_id}".encode()).digest()


def dedupe(*groups: Iterable[int]) -> list[int]:
    seen: dict[int, None] = {}
    for group in groups:
        for a in group:
            seen.setdefault(a, None)
    return list(seen)


def assess(state: State, question_id: int) -> Assessment:
    """(priority, sort key within the priority, reason, answers to show) of one question for the rater."""
    external_id, split = state.questions[question_id]
    labels = state.labels.get(question_id, {})
    mine = state.mine.get(question_id, frozenset())
    run = state.run.get(question_id)
    target = state.target(question_id)
    tie_break = spread_key(state.rater_id, question_id)

    run_top = run.top if run else []
    unlabelled = [a for a in run_top if a not in labels] if split == Split.TEST else []
    short = [a for a, (count, _) in labels.items() if count < target]
    disputed = [a for a, (_, spread) in labels.items() if spread >= DISPUTED_SPREAD]
    uncertain = state.judge_uncertain.get(question_id, [])
    pool = dedupe(
        budgeted(
            state.candidates.get(question_id, []),
            labels,
            budget=state.collection.rating_budget,
            target=target,
        ),
        run_top,
        short,
        disputed,
        state.judge_disputed.get(question_id, []),
    )
    # A judge's uncertain pair is shown, but it is the review step below that asks for it, not the
    # target number of raters: its reason must say why it is there.
    needs_raters = pool
    pool = dedupe(pool, uncertain)
    # A page shows at most k answers; the rest of the pool comes on the next visit.
    to_show = [a for a in pool if a not in mine][: state.k]

    k = state.k
    if unlabelled:
        reason = reason_unlabelled(count=len(unlabelled), k=k)
        return PRIORITY_UNLABELLED_IN_TEST, (-len(unlabelled), tie_break), reason, to_show

    needing = [a for a in needs_raters if labels.get(a, (0, 0))[0] < target and a not in mine]
    if needing:
        reason = reason_few_raters(
            count=len(needing), target=target, overlap=state.is_overlap(question_id), split=split
        )
        # The least-rated questions first, whatever their split (training first on a tie): training
        # questions teach, and the test questions are what the champion/challenger gate compares on, so
        # both fill up page by page. Training-first starved the gate: a first training found no rated
        # test question and could not promote a far better version (bench_loop, covidfaq: +0.17).
        spent = sum(count for count, _ in labels.values())
        return PRIORITY_FEW_RATERS, (spent, split != Split.TRAIN, tie_break), reason, to_show

    disputed_open = [a for a in disputed if a not in mine]
    if disputed_open:
        reason = reason_disagreement(count=len(disputed_open))
        return PRIORITY_DISAGREEMENT, (-len(disputed_open), tie_break), reason, to_show

    judged_open = [a for a in state.judge_disputed.get(question_id, []) if a not in mine]
    if judged_open:
        reason = reason_judge_disagreement(count=len(judged_open))
        return PRIORITY_JUDGE_DISAGREEMENT, (-len(judged_open), tie_break), reason, to_show

    uncertain_open = [a for a in uncertain if a not in mine]
    if uncertain_open:
        reason = reason_judge_uncertain(count=len(uncertain_open))
        return PRIORITY_JUDGE_UNCERTAIN, (-len(uncertain_open), tie_break), reason, to_show

    if run is not None and run.ndcg is not None and any(a not in mine for a in run_top):
        reason = reason_low_ndcg(ndcg=run.ndcg, k=k)
        return PRIORITY_LOW_NDCG, (run.ndcg, tie_break), reason, to_show

    return None, (), "", to_show
