"""What a rater should rate next: the queue that drives training.

Per rater, a question is offered only while it holds a pair the rater has not rated (and they have not
skipped the question). Questions are ranked by the first of these that applies, and the reason is shown:

1. test questions whose latest evaluation put unlabelled answers in the top k (they make NDCG@k uncertain);
2. pairs with fewer raters than the target (``collection.target_raters``; ``overlap_target_raters`` for a
   deterministic sample of questions used to measure agreement), the least-rated questions first
   (training before test on a tie), so training and test questions fill up together;
3. pairs whose raters disagree by 2 or more stars (a further opinion settles them);
4. questions with the lowest NDCG@k in the latest evaluation.

A question's candidates pool several rankings, not only the champion's: the default ranker's champion
and, for a builtin ranker, its latest challenger (the latest version that ranks differently) and the
``bm25`` baseline, each one's top k, interleaved (champion's 1st, the next ranking's 1st, ..., champion's
2nd, ...; an answer once). Raters who only ever see the champion's top k never rate the good answers it
misses, so no training can learn them; the other rankings show them (bench_loop: with the champion's top
k alone the champion closed 92% of covidfaq's gap to the upper bound and none of semeval16b's; pooled,
98% and all of it). The queue then adds the pairs it wants judged (unlabelled answers of the latest
evaluation's top k, labelled pairs short of raters or disputed). Until a ranker can answer, the top k
comes from plain term overlap between question and answers.

Budget: a question gets at most ``collection.rating_budget`` ratings from the pool (new pairs times
the raters each needs: one, or ``overlap_target_raters`` on the agreement sample); the latest
evaluation's unlabelled top k of a test question are asked for beyond it (they make NDCG@k uncertain).
A page shows at most k answers at a time, shuffled.

The candidate table (every question's top k) is computed once per collection state and cached, as asking
the ranker for every question on every request would be far too slow.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count, F, Max

from corpus.models import Answer, Collection, Question, Split
from evaluation.certainty import (
    VersionPair,
    deciding_pairs,
    unsure_training_pairs,
    version_pair,
    version_text,
)
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from rankers.backends import RankerError, RankerUnavailable, RankQuery, get_backend
from rankers.builtin import method_of
from rankers.models import BuildStatus, EmbeddingBuild, Ranker, RankerKind, RankerVersion
from rankers.selectors import default_ranker, ranking_version
from ratings.models import JudgeAccount, Label, Rating, Skip

logger = logging.getLogger(__name__)

# Disagreement (max − min stars) at which a pair asks for a further opinion.
DISPUTED_SPREAD = 2
# Pages stay short enough to judge carefully even when the collection's k is large.
MAX_TOP_K = 20
CANDIDATES_CACHE_SECONDS = 15 * 60
# A ranker that was unreachable is asked again soon rather than after the full cache period.
CANDIDATES_FALLBACK_CACHE_SECONDS = 60

PRIORITY_UNLABELLED_IN_TEST = 1
PRIORITY_FEW_RATERS = 2
PRIORITY_DISAGREEMENT = 3
# A judge (a model) grades a pair people rated 2 or more stars apart from them: a person's look shows
# which is right, and feeds the judge's agreement page ("Review the judge").
PRIORITY_JUDGE_DISAGREEMENT = 4
# A judge was least sure of its grade on a pair no person has rated: a person's grade there tells the
# agreement page most about the judge ("Review the judge", its other half).
PRIORITY_JUDGE_UNCERTAIN = 5
PRIORITY_LOW_NDCG = 6
# How many of each judge's least certain judgments (pairs no person rated) the queue offers people.
UNCERTAIN_REVIEWED = 20


@dataclass(frozen=True)
class Task:
    """One question for one rater: why it was chosen and which answers to show (in display order)."""

    question_id: int
    priority: int | None  # None: nothing left the queue wants from this rater here
    reason: str
    answer_ids: list[int]


@dataclass
class Overview:
    """A rater's view of a collection, as shown on their home page."""

    pairs_total: int
    pairs_rated: int
    questions_waiting: int
    my_ratings: int


