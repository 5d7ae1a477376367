"""Figures of the ranker pages in words: one format, no empty interval ("+0.000 to +0.000")."""

from trainer.ranker_display import comparison_text, difference_text, signed_text


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
        == "NDCG@10 0.412 vs 0.412 (+0.000, p = 1.000)"
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
        == "NDCG@10 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004)"
    )


def test_difference_text_without_interval_keeps_the_p_value():
    assert difference_text(0.0, 0.0, 0.0, 1.0) == "+0.000 (p = 1.000)"
    assert difference_text(0.082, 0.051, 0.114, 0.0001) == "+0.082 (95% CI +0.051 to +0.114, p < 0.001)"
