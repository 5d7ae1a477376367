"""How the rankers pages put versions, comparisons and trainings into words and numbers.

Pure presentation: no queries. Figures as :mod:`evaluation.numbers` writes them everywhere (NDCG 0.412,
differences +0.041 and −0.012, "p = 0.004" or "p < 0.001"); durations in seconds or minutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evaluation import measures
from evaluation.certainty import settle_text, verdict_text
from evaluation.models import EvaluationRun
from evaluation.numbers import NO_VALUE, figure, interval, number, p_text, percent, probability, signed
from rankers.models import RankerKind, RankerVersion
from trainer.models import Training, TrainingStatus

METHOD_WORDS = {
    "bm25": "plain BM25",
    "fusion": "BM25 + semantic similarity, untrained fusion",
    "learned-fusion": "learned fusion of BM25, semantic similarity, RM3 and rating propagation",
    "lambdamart": "LambdaMART",
}

# An engine (or http) ranker's trained versions rerank its service's top answers; {first}: whose.
RERANK_WORDS = {
    "fusion": "{first} top answers reranked by {first} score + semantic similarity, untrained fusion",
    "learned-fusion": "{first} top answers reranked by a learned fusion of {first} score, BM25, semantic "
    "similarity, RM3 and rating propagation",
    "lambdamart": "{first} top answers reranked by LambdaMART",
}

FEATURE_WORDS = {
    "engine": "the engine's own score",
    "engine_rank": "the engine's rank (1 / rank)",
    "cosine": "semantic similarity of question and answer (all-MiniLM-L6-v2 embeddings)",
    "rm3": "BM25 with the question expanded from its top answers (RM3)",
    "propagation": "stars that similar training questions gave this answer",
    "bm25": "BM25 score of title + body",
    "bm25_title": "BM25 score of the title",
    "bm25_body": "BM25 score of the body",
    "bm25_rank": "BM25 rank",
    "bm25_ratio": "BM25 score relative to the best candidate",
    "coverage": "share of question terms in the answer",
    "idf_coverage": "share of question terms in the answer, weighted by rarity (IDF)",
    "title_coverage": "share of question terms in the title",
    "bigram_overlap": "share of the question's adjacent word pairs found adjacent",
    "doc_length": "answer length",
    "title_length": "title length",
    "query_length": "question length",
}

# The rankers pages' older name for the signed difference (tests/trainer/test_ranker_display.py uses it).
signed_text = signed


def ci_text(ci_low: object, ci_high: object) -> str:
    """95% CI +0.012 to +0.070; "" when the bounds show the same (two versions that rank alike)."""
    return f"95% CI {interval(ci_low, ci_high)}" if signed(ci_low) != signed(ci_high) else ""


def difference_text(difference: object, ci_low: object, ci_high: object, p_value: object) -> str:
    """+0.082 (95% CI +0.051 to +0.114, p < 0.001), or +0.000 (p = 1.000) when the interval collapses."""
    ci = ci_text(ci_low, ci_high)
    return f"{signed(difference)} ({ci + ', ' if ci else ''}{p_text(p_value)})"


def comparison_text(
    *,
    k: int,
    challenger: object,
    champion: object,
    difference: object,
    ci_low: object,
    ci_high: object,
    p_value: object,
) -> str:
    """NDCG@10 on rated answers 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004): every
    comparison of two versions uses that measure (``evaluation.measures.NDCG_RATED``), named as such; the
    interval is left out when its bounds show the same (two versions that rank alike: "+0.000, p = 1.000")."""
    ci = ci_text(ci_low, ci_high)
    return (
        f"{measures.name(measures.NDCG_RATED, k)} {figure(challenger)} vs {figure(champion)} "
        f"({signed(difference)}{', ' + ci if ci else ''}, {p_text(p_value)})"
    )


def rated_shares_text(*, k: int, challenger: object, champion: object) -> str:
    """ "with 62% and 55% of their top 10 rated" (challenger's first): how much of what the comparison
    ranked is known; "" when the shares were not recorded (decisions before they were)."""
    if number(challenger) is None or number(champion) is None:
        return ""
    return f"with {percent(challenger)} and {percent(champion)} of their top {k} rated"


def duration_text(seconds: object) -> str:
    """12.3 s, 2 min 5 s, or "" when unknown."""
    x = number(seconds)
    if x is None:
        return ""
    if x < 60:
        return f"{x:.1f} s"
    minutes, rest = divmod(round(x), 60)
    return f"{minutes} min {rest} s"


def _candidate_words(name: str, engine: bool) -> str:
    """A training candidate in words; an engine ranker's rerank the engine's answers."""
    if engine and name in RERANK_WORDS:
        return RERANK_WORDS[name].format(first="the engine's")
    if engine and name == "engine":
        return "the engine's own order"
    return METHOD_WORDS.get(name, name)


def method_text(method: str, kind: str) -> str:
    if kind in (RankerKind.ENGINE, RankerKind.HTTP) and method in RERANK_WORDS:
        return RERANK_WORDS[method].format(
            first="the engine's" if kind == RankerKind.ENGINE else "the service's"
        )
    if method in METHOD_WORDS:
        return METHOD_WORDS[method]
    if not method or method == "engine":
        if kind == RankerKind.ENGINE:
            return "the search engine's own ranking"
        return "the HTTP service's own model" if kind == RankerKind.HTTP else "not recorded"
    return method


@dataclass(frozen=True)
class Predicted:
    """The same comparison counting the unrated answers in either version's top k, their stars predicted
    from the ratings so far (``RankerVersion.comparison["predicted"]``, from
    :func:`evaluation.certainty.comparison_json`). The plain comparison leaves unrated answers out (NDCG@k
    on rated answers); this one says what they would likely add (estimated NDCG@k)."""

    probability: float | None
    expected_difference: float | None
    verdict: str
    verdict_shares: tuple[float, ...]
    ratings_to_settle: int | None

    @classmethod
    def of(cls, data: object) -> Predicted | None:
        if not isinstance(data, dict):
            return None
        shares = data.get("verdict_shares")
        if not (isinstance(shares, list) and len(shares) == 3 and all(number(v) is not None for v in shares)):
            return None
        to_settle = data.get("ratings_to_settle")
        return cls(
            probability=number(data.get("probability")),
            expected_difference=number(data.get("expected_difference")),
            verdict=str(data.get("verdict") or ""),
            verdict_shares=tuple(float(v) for v in shares),
            ratings_to_settle=to_settle
            if isinstance(to_settle, int) and not isinstance(to_settle, bool)
            else None,
        )

    @property
    def probability_text(self) -> str:
        return probability(self.probability)

    @property
    def difference_text(self) -> str:
        return signed(self.expected_difference)

    @property
    def verdict_text(self) -> str:
        return verdict_text(verdict=self.verdict, shares=self.verdict_shares)

    @property
    def settle_text(self) -> str:
        return "" if self.ratings_to_settle is None else settle_text(self.ratings_to_settle)

    def clause(self, challenger: str) -> str:
        """One sentence for a decision's reason: P(v2 better) 74%, expected difference +0.013; ..."""
        verdict = self.verdict_text
        return (
            f"Counting the unrated answers (stars predicted from the ratings so far): P({challenger} better) "
            f"{self.probability_text}, expected difference {self.difference_text}; verdict once every answer "
            f"is rated: {verdict[0].lower()}{verdict[1:]}."
        )


@dataclass(frozen=True)
class Comparison:
    """A version's evaluation against the champion of its time (``RankerVersion.comparison``)."""

    k: int
    questions: int | None
    challenger_ndcg: float
    champion_ndcg: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    verdict: str
    champion: str
    champion_id: int | None = None
    predicted: Predicted | None = None
    challenger_rated_share: float | None = None
    champion_rated_share: float | None = None

    @classmethod
    def of(cls, data: object, *, k: int) -> Comparison | None:
        if not isinstance(data, dict) or number(data.get("challenger_ndcg")) is None:
            return None
        questions = data.get("questions")
        return cls(
            k=int(data["k"]) if isinstance(data.get("k"), int) else k,
            questions=questions if isinstance(questions, int) else None,
            challenger_ndcg=float(data["challenger_ndcg"]),
            champion_ndcg=number(data.get("champion_ndcg")),
            difference=number(data.get("difference")),
            ci_low=number(data.get("ci_low")),
            ci_high=number(data.get("ci_high")),
            p_value=number(data.get("p_value")),
            verdict=str(data.get("verdict") or ""),
            champion=str(data.get("champion") or ""),
            champion_id=data["champion_id"] if isinstance(data.get("champion_id"), int) else None,
            predicted=Predicted.of(data.get("predicted")),
            challenger_rated_share=number(data.get("challenger_rated_share")),
            champion_rated_share=number(data.get("champion_rated_share")),
        )

    @property
    def sentence(self) -> str:
        """NDCG@10 on rated answers 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004): better"""
        text = comparison_text(
            k=self.k,
            challenger=self.challenger_ndcg,
            champion=self.champion_ndcg,
            difference=self.difference,
            ci_low=self.ci_low,
            ci_high=self.ci_high,
            p_value=self.p_value,
        )
        shares = rated_shares_text(
            k=self.k, challenger=self.challenger_rated_share, champion=self.champion_rated_share
        )
        text = f"{text}, {shares}" if shares else text
        return f"{text}: {self.verdict}" if self.verdict else text

    @property
    def short(self) -> str:
        """better than v1 (+0.041), within noise vs v1 (+0.003); with the decision's count of the unrated
        answers: "…; counting unrated answers: real improvement, settled" or "…: not settled, P(better) 75%"."""
        joiner = "than" if self.verdict in ("better", "worse") else "vs"
        against = f" {joiner} {self.champion}" if self.champion else ""
        text = f"{self.verdict or 'compared'}{against} ({signed(self.difference)})"
        predicted = self.predicted
        if predicted is None:
            return text
        if predicted.verdict:
            return f"{text}; counting unrated answers: {predicted.verdict}, settled"
        return f"{text}; counting unrated answers: not settled, P(better) {predicted.probability_text}"


@dataclass(frozen=True)
class VersionView:
    """One version as the pages show it."""

    version: RankerVersion
    is_champion: bool
    k: int
    kind: str
    # The version's latest successful evaluation run: its figure is the headline's NDCG@k.
    latest_run: EvaluationRun | None = None
    same_as: RankerVersion | None = None  # the earlier version it is the same model as (trainer.selectors)

    @property
    def method(self) -> str:
        return method_text(self.version.method, self.kind)

    @property
    def comparison(self) -> Comparison | None:
        return Comparison.of(self.version.comparison, k=self.k)

    @property
    def test_ndcg(self) -> str:
        """The version's headline NDCG@k: its latest evaluation run's, as the dashboard shows it ("–":
        never evaluated). The comparison with the champion is another measure (NDCG@k on rated answers)."""
        return figure(self.latest_run.ndcg_mean) if self.latest_run else NO_VALUE

    @property
    def rated_share(self) -> str:
        """The share of rated answers in the top k of that run ("" when never evaluated)."""
        run = self.latest_run
        return percent(run.judged_mean) if run is not None and run.judged_mean is not None else ""

    @property
    def cv(self) -> str:
        """model 0.512 · BM25 0.430 (cross-validated on the training questions)."""
        details = self.version.details if isinstance(self.version.details, dict) else {}
        model = self.version.cv_ndcg_model
        bm25 = self.version.cv_ndcg_bm25  # the first stage's: BM25, or the engine alone
        first = "the engine alone" if details.get("first_stage") == "engine" else "BM25"
        if model is None:
            model = number(details.get("cv_ndcg_model"))
        if bm25 is None:
            bm25 = number(details.get("cv_ndcg_bm25"))
        parts = []
        if model is not None:
            parts.append(f"model {figure(model)}")
        if bm25 is not None:
            parts.append(f"{first} {figure(bm25)}")
        return " · ".join(parts) or NO_VALUE


@dataclass(frozen=True)
class Candidate:
    name: str
    cv_ndcg: str
    spread: str
    chosen: bool = False
    words: str = ""


@dataclass(frozen=True)
class Feature:
    name: str
    words: str
    importance: float

    @property
    def percent(self) -> str:
        return percent(self.importance, digits=1)


@dataclass(frozen=True)
class Setting:
    """One cross-validated LambdaMART setting of the learner's grid."""

    params: str
    cv_ndcg: str
    chosen: bool


@dataclass(frozen=True)
class VersionDetails:
    """Everything ``RankerVersion.details`` holds that the version page shows; whatever is there."""

    question_count: int | None
    training_questions: int | None
    raters: int | None
    learnable_questions: int | None
    bm25_candidates: int | None
    candidates: list[Candidate]
    grid: list[Setting]
    params: str
    seconds: str
    notices: list[str]
    cv_comparison: str  # the chosen model against BM25's order in cross-validation, in words
    ratings_added: str = ""  # the best candidate that learned from ratings against the untrained fusion
    # Judged-only CV (unrated answers left out) and how much of its top k rested on rated answers.
    judged_only: bool = False
    rated_share: str = ""
    engine: bool = False  # an engine (or http) ranker's version: it reranks the engine's answers
    # "The training read the answers not listed for 93 training questions as 0 stars, because import 1
    # (cranfield-gt.csv) says ...": the imports whose option changed its figures ("" when none did).
    unlisted_zero: str = ""

    @classmethod
    def of(cls, version: RankerVersion) -> VersionDetails:
        details: dict[str, Any] = version.details if isinstance(version.details, dict) else {}

        def count(name: str) -> int | None:
            value = details.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        engine = details.get("first_stage") == "engine"
        raw_candidates = details.get("candidates")
        candidates = []
        if isinstance(raw_candidates, list):
            for item in raw_candidates:
                if isinstance(item, dict):
                    spread = number(item.get("spread"))
                    name = str(item.get("name", ""))
                    candidates.append(
                        Candidate(
                            name=name,
                            cv_ndcg=figure(item.get("cv_ndcg")),
                            # The range of the CV figure over the fold assignments.
                            spread="" if spread is None else figure(spread),
                            chosen=bool(item.get("chosen")),
                            words=_candidate_words(name, engine),
                        )
                    )
        chosen = details.get("params") if isinstance(details.get("params"), dict) else {}
        grid = []
        for item in details.get("grid") or []:
            if isinstance(item, dict):
                params = {key: value for key, value in item.items() if key != "cv_ndcg"}
                grid.append(
                    Setting(
                        params=_params_text(params),
                        cv_ndcg=figure(item.get("cv_ndcg")),
                        chosen=bool(chosen) and params == chosen,
                    )
                )
        # Versions trained before engine rankers trained kept it as cv_vs_bm25 (or cv_comparison).
        cv = details.get("cv_vs_first_stage") or details.get("cv_vs_bm25") or details.get("cv_comparison")
        cv_comparison = ""
        if isinstance(cv, dict) and number(cv.get("difference")) is not None:
            questions = cv.get("questions")
            first = "the engine alone" if details.get("first_stage") == "engine" else "BM25"
            cv_comparison = (
                f"chosen − {first} "
                f"{difference_text(cv.get('difference'), cv.get('ci_low'), cv.get('ci_high'), cv.get('p_value'))}"
                + (f" over {questions} training questions" if isinstance(questions, int) else "")
            )
        added = details.get("ratings_added")
        ratings_added = ""
        if isinstance(added, dict) and number(added.get("difference")) is not None:
            ratings_added = (
                f"{_candidate_words(str(added.get('candidate')), engine)} − untrained fusion "
                f"{difference_text(added.get('difference'), added.get('ci_low'), added.get('ci_high'), added.get('p_value'))}"
            )
        notices = [
            str(details[key])
            for key in ("message", "reason")
            if isinstance(details.get(key), str) and details[key]
        ]
        return cls(
            question_count=count("question_count"),
            training_questions=count("training_questions"),
            raters=count("raters"),
            learnable_questions=count("learnable_questions"),
            bm25_candidates=count("candidates_depth")
            or (raw_candidates if isinstance(raw_candidates, int) else None),
            candidates=candidates,
            grid=grid,
            params=_params_text(chosen) if chosen else "",
            seconds=duration_text(details.get("seconds")),
            notices=notices,
            cv_comparison=cv_comparison,
            ratings_added=ratings_added,
            judged_only=details.get("cv_judged_only") is True,
            rated_share=percent_text(details.get("cv_rated_share")),
            engine=engine,
            unlisted_zero=unlisted_zero_text(details),
        )


def unlisted_zero_text(details: dict[str, Any]) -> str:
    """Which imports made the training read unlisted answers as 0 stars, and for how many questions.

    From ``details["unlisted_incorrect"]`` (the imports as the training read them) and
    ``details["complete_questions"]``; a version trained before imports were kept names no import.
    """
    questions = details.get("complete_questions")
    if not isinstance(questions, int) or isinstance(questions, bool) or questions <= 0:
        return ""
    head = (
        f"The training read the answers not listed for {questions} training "
        f"question{'s' if questions != 1 else ''} as 0 stars"
    )
    imports = [
        i
        for i in details.get("unlisted_incorrect") or []
        if isinstance(i, dict) and isinstance(i.get("name"), str)
    ]
    if not imports:
        return f"{head}: an imported ground truth judged them."
    if len(imports) == 1:
        names, verb = imports[0]["name"], "says"
    else:
        names = " and ".join(f"{i['name']} ({i.get('questions')} of them)" for i in imports)
        verb = "say"
    return f"{head}, because {names} {verb} that answers not listed for a judged question are incorrect."


def percent_text(share: object) -> str:
    """A share 0..1 as a whole percent ("42%"), or "" when there is none."""
    return "" if number(share) is None else percent(share)


def _params_text(params: dict) -> str:
    return ", ".join(f"{key} {value}" for key, value in params.items())


def features_of(version: RankerVersion) -> list[Feature]:
    """Feature importances, most important first (ties by name)."""
    importances = version.feature_importances if isinstance(version.feature_importances, dict) else {}
    features = [
        Feature(name=name, words=FEATURE_WORDS.get(name, ""), importance=float(value))
        for name, value in importances.items()
        if number(value) is not None
    ]
    return sorted(features, key=lambda f: (-f.importance, f.name))


@dataclass(frozen=True)
class TrainingView:
    """A training job as its progress block shows it."""

    training: Training
    # "v2 is the same model as v1 (the untrained fusion): …" (trainer.training_explanation), said first.
    same_model: str = ""

    @property
    def is_active(self) -> bool:
        return self.training.is_active

    @property
    def status(self) -> str:
        return self.training.status

    @property
    def status_label(self) -> str:
        return self.training.get_status_display()

    @property
    def phase_label(self) -> str:
        return self.training.get_phase_display()

    @property
    def percent(self) -> int:
        return max(0, min(100, round(100 * (self.training.progress or 0.0))))

    @property
    def since(self) -> datetime:
        return self.training.started_at or self.training.created_at

    @property
    def version(self) -> RankerVersion | None:
        return self.training.version

    @property
    def outcome(self) -> str:
        """Promoted v2: … / v2 not promoted: … / v2 waits for a trainer: … / Training failed: …"""
        training = self.training
        if training.status == TrainingStatus.FAILED:
            return f"Training failed: {training.error or 'no reason recorded.'}"
        if training.status != TrainingStatus.SUCCEEDED:
            return ""
        version = training.version
        label = version.label if version else "the new version"
        reason = training.decision_reason
        said = f"{self.same_model} " if self.same_model else ""
        if training.decision == "promoted":
            return f"{said}Promoted {label}: {reason}"
        if training.decision == "kept":
            # The reason itself says which version was kept ("… Kept v1; a new version is …").
            return f"{said}{label} not promoted: {reason}"
        if training.decision == "manual":
            return f"{said}{label} waits for a trainer to promote it: {reason}"
        return f"{said}Trained {label}." + (f" {reason}" if reason else "")
