"""A training in plain words, for the top of a ranker's block on the Rankers page: what it tried, how
each candidate did in cross-validation, what it kept and why, and what would help next.

Pure presentation: no queries. Everything comes from what the learner stored on the version
(``RankerVersion.details``: the candidates with their cross-validated NDCG, ``cv_judged_only``, the
training questions, ``rated_per_question``), its comparison with the champion (``RankerVersion.comparison``,
the figures the training's message shows) and the training's decision. Figures are written by
:mod:`evaluation.numbers`. What would help next is said from those figures only: the app cannot know
beforehand whether more ratings will be enough, so it never promises it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation import measures
from evaluation.numbers import count, figure, number, percent, signed
from rankers.models import RankerKind, RankerVersion
from trainer.learner import MIN_QUESTIONS
from trainer.models import Training
from trainer.ranker_display import Comparison, VersionDetails

# The candidates as a newcomer reads them: what each is, and whether it learns from ratings.
CANDIDATE_NAMES = {
    "bm25": "Plain BM25",
    "engine": "The engine's own order",
    "fusion": "BM25 + semantic similarity, untrained fusion",
    "learned-fusion": "Learned fusion of BM25, semantic similarity, RM3 and rating propagation",
    "lambdamart": "LambdaMART",
}
ENGINE_CANDIDATE_NAMES = {
    "fusion": "The engine's score + semantic similarity, untrained fusion",
    "learned-fusion": "Learned fusion of the engine's score, BM25, semantic similarity, RM3 and rating "
    "propagation",
}

# A candidate in a sentence: "Kept: the untrained fusion, which needs no ratings."
CANDIDATE_SHORT = {
    "bm25": "plain BM25",
    "engine": "the engine's own order",
    "fusion": "the untrained fusion",
    "learned-fusion": "the learned fusion",
    "lambdamart": "LambdaMART",
}

# A model in a few words, for "v2 is the same model as v1 (the untrained fusion)".
MODEL_NAMES = {
    "bm25": "plain BM25",
    "fusion": "the untrained fusion",
    "learned-fusion": "a learned fusion",
    "lambdamart": "LambdaMART",
}


def model_name(version: RankerVersion, kind: str) -> str:
    """A version's model in a few words: "the untrained fusion", "the engine as it is"."""
    if kind != RankerKind.BUILTIN and version.method in ("", "engine"):
        return "the engine as it is" if kind == RankerKind.ENGINE else "the service as it is"
    return MODEL_NAMES.get(version.method or "bm25", version.method)


def candidate_name(name: str, *, engine: bool) -> str:
    if engine and name in ENGINE_CANDIDATE_NAMES:
        return ENGINE_CANDIDATE_NAMES[name]
    return CANDIDATE_NAMES.get(name, name)


def _details(version: RankerVersion) -> dict[str, Any]:
    return version.details if isinstance(version.details, dict) else {}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cv(candidate: dict[str, Any]) -> float:
    """A candidate's cross-validated NDCG, −1 when it has none (it then never counts as the best)."""
    value = number(candidate.get("cv_ndcg"))
    return -1.0 if value is None else value


def _candidates(version: RankerVersion) -> list[dict[str, Any]]:
    raw = _details(version).get("candidates")
    return [c for c in raw if isinstance(c, dict) and c.get("name")] if isinstance(raw, list) else []


def _kept_untrained(version: RankerVersion) -> bool:
    """Whether training kept a candidate that needs no ratings although learned ones were tried."""
    candidates = _candidates(version)
    chosen = next((c for c in candidates if c.get("chosen")), None)
    return chosen is not None and not chosen.get("trained") and any(c.get("trained") for c in candidates)


def same_model_sentence(*, version: RankerVersion, same_as: RankerVersion, kind: str) -> str:
    """v2 is the same model as v1 (the untrained fusion): training kept it because no learned model beat
    it in cross-validation."""
    text = f"{version.label} is the same model as {same_as.label} ({model_name(same_as, kind)})"
    details = _details(version)
    if _kept_untrained(version):
        text += ": training kept it because no model that learns from ratings beat it in cross-validation"
    elif not _candidates(version) and details.get("reason"):
        text += (
            ": training kept it because too few training questions have a relevant rated answer to learn from"
        )
    return text + "."


@dataclass(frozen=True)
class CandidateRow:
    """One candidate of the table: its name in words, its cross-validated NDCG@k, kept or not."""

    words: str
    trained: bool
    cv_ndcg: str
    kept: bool


