"""A version's comparison with the champion of its time (``RankerVersion.comparison``), and the same
comparison counting the unrated answers (their stars predicted)."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.certainty import settle_text, verdict_text
from evaluation.numbers import number, probability, signed
from trainer.ranker_display.figures import comparison_text, rated_shares_text


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