def shuffled(answer_ids: Iterable[int], *, rater_id: int, question_id: int) -> list[int]:
    """Answers in an order that hides the ranker's rank but is stable for this rater and question.

    Stable so that a reload (or coming back later) shows the same page; per rater so that position bias,
    if any remains, falls on different answers for different raters.
    """
    return sorted(
        set(answer_ids),
        key=lambda a: hashlib.sha256(f"{rater_id}:{question_id}:{a}".encode()).digest(),
    )


def is_overlap_question(*, collection_slug: str, external_id: str, fraction: float) -> bool:
    """Whether the question is in the agreement sample: a stable hash, like the train/test split.

    A different salt from the split's hash so the sample is spread over train and test alike.
    """
    digest = hashlib.sha256(f"overlap\x00{collection_slug}\x00{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _spread_key(rater_id: int, question_id: int) -> bytes:
    """Orders equally urgent questions differently per rater, so raters working at once rarely collide."""
    return hashlib.sha256(f"spread:{rater_id}:{question_id}".encode()).digest()


# --- candidates -----------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "there",
        "their",
        "been",
        "were",
        "any",
        "some",
        "than",
        "then",
        "these",
        "those",
        "into",
    ]
)


def _terms(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if len(t) > 1 and t not in _STOPWORDS}


def term_overlap_ranking(
    *, questions: list[tuple[int, str]], answers: list[tuple[int, str]], k: int
) -> dict[int, list[int]]:
    """Each question's top k answers by shared terms, each term weighted by its rarity (idf).

    Only answers sharing at least one term are candidates. Ties go to the older answer.
    """
    postings: dict[str, list[int]] = defaultdict(list)
    for answer_id, text in answers:
        for term in _terms(text):
            postings[term].append(answer_id)
    n = max(len(answers), 1)
    table: dict[int, list[int]] = {}
    for question_id, text in questions:
        scores: dict[int, float] = defaultdict(float)
        for term in _terms(text):
            ids = postings.get(term)
            if not ids:
                continue
            weight = math.log(1 + n / len(ids))
            for answer_id in ids:
                scores[answer_id] += weight
        table[question_id] = [a for a, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]]
    return table


def _backend_for(ranker: Ranker, version: RankerVersion | None = None):
    """The backend ranking as ``version`` of the ranker does, or None when it cannot be built."""
    try:
        return get_backend(ranker, version)
    except Exception:  # a misconfigured ranker must not stop people from rating
        logger.warning("cannot build a backend for ranker %s; using term overlap", ranker.pk, exc_info=True)
        return None


def _ranker_table(
    ranker: Ranker,
    version: RankerVersion | None,
    questions: list[tuple[int, str, str]],
    ids_by_external: dict[str, int],
    k: int,
) -> tuple[dict[int, list[int]], bool]:
    """{question id: top k answer ids} from the ranker for the questions it could rank; and whether it was
    reachable throughout (False: the rest fall back to term overlap and the table is cached briefly)."""
    backend = _backend_for(ranker, version)
    if backend is None:
        return {}, True
    table: dict[int, list[int]] = {}
    try:
        for question_id, external_id, text in questions:
            try:
                ranking = backend.rank(RankQuery(external_id=external_id, text=text), k)
            except RankerUnavailable:
                logger.warning("ranker %s unavailable; term overlap for the remaining questions", ranker.pk)
                return table, False
            except RankerError:
                logger.warning(
                    "ranker %s failed on question %s; term overlap", ranker.pk, question_id, exc_info=True
                )
                continue
            table[question_id] = [ids_by_external[a] for a in ranking.ids if a in ids_by_external][:k]
        return table, True
    finally:
        close = getattr(backend, "close", None)  # HTTP backends hold a connection pool
        if close is not None:
            close()


def top_k(*, collection: Collection) -> int:
    return max(1, min(collection.ndcg_k, MAX_TOP_K))