@dataclass(frozen=True)
class TrainingExplanation:
    """What the latest training did, in words (``of`` builds it; every field is ready to show)."""

    training: Training
    version: RankerVersion
    cv_heading: str  # "cross-validated NDCG@10" (evaluation.measures.NDCG_CV)
    tried: str
    candidates: list[CandidateRow]
    kept: str  # says when the version is the same model as an earlier one
    test: str
    next_step: str
    per_question: str  # "66 of the 93 training questions have fewer than 10 rated answers; …"
    technical: VersionDetails
    decision_reason: str

    @classmethod
    def of(cls, *, training: Training, same_as: RankerVersion | None, k: int) -> TrainingExplanation | None:
        version = training.version
        if version is None:
            return None
        details = _details(version)
        engine = details.get("first_stage") == "engine"
        judged_only = details.get("cv_judged_only") is True
        cv_heading = measures.name(measures.NDCG_CV, k)
        rows = [
            CandidateRow(
                words=candidate_name(str(c["name"]), engine=engine),
                trained=bool(c.get("trained")),
                cv_ndcg=figure(c.get("cv_ndcg")),
                kept=bool(c.get("chosen")),
            )
            for c in _candidates(version)
        ]
        comparison = Comparison.of(version.comparison, k=k)
        return cls(
            training=training,
            version=version,
            cv_heading=cv_heading,
            tried=_tried(version, rows, judged_only=judged_only),
            candidates=rows,
            kept=_kept(version, engine=engine, same_as=same_as),
            test=_test(version, comparison, training.decision),
            next_step=_next_step(version, comparison, k=k, decision=training.decision),
            per_question=_per_question(version),
            technical=VersionDetails.of(version),
            decision_reason=training.decision_reason,
        )


def _tried(version: RankerVersion, rows: list[CandidateRow], *, judged_only: bool) -> str:
    """It tried 4 ways of ranking, 2 of which learn from the 751 ratings of 93 training questions, and scored
    each by cross-validation (under the heading "What the training that made v2 did")."""
    details = _details(version)
    questions = details.get("training_questions", details.get("question_count"))
    ratings = f"the {count(version.label_count)} rating{'s' if version.label_count != 1 else ''}"
    if isinstance(questions, int) and not isinstance(questions, bool):
        ratings += f" of {count(questions)} training question{'s' if questions != 1 else ''}"
    if not rows:
        reason = details.get("reason")
        return (
            f"It had {ratings} and tried no model that learns from them. " + (str(reason) if reason else "")
        ).strip()
    learned = sum(1 for row in rows if row.trained)
    scored = ", rated answers only" if judged_only else ""
    return (
        f"It tried {len(rows)} ways of ranking, {learned} of which learn "
        f"from {ratings}, and scored each by cross-validation (on questions it had not learned from{scored})."
    )


def _per_question(version: RankerVersion) -> str:
    details = _details(version)
    spread = _dict(details.get("rated_per_question"))
    questions, under, to_k, k = (
        details.get("training_questions"),
        spread.get("under_k"),
        spread.get("to_k"),
        spread.get("k"),
    )
    if not all(isinstance(x, int) for x in (questions, under, to_k, k)):
        return ""
    return (
        f"{count(under)} of the {count(questions)} training questions have fewer than {k} rated answers; "
        f"{count(to_k)} ratings would bring each of them to {k}."
    )


def _short(name: str, *, engine: bool) -> str:
    if engine and name == "fusion":
        return "the untrained fusion of the engine's score and semantic similarity"
    return CANDIDATE_SHORT.get(name, name)


def _kept(version: RankerVersion, *, engine: bool, same_as: RankerVersion | None) -> str:
    """What was kept and why, in the cross-validation's figures."""
    candidates = _candidates(version)
    chosen = next((c for c in candidates if c.get("chosen")), None)
    if chosen is None:
        return ""
    kept = _short(str(chosen["name"]), engine=engine)
    same = f" {version.label} is therefore the same model as {same_as.label}." if same_as else ""
    gain = number(_details(version).get("min_cv_gain"))
    needed = "" if gain is None else f" (a lead of at least {gain:g} is needed)"
    trained = [c for c in candidates if c.get("trained")]
    untrained = [c for c in candidates if not c.get("trained")]
    if not chosen.get("trained"):
        if not trained:
            return f"It kept {kept}.{same}"
        best = max(trained, key=_cv)
        return (
            f"No model that learns from ratings beat {kept}, which needs none: the best of them, "
            f"{_short(str(best['name']), engine=engine)}, scored {figure(best.get('cv_ndcg'))} against "
            f"{figure(chosen.get('cv_ndcg'))}{needed}. So training kept {kept}.{same}"
        )
    if not untrained:
        return f"It kept {kept}, which learned from the ratings.{same}"
    best_untrained = max(untrained, key=_cv)
    ours, theirs = number(chosen.get("cv_ndcg")), number(best_untrained.get("cv_ndcg"))
    lead = signed(ours - theirs) if ours is not None and theirs is not None else signed(None)
    return (
        f"It kept {kept}, which learned from the ratings: it scored {figure(ours)}, {lead} over the best that "
        f"needs none ({_short(str(best_untrained['name']), engine=engine)}).{same}"
    )


