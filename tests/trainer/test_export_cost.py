"""The export's cost as the app shows it (``trainer.export_cost``): its figures, and the rule that shows it
only when its sign can be trusted (the rule bench/bench_export_vectors.py checked against complete
judgments)."""

from __future__ import annotations

import numpy as np

from trainer.export_cost import (
    MEASURED,
    MIN_RATED_SHARE,
    NOT_MEASURABLE,
    WITHIN_NOISE,
    ExportCost,
    cost_figures,
    export_cost,
    served_gain_kept,
)

FIGURES = {
    "k": 10,
    "ndcg_engine": 0.5634,
    "ndcg_export_app": 0.7999,
    "ndcg_version": 0.8017,
    "cost": 0.0018,
    "cost_ci_low": -0.009058,
    "cost_ci_high": 0.012681,
    "rated_share_version": 0.106,
    "rated_share_export": 0.106,
    "cost_places": 5520,
    "cost_unrated": 6098,
}


def test_cost_figures_of_two_rankings_count_their_rated_places_and_unrated_answers():
    labels = [{"a": 3, "b": 0}, {"c": 1}]
    version = [["a", "x", "b"], ["c", "y", "z"]]
    export = [["x", "a", "y"], ["z", "c", "w"]]

    figures = cost_figures(
        version=version,
        export=export,
        labels=labels,
        k=3,
        per_question=(np.array([0.9, 0.5]), np.array([0.6, 0.5])),
    )

    # Rated places: a, b, c of the version's 6 and a, c of the export's; unrated: x, y | y, z, w.
    assert figures == {
        "cost_ci_low": 0.0,
        "cost_ci_high": 0.3,
        "rated_share_version": 0.5,
        "rated_share_export": 0.333333,
        "cost_places": 6,
        "cost_unrated": 5,
    }


def test_cost_figures_without_a_version_are_empty():
    assert (
        cost_figures(
            version=None, export=[["a"]], labels=[{"a": 1}], k=10, per_question=(np.ones(1), np.ones(1))
        )
        == {}
    )


def test_export_cost_on_few_rated_answers_is_not_measurable_and_says_how_many_to_rate():
    shown = export_cost(FIGURES)

    # ⌈0.5 × 5520⌉ = 2760 rated places needed; each top 10 holds round(0.106 × 5520) = 585.
    assert MIN_RATED_SHARE == 0.5
    assert shown == ExportCost(
        NOT_MEASURABLE,
        None,
        "not measurable yet: rate at least 2,175 more answers of the test questions' top 10 (11% of this version's "
        "top 10 and 11% of the export's are rated; NDCG@10 on rated answers needs 50% of each before its "
        "sign can be trusted).",
        2175,
    )


def test_export_cost_to_rate_is_at_most_the_unrated_answers_of_both_top_10s():
    shown = export_cost({**FIGURES, "cost_unrated": 40})

    assert (shown.status, shown.to_rate) == (NOT_MEASURABLE, 40)


def test_export_cost_whose_interval_holds_0_is_within_noise():
    shown = export_cost({**FIGURES, "rated_share_version": 0.62, "rated_share_export": 0.55})

    assert shown == ExportCost(
        WITHIN_NOISE,
        None,
        "within noise: NDCG@10 on rated answers of this version minus the exported model lies between "
        "−0.009 to +0.013 (95% CI), which holds 0 (62% of this version's top 10 and 55% of the export's "
        "are rated).",
    )


def test_export_cost_on_enough_rated_answers_and_an_interval_off_0_is_shown():
    shown = export_cost(
        {
            **FIGURES,
            "rated_share_version": 0.62,
            "rated_share_export": 0.55,
            "cost": 0.041,
            "cost_ci_low": 0.012,
            "cost_ci_high": 0.07,
        }
    )

    assert shown == ExportCost(
        MEASURED,
        0.041,
        "+0.041 NDCG@10 on rated answers (95% CI +0.012 to +0.070; this version minus the exported model; "
        "negative: the export ranks better; 62% of this version's top 10 and 55% of the export's are rated).",
    )


def test_export_cost_of_an_export_fitted_before_the_shares_were_kept_is_not_shown():
    shown = export_cost({"k": 10, "cost": 0.045})

    assert (shown.status, shown.cost) == (NOT_MEASURABLE, None)
    assert shown.text.endswith("without which the cost's sign cannot be trusted; train the ranker again.")


def test_served_gain_kept_of_a_tree_version_names_its_lead_feature_and_ranker_server():
    figures = {**FIGURES, "rated_share_version": 0.62, "rated_share_export": 0.55}

    text = served_gain_kept(
        figures=figures,
        shown=export_cost(figures),
        method="lambdamart",
        importances={"propagation": 0.867, "cosine": 0.076, "engine": 0.05},
        left_out=[{"feature": "propagation", "why": ""}, {"feature": "rm3", "why": ""}],
    )

    # (0.7999 − 0.5634) / (0.8017 − 0.5634) = 0.9924...
    assert text == (
        "This version ranks with trees (LambdaMART) over the app's features, 87% of their gain from "
        "propagation, which the engine cannot compute: the exported linear model over the engine's features "
        "does not copy them. The export keeps 99% of the version's gain over the engine alone (NDCG@10 on "
        "rated answers: engine alone 0.563, export 0.800, this version 0.802). To keep all of it, serve the "
        "version itself in front of the engine: manage.py ranker_server --ranker ID (docs/rankers.md, "
        "Serving a trained engine ranker where production calls)."
    )


def test_served_gain_kept_when_the_cost_is_not_measurable_does_not_guess():
    text = served_gain_kept(
        figures=FIGURES, shown=export_cost(FIGURES), method="lambdamart", importances={}, left_out=[]
    )

    assert text == (
        "This version ranks with trees (LambdaMART) over the app's features: the exported linear model over "
        "the engine's features does not copy them. How much of the version's gain over the engine alone the "
        "export keeps is not measurable yet (as its cost). To keep all of it, serve the version itself in "
        "front of the engine: manage.py ranker_server --ranker ID (docs/rankers.md, Serving a trained "
        "engine ranker where production calls)."
    )


def test_served_gain_kept_of_a_fusion_version_is_empty():
    assert (
        served_gain_kept(
            figures=FIGURES, shown=export_cost(FIGURES), method="fusion", importances={}, left_out=[]
        )
        == ""
    )
