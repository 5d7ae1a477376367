"""A version as the rankers pages show it: its headline figures, cross-validation, the candidates and
settings its training tried, its features' importances, and the notices its training left."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation.models import EvaluationRun
from evaluation.numbers import NO_VALUE, figure, number, percent
from rankers.models import RankerVersion
from trainer.ranker_display.comparison import Comparison
from trainer.ranker_display.figures import difference_text, duration_text, percent_text
from trainer.ranker_display.words import FEATURE_WORDS, _candidate_words, method_text


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
