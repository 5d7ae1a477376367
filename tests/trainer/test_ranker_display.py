"""Figures of the ranker pages in words: one format, no empty interval ("+0.000 to +0.000")."""

from rankers.models import RankerVersion
from trainer.ranker_display import (
    Comparison,
    Predicted,
    VersionDetails,
    comparison_text,
    difference_text,
    method_text,
    signed_text,
    unlisted_zero_text,
)


def test_signed_text_difference_rounding_to_zero_is_plus_zero():
    assert [signed_text(v) for v in (-0.0001, -0.0, 0.0, 0.0004, -0.0123)] == [
        "+0.000",
        "+0.000",
        "+0.000",
        "+0.000",
        "−0.012",
    ]


def test_comparison_text_leaves_out_an_interval_whose_bounds_show_the_same():
    assert (
        comparison_text(
            k=10, challenger=0.4121, champion=0.4121, difference=0.0, ci_low=-0.0, ci_high=0.0, p_value=1.0
        )
        == "NDCG@10 on rated answers 0.412 vs 0.412 (+0.000, p = 1.000)"
    )


def test_comparison_text_with_an_interval():
    assert (
        comparison_text(
            k=10,
            challenger=0.412,
            champion=0.371,
            difference=0.041,
            ci_low=0.012,
            ci_high=0.07,
            p_value=0.004,
        )
        == "NDCG@10 on rated answers 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004)"
    )


def test_difference_text_without_interval_keeps_the_p_value():
    assert difference_text(0.0, 0.0, 0.0, 1.0) == "+0.000 (p = 1.000)"
    assert difference_text(0.082, 0.051, 0.114, 0.0001) == "+0.082 (95% CI +0.051 to +0.114, p < 0.001)"


def test_predicted_of_unknown_figures_shows_dashes_and_malformed_is_none():
    shown = Predicted.of(
        {
            "probability": None,
            "expected_difference": None,
            "verdict": "",
            "verdict_shares": [0.0, 1.0, 0.0],
            "ratings_to_settle": None,
        }
    )

    assert (shown.probability_text, shown.difference_text, shown.settle_text) == ("–", "–", "")
    assert shown.clause("v3") == (
        "Counting the unrated answers (stars predicted from the ratings so far): P(v3 better) –, "
        "expected difference –; verdict once every answer is rated: not settled yet: within noise in 100%."
    )
    assert [Predicted.of(bad) for bad in (None, [], {"verdict_shares": [1.0, 0.0]})] == [None, None, None]


def test_predicted_expected_difference_rounding_to_zero_is_plus_zero_with_a_true_minus_otherwise():
    def text(value: float) -> str:
        shares = [0.0, 1.0, 0.0]
        return Predicted.of({"expected_difference": value, "verdict_shares": shares}).difference_text

    assert [text(v) for v in (-0.0004, 0.0127, -0.0127)] == ["+0.000", "+0.013", "−0.013"]


def test_comparison_short_says_what_counting_the_unrated_answers_gave():
    plain = {"challenger_ndcg": 0.404, "champion_ndcg": 0.340, "difference": 0.0645, "verdict": "better"}
    open_ = {"probability": 0.7475, "verdict": "", "verdict_shares": [0.07, 0.93, 0.0]}
    settled = {"probability": 0.99, "verdict": "real improvement", "verdict_shares": [0.97, 0.03, 0.0]}

    def short(predicted: dict | None) -> str:
        data = {**plain, "champion": "v1", **({"predicted": predicted} if predicted else {})}
        return Comparison.of(data, k=10).short

    assert [short(None), short(open_), short(settled)] == [
        "better than v1 (+0.065)",
        "better than v1 (+0.065); counting unrated answers: not settled, P(better) 75%",
        "better than v1 (+0.065); counting unrated answers: real improvement, settled",
    ]


def test_version_details_of_an_engine_reranker_name_the_engine_alone():
    details = {
        "first_stage": "engine",
        "candidates_depth": 50,
        "candidates": [
            {"name": "engine", "cv_ndcg": 0.41, "spread": 0.0, "chosen": False},
            {"name": "lambdamart", "cv_ndcg": 0.47, "spread": 0.01, "chosen": True},
        ],
        "cv_vs_first_stage": {
            "difference": 0.06,
            "ci_low": 0.03,
            "ci_high": 0.09,
            "p_value": 0.0005,
            "questions": 74,
        },
    }
    version = RankerVersion(
        label="v2", method="lambdamart", details=details, cv_ndcg_model=0.47, cv_ndcg_bm25=0.41
    )

    shown = VersionDetails.of(version)

    assert shown.engine is True
    assert [c.words for c in shown.candidates] == [
        "the engine's own order",
        "the engine's top answers reranked by LambdaMART",
    ]
    assert shown.cv_comparison.startswith("chosen − the engine alone +0.060")
    assert shown.cv_comparison.endswith("over 74 training questions")
    assert method_text("lambdamart", "engine") == "the engine's top answers reranked by LambdaMART"
    assert method_text("", "engine") == "the search engine's own ranking"


def test_unlisted_zero_text_names_each_import_and_its_questions():
    one = {
        "complete_questions": 1,
        "unlisted_incorrect": [{"id": 2, "name": "import 2 (a.csv)", "questions": 1}],
    }
    two = {
        "complete_questions": 50,
        "unlisted_incorrect": [
            {"id": 2, "name": "import 2 (a.csv)", "questions": 40},
            {"id": 5, "name": "import 5", "questions": 12},
        ],
    }

    assert unlisted_zero_text(one) == (
        "The training read the answers not listed for 1 training question as 0 stars, because import 2 (a.csv) "
        "says that answers not listed for a judged question are incorrect."
    )
    assert unlisted_zero_text(two) == (
        "The training read the answers not listed for 50 training questions as 0 stars, because import 2 "
        "(a.csv) (40 of them) and import 5 (12 of them) say that answers not listed for a judged question are "
        "incorrect."
    )
    # Trained before imports were kept: no import to name; no complete question: nothing to say.
    assert unlisted_zero_text({"complete_questions": 93}) == (
        "The training read the answers not listed for 93 training questions as 0 stars: an imported ground "
        "truth judged them."
    )
    assert unlisted_zero_text({"complete_questions": 0, "unlisted_incorrect": []}) == ""
    assert unlisted_zero_text({}) == ""