def _test(version: RankerVersion, comparison: Comparison | None, decision: str) -> str:
    """On the 57 test questions v2 scored 0.436 against v1's 0.436 in NDCG@10 on rated answers (+0.000):
    within noise. v1 stays champion."""
    if comparison is None:
        return (
            f"{version.label} became the champion: the ranker had none yet." if decision == "promoted" else ""
        )
    champion = comparison.champion or "the champion"
    if not comparison.questions:
        return (
            f"It could not be compared with {champion}: no test question has a rated answer yet, so "
            f"{champion} stays the champion."
        )
    text = (
        f"On the {count(comparison.questions)} test questions {version.label} scored "
        f"{figure(comparison.challenger_ndcg)} against {champion}'s {figure(comparison.champion_ndcg)} "
        f"in {measures.name(measures.NDCG_RATED, comparison.k)} ({signed(comparison.difference)}): "
        f"{comparison.verdict or 'compared'}."
    )
    if decision == "promoted":
        return f"{text} {version.label} is now the champion."
    if decision == "manual":
        return f"{text} A trainer decides whether to promote it."
    return f"{text} {champion} stays the champion."


def _next_step(version: RankerVersion, comparison: Comparison | None, *, k: int, decision: str) -> str:
    """What would help next, from the figures the training stored; never a promise."""
    details = _details(version)
    candidates = _candidates(version)
    questions = details.get("training_questions", details.get("question_count"))
    if not candidates:
        learnable = details.get("learnable_questions")
        if isinstance(learnable, int):
            return (
                f"Rate answers of more training questions: {count(learnable)} of them have a relevant rated "
                f"answer, and the learned models are tried from {MIN_QUESTIONS} on."
            )
        return "Rate answers of more training questions, then train again."
    if _kept_untrained(version) and isinstance(questions, int) and questions > 0:
        return _more_ratings(version, questions=questions, k=k)
    if comparison is not None and not comparison.questions:
        return "Rate answers of test questions, so that the next version can be compared with the champion."
    if decision == "promoted":
        return "Keep rating: the next training learns from every rating so far."
    if comparison is not None and comparison.verdict != "better":
        predicted = comparison.predicted
        if predicted is not None and predicted.ratings_to_settle:
            return (
                f"More ratings of the test questions' answers: about {count(predicted.ratings_to_settle)} "
                f"more would settle whether {version.label} is better than {comparison.champion or 'the champion'}."
            )
        return (
            f"More rated test questions: on {count(comparison.questions)} the difference is "
            f"{comparison.verdict or 'not measured'}."
        )
    return ""


def _more_ratings(version: RankerVersion, *, questions: int, k: int) -> str:
    """The learned models lost to what needs no ratings: how many more ratings of the training questions'
    answers, and which.

    The scores rest on the top k places that hold a rated answer (``cv_rated_share``, of the kept
    candidate's held-out rankings): the unrated places, (1 − share) × k × questions, are the ratings the
    figures lack. A version from before that share was kept falls back on the labels per question.
    """
    details = _details(version)
    spread = _dict(details.get("rated_per_question"))
    mean = number(spread.get("mean"))
    if mean is None:
        mean = version.label_count / questions
    each = f"The {count(questions)} training questions have {mean:.1f} rated answers each on average"
    share = number(details.get("cv_rated_share"))
    if share is not None and share < 1:
        unrated = round((1 - share) * k * questions, -1)
        return (
            f"More rated answers in the training questions' top {k}. {each}, but in cross-validation rated "
            f"answers held only {percent(share)} of the top {k} places of the kept ranking: about "
            f"{count(unrated)} of those places hold an unrated answer. Rating them (the rating queue of training "
            "questions shows their top answers) gives the learners more to learn from and cross-validation more "
            "to score them on. Whether that is enough for a model that learns to beat what needs no ratings "
            "shows at the next training."
        )
    if mean >= k:
        return (
            f"More rated training questions. {each}, already {k} or more, so new questions give the learners "
            "new examples. Whether that is enough shows at the next training."
        )
    return (
        f"More rated answers per training question. {each}, and NDCG@{k} looks at {k}: rating {k} answers for "
        f"each is about {count(round(questions * (k - mean), -1))} more ratings. Whether that is enough for a "
        "model that learns to beat what needs no ratings shows at the next training."
    )