def _ranks_as(version: RankerVersion) -> tuple:
    """What decides how a builtin version ranks: two versions with the same rank alike."""
    method = method_of(version)
    if method == "bm25":
        return (method,)
    params = (version.details or {}).get("params") if isinstance(version.details, dict) else None
    return (method, repr(params), version.model_file)


def pooled_versions(*, ranker: Ranker) -> list[RankerVersion | None]:
    """The versions whose top k the queue pools, in turn order: the champion (None: the ranker's own
    default); for a builtin ranker also its latest challenger (the latest other version that ranks
    differently from the champion) and the ``bm25`` baseline (the latest plain-BM25 version), each once.
    Other kinds rank the same whatever the version, so they pool nothing more."""
    champion = ranking_version(ranker=ranker)
    if ranker.kind != RankerKind.BUILTIN or champion is None:
        return [champion]
    others = list(
        RankerVersion.objects.filter(ranker=ranker).exclude(pk=champion.pk).order_by("-created_at", "-id")
    )
    pooled: list[RankerVersion | None] = [champion]
    seen = {_ranks_as(champion)}
    challenger = next((v for v in others if _ranks_as(v) not in seen), None)
    baseline = next((v for v in others if method_of(v) == "bm25"), None)
    for version in (challenger, baseline):
        if version is not None and _ranks_as(version) not in seen:
            pooled.append(version)
            seen.add(_ranks_as(version))
    return pooled


def interleaved(rankings: list[list[int]], depth: int) -> list[int]:
    """The rankings' top ``depth`` taken in turns (1st of each, then 2nd of each, ...), each answer once."""
    pooled: dict[int, None] = {}
    for rank in range(depth):
        for ranking in rankings:
            if rank < len(ranking):
                pooled.setdefault(ranking[rank])
    return list(pooled)


