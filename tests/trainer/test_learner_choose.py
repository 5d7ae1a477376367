"""trainer.learner.choose: the candidate a training keeps from the CV NDCG of each, listed simplest first
(MIN_CV_GAIN = 0.005)."""

from __future__ import annotations

from trainer.learner import MIN_CV_GAIN, choose

UNTRAINED = ("bm25", "fusion")


def scores(bm25: float, fusion: float, learned: float, lambdamart: float) -> dict[str, float]:
    return {"bm25": bm25, "fusion": fusion, "learned-fusion": learned, "lambdamart": lambdamart}


def test_choose_min_cv_gain_is_half_a_point():
    assert MIN_CV_GAIN == 0.005


def test_choose_lambdamart_leading_by_less_than_the_gain_keeps_the_learned_fusion():
    # covidfaq's first training: LambdaMART 0.9163, the learned fusion 0.9141.
    assert choose(scores(0.50, 0.70, 0.9141, 0.9163), untrained=UNTRAINED, first="bm25") == (
        "learned-fusion",
        "fusion",
        "learned-fusion",
    )


def test_choose_lambdamart_leading_by_the_gain_is_chosen():
    assert choose(scores(0.50, 0.70, 0.80, 0.806), untrained=UNTRAINED, first="bm25") == (
        "lambdamart",
        "fusion",
        "lambdamart",
    )


def test_choose_trained_below_the_gain_over_the_untrained_keeps_the_untrained():
    assert choose(scores(0.50, 0.70, 0.704, 0.70), untrained=UNTRAINED, first="bm25") == (
        "fusion",
        "fusion",
        "learned-fusion",
    )


def test_choose_equal_untrained_prefers_the_first_stage():
    assert choose(scores(0.60, 0.60, 0.55, 0.50), untrained=UNTRAINED, first="bm25") == (
        "bm25",
        "bm25",
        "learned-fusion",
    )


def test_choose_without_embeddings_lambdamart_against_the_first_stage():
    only = {"bm25": 0.40, "lambdamart": 0.43}
    assert choose(only, untrained=UNTRAINED, first="bm25") == ("lambdamart", "bm25", "lambdamart")