def _candidates_key(
    collection: Collection, ranker: Ranker | None, versions: list[RankerVersion | None]
) -> str:
    answers = Answer.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    questions = Question.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    latest = (
        RankerVersion.objects.filter(ranker=ranker)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)
        .first()
        if ranker
        else None
    )
    # A version using embeddings ranks as BM25 until they are built: a finished build is a new state.
    embeddings = (
        EmbeddingBuild.objects.filter(collection=collection, status=BuildStatus.SUCCEEDED)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    pooled = ",".join(str(v.pk) if v else "-" for v in versions)
    state = (
        f"{collection.pk}:{collection.ndcg_k}:{answers['n']}:{answers['t']}:{questions['n']}:{questions['t']}:"
        f"{ranker.pk if ranker else '-'}:{ranker.kind if ranker else '-'}:{ranker.config if ranker else '-'}:"
        f"{latest}:{pooled}:{embeddings}"
    )
    return "ratings:candidates:" + hashlib.sha256(state.encode()).hexdigest()


def candidate_table(*, collection: Collection) -> dict[int, list[int]]:
    """{question id: its pool of answer ids}: the top k of each pooled version of the default ranker,
    interleaved (``pooled_versions``, ``interleaved``), cached per collection state."""
    ranker = default_ranker(collection=collection)
    versions = pooled_versions(ranker=ranker) if ranker is not None else []
    key = _candidates_key(collection, ranker, versions)
    table = cache.get(key)
    if table is not None:
        return table
    k = top_k(collection=collection)
    questions = list(Question.objects.filter(collection=collection).values_list("id", "external_id", "text"))
    table, reachable = {}, True
    if ranker is not None:
        ids_by_external = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        rankings = []
        for version in versions:
            ranked, answered = _ranker_table(ranker, version, questions, ids_by_external, k)
            rankings.append(ranked)
            reachable = reachable and answered
        for question_id, _, _ in questions:
            found = [ranked[question_id] for ranked in rankings if question_id in ranked]
            if found:
                table[question_id] = interleaved(found, k)
    missing = [(q, text) for q, _, text in questions if q not in table]
    if missing:
        answers = [
            (a, f"{title} {body}")
            for a, title, body in Answer.objects.filter(collection=collection).values_list(
                "id", "title", "body"
            )
        ]
        table.update(term_overlap_ranking(questions=missing, answers=answers, k=k))
    cache.set(key, table, CANDIDATES_CACHE_SECONDS if reachable else CANDIDATES_FALLBACK_CACHE_SECONDS)
    return table


# --- the queue ------------------------------------------------------------------------------------


@dataclass
class _RunResult:
    top: list[int]  # answer ids in the run's top k (answers the collection knows)
    ndcg: float | None


@dataclass
class _State:
    """Everything the queue needs about one collection and one rater, loaded in a handful of queries."""

    collection: Collection
    rater_id: int
    k: int
    questions: dict[int, tuple[str, str]]  # id -> (external id, split)
    candidates: dict[int, list[int]]
    labels: dict[int, dict[int, tuple[int, int]]]  # question -> answer -> (rater count, disagreement)
    mine: set[tuple[int, int]]
    skipped: set[int]
    run: dict[int, _RunResult] = field(default_factory=dict)
    # question -> answers where a judge's stars are DISPUTED_SPREAD or more from people's label
    judge_disputed: dict[int, list[int]] = field(default_factory=dict)
    # question -> answers among each judge's UNCERTAIN_REVIEWED least certain judgments no person rated
    judge_uncertain: dict[int, list[int]] = field(default_factory=dict)

    def target(self, question_id: int) -> int:
        external_id, _ = self.questions[question_id]
        c = self.collection
        if is_overlap_question(collection_slug=c.slug, external_id=external_id, fraction=c.overlap_fraction):
            return max(c.overlap_target_raters, c.target_raters)
        return c.target_raters

    def is_overlap(self, question_id: int) -> bool:
        return self.target(question_id) > self.collection.target_raters


def latest_run(*, collection: Collection):
    """The latest successful evaluation of the collection's default ranker, or None."""
    ranker = default_ranker(collection=collection)
    if ranker is None:
        return None
    return (
        EvaluationRun.objects.filter(collection=collection, ranker=ranker, status=RunStatus.SUCCEEDED)
        .order_by("-finished_at", "-created_at", "-id")
        .first()
    )


def _load(collection: Collection, rater: User) -> _State:
    questions = {
        q: (external_id, split)
        for q, external_id, split in Question.objects.filter(collection=collection).values_list(
            "id", "external_id", "split"
        )
    }
    labels: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
    for q, a, count, spread in Label.objects.filter(question__collection=collection).values_list(
        "question_id", "answer_id", "rater_count", "disagreement"
    ):
        labels[q][a] = (count, spread)
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
    state = _State(
        collection=collection,
        rater_id=rater.pk,
        k=k,
        questions=questions,
        candidates=candidate_table(collection=collection),
        labels=labels,
        mine=mine,
        skipped=skipped,
    )
    state.judge_disputed = judge_disputed_pairs(collection=collection)
    state.judge_uncertain = judge_uncertain_pairs(collection=collection)
    run = latest_run(collection=collection)
    if run is not None:
        ids_by_external = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        run_k = max(1, min(run.ndcg_k, MAX_TOP_K))
        for q, ranked, ndcg in QuestionResult.objects.filter(run=run).values_list(
            "question_id", "ranked_answer_ids", "ndcg"
        ):
            top = [ids_by_external[a] for a in (ranked or [])[:run_k] if a in ids_by_external]
            state.run[q] = _RunResult(top=top, ndcg=ndcg)
    return state


def judge_disputed_pairs(*, collection: Collection) -> dict[int, list[int]]:
    """{question id: answer ids} where a judge's stars are DISPUTED_SPREAD or more from people's label
    (a label with at least one person's rating), biggest gap first."""
    judges = JudgeAccount.objects.filter(collection=collection).values("user_id")
    gaps: dict[tuple[int, int], int] = {}
    labels = {
        (q, a): gain
        for q, a, gain in Label.objects.filter(
            question__collection=collection, rater_count__gt=F("judge_count")
        ).values_list("question_id", "answer_id", "gain")
    }
    for q, a, stars in Rating.objects.filter(
        question__collection=collection, rater_id__in=judges
    ).values_list("question_id", "answer_id", "stars"):
        gain = labels.get((q, a))
        if gain is not None and abs(stars - gain) >= DISPUTED_SPREAD:
            gaps[(q, a)] = max(gaps.get((q, a), 0), abs(stars - gain))
    result: dict[int, list[int]] = defaultdict(list)
    for (q, a), _ in sorted(gaps.items(), key=lambda item: (-item[1], item[0])):
        result[q].append(a)
    return dict(result)


def judge_uncertain_pairs(
    *, collection: Collection, per_judge: int = UNCERTAIN_REVIEWED
) -> dict[int, list[int]]:
    """{question id: answer ids}: each judge's ``per_judge`` least certain judgments (``Rating.certainty``,
    smallest first, then pair ids; judgments without a certainty left out) on pairs no person rated.

    Certainties are compared within one judge only: each kind measures them on its own scale."""
    judges = list(JudgeAccount.objects.filter(collection=collection).values_list("user_id", flat=True))
    if not judges:
        return {}
    rated_by_people = set(
        Rating.objects.filter(question__collection=collection)
        .exclude(rater_id__in=judges)
        .values_list("question_id", "answer_id")
    )
    chosen: dict[tuple[int, int], None] = {}
    for judge in judges:
        taken = 0
        for q, a in (
            Rating.objects.filter(rater_id=judge, question__collection=collection, certainty__isnull=False)
            .order_by("certainty", "question_id", "answer_id")
            .values_list("question_id", "answer_id")
            .iterator()
        ):
            if (q, a) in rated_by_people:
                continue
            chosen.setdefault((q, a), None)
            taken += 1
            if taken >= per_judge:
                break
    result: dict[int, list[int]] = defaultdict(list)
    for q, a in chosen:
        result[q].append(a)
    return dict(result)


def _dedupe(*groups: Iterable[int]) -> list[int]:
    seen: dict[int, None] = {}
    for group in groups:
        for a in group:
            seen.setdefault(a, None)
    return list(seen)


def budgeted(
    candidates: list[int], labels: dict[int, tuple[int, int]], *, budget: int, target: int
) -> list[int]:
    """The pool's answers the queue asks about: those already labelled, then as many new ones as the
    question's rating budget still pays for (each new pair costs ``target`` ratings; labelled pairs short
    of raters are paid for first)."""
    spent = sum(count for count, _ in labels.values())
    owed = sum(max(0, target - labels[a][0]) for a in candidates if a in labels)
    fresh = max(0, budget - spent - owed) // max(1, target)
    new = set([a for a in candidates if a not in labels][:fresh])
    return [a for a in candidates if a in labels or a in new]


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# --- the reasons shown to raters ---------------------------------------------------------------------
# Raters are not expected to know the measures: a measure's name always comes with plain words saying what
# it is (tests/raters/test_queue_reasons.py checks every reason below for that).


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


def reason_low_ndcg(*, ndcg: float, k: int) -> str:
    return (
        f"Chosen because the ranker did worst on this question in the latest evaluation "
        f"({ndcg_words(k)}: {ndcg:.3f} of at most 1.000); another look at its top answers may show what "
        "it gets wrong."
    )


REASON_SKIPPED = "You skipped this question earlier. You can still rate its answers."
REASON_ALL_RATED = "You have rated every answer this question needs. You can still change your ratings."
REASON_NOT_NEEDED = "This question needs nothing more from you, but you are welcome to rate it."


def _assess(state: _State, question_id: int) -> tuple[int | None, tuple, str, list[int]]:
    """(priority, sort key within the priority, reason, answers to show) of one question for the rater."""
    external_id, split = state.questions[question_id]
    labels = state.labels.get(question_id, {})
    mine = state.mine
    run = state.run.get(question_id)
    target = state.target(question_id)
    spread_key = _spread_key(state.rater_id, question_id)

    run_top = run.top if run else []
    unlabelled = [a for a in run_top if a not in labels] if split == Split.TEST else []
    short = [a for a, (count, _) in labels.items() if count < target]
    disputed = [a for a, (_, spread) in labels.items() if spread >= DISPUTED_SPREAD]
    uncertain = state.judge_uncertain.get(question_id, [])
    pool = _dedupe(
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
    pool = _dedupe(pool, uncertain)
    # A page shows at most k answers; the rest of the pool comes on the next visit.
    to_show = [a for a in pool if (question_id, a) not in mine][: state.k]

    k = state.k
    if unlabelled:
        reason = reason_unlabelled(count=len(unlabelled), k=k)
        return PRIORITY_UNLABELLED_IN_TEST, (-len(unlabelled), spread_key), reason, to_show

    needing = [a for a in needs_raters if labels.get(a, (0, 0))[0] < target and (question_id, a) not in mine]
    if needing:
        reason = reason_few_raters(
            count=len(needing), target=target, overlap=state.is_overlap(question_id), split=split
        )
        # The least-rated questions first, whatever their split (training first on a tie): training
        # questions teach, and the test questions are what the champion/challenger gate compares on, so
        # both fill up page by page. Training-first starved the gate: a first training found no rated
        # test question and could not promote a far better version (bench_loop, covidfaq: +0.17).
        spent = sum(count for count, _ in labels.values())
        return PRIORITY_FEW_RATERS, (spent, split != Split.TRAIN, spread_key), reason, to_show

    disputed_open = [a for a in disputed if (question_id, a) not in mine]
    if disputed_open:
        reason = reason_disagreement(count=len(disputed_open))
        return PRIORITY_DISAGREEMENT, (-len(disputed_open), spread_key), reason, to_show

    judged_open = [a for a in state.judge_disputed.get(question_id, []) if (question_id, a) not in mine]
    if judged_open:
        reason = reason_judge_disagreement(count=len(judged_open))
        return PRIORITY_JUDGE_DISAGREEMENT, (-len(judged_open), spread_key), reason, to_show

    uncertain_open = [a for a in uncertain if (question_id, a) not in mine]
    if uncertain_open:
        reason = (
            f"Chosen because a judge (a model) was least sure of its grade for "
            f"{_plural(len(uncertain_open), 'answer', 'answers')} here and no person has rated "
            f"{'it' if len(uncertain_open) == 1 else 'them'}; your rating shows whether the judge was right."
        )
        return PRIORITY_JUDGE_UNCERTAIN, (-len(uncertain_open), spread_key), reason, to_show

    if run is not None and run.ndcg is not None and any((question_id, a) not in mine for a in run_top):
        reason = reason_low_ndcg(ndcg=run.ndcg, k=k)
        return PRIORITY_LOW_NDCG, (run.ndcg, spread_key), reason, to_show

    return None, (), "", to_show


def _ranked(
    state: _State, exclude: Iterable[int] = (), split: str = ""
) -> list[tuple[int, tuple, int, str, list[int]]]:
    excluded = set(exclude)
    ranked = []
    for question_id, (_, question_split) in state.questions.items():
        if question_id in state.skipped or question_id in excluded:
            continue
        if split and question_split != split:
            continue
        priority, key, reason, to_show = _assess(state, question_id)
        if priority is not None and to_show:
            ranked.append((priority, key, question_id, reason, to_show))
    ranked.sort(key=lambda item: (item[0], item[1]))
    return ranked


def next_task(
    *, collection: Collection, rater: User, exclude: Iterable[int] = (), split: str = ""
) -> Task | None:
    """The most useful question for the rater now, or None when the queue wants nothing more from them.

    ``exclude`` skips questions for this pick only (the rater pressed "next question"); ``split``
    ("train" or "test") keeps to one split, e.g. when a trainer needs more training labels to train.
    """
    state = _load(collection, rater)
    ranked = _ranked(state, exclude, split)
    if not ranked:
        return None
    priority, _, question_id, reason, to_show = ranked[0]
    return Task(question_id, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question_id))


def queue_pairs(*, collection: Collection, rater: User, limit: int) -> list[tuple[int, int]]:
    """The next ``limit`` (question id, answer id) pairs the queue would give ``rater``, in its order
    (the question's answers in candidate order, not shuffled): what a judge works through."""
    pairs: list[tuple[int, int]] = []
    for _, _, question_id, _, to_show in _ranked(_load(collection, rater)):
        for answer_id in to_show:
            pairs.append((question_id, answer_id))
            if len(pairs) >= limit:
                return pairs
    return pairs


def task_for_question(*, collection: Collection, rater: User, question: Question) -> Task:
    """The task for a question the rater opened directly (a link, a reload after the task expired).

    Shows what the rater has not rated yet; if that is nothing, every candidate with their ratings so
    they can review them.
    """
    state = _load(collection, rater)
    priority, _, reason, to_show = _assess(state, question.pk)
    if question.pk in state.skipped:
        priority, reason = None, REASON_SKIPPED
    if not to_show:
        pool = _dedupe(
            state.candidates.get(question.pk, []),
            state.run[question.pk].top if question.pk in state.run else [],
            (a for q, a in state.mine if q == question.pk),
        )
        to_show = pool
        reason = reason or REASON_ALL_RATED
    elif priority is None:
        reason = reason or REASON_NOT_NEEDED
    return Task(question.pk, priority, reason, shuffled(to_show, rater_id=rater.pk, question_id=question.pk))


def rater_overview(*, collection: Collection, rater: User) -> Overview:
    """Pairs the queue knows (candidates plus every rated pair), how many have a label, and questions
    still waiting for this rater."""
    state = _load(collection, rater)
    pairs = {(q, a) for q, answers in state.candidates.items() for a in answers}
    pairs.update((q, a) for q, answers in state.labels.items() for a in answers)
    for q, result in state.run.items():
        pairs.update((q, a) for a in result.top)
    rated = sum(len(answers) for answers in state.labels.values())
    return Overview(
        pairs_total=len(pairs),
        pairs_rated=rated,
        questions_waiting=len(_ranked(state)),
        my_ratings=len(state.mine),
    )


@dataclass(frozen=True)
class BudgetSummary:
    """Where a collection's rating budget goes (the progress page's "Rating budget")."""

    per_question: int
    single_raters: int
    single_pairs: int  # new answers a question rated by ``single_raters`` people each gets
    overlap_raters: int
    overlap_pairs: int  # ... and one of the agreement sample, rated by ``overlap_raters`` each
    overlap_percent: int
    training_questions: int
    training_ratings: int

    @property
    def training_spent_percent(self) -> int:
        total = self.per_question * self.training_questions
        return round(100 * self.training_ratings / total) if total else 0

    @property
    def training_per_question(self) -> float:
        return self.training_ratings / self.training_questions if self.training_questions else 0.0


def budget_summary(*, collection: Collection) -> BudgetSummary:
    """How the queue spends ``collection.rating_budget`` (see ``budgeted``), and what training questions
    have had so far (ratings of people and judges alike)."""
    single = collection.target_raters
    overlap = max(collection.overlap_target_raters, single)
    return BudgetSummary(
        per_question=collection.rating_budget,
        single_raters=single,
        single_pairs=collection.rating_budget // single,
        overlap_raters=overlap,
        overlap_pairs=collection.rating_budget // overlap,
        overlap_percent=round(100 * collection.overlap_fraction),
        training_questions=Question.objects.filter(collection=collection, split=Split.TRAIN).count(),
        training_ratings=Rating.objects.filter(
            question__collection=collection, question__split=Split.TRAIN
        ).count(),
    )


# --- modes: rate what decides, rate what the ranker is least sure of ----------------------------------

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


def _mode_pairs(
    collection: Collection, rater: User, mode: str, champion_id: object, challenger_id: object
) -> tuple[list[PairTask], VersionPair | None]:
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
    return tasks, pair


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
    pairs, pair = _mode_pairs(collection, rater, mode, champion_id, challenger_id)
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
