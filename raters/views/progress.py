"""The trainers' progress page: ratings per day and per rater, coverage of train and test, agreement and
leniency, and the rating budget."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from raters.next_task.budget import budget_summary
from raters.next_task.pool import top_k
from raters.next_task.table import candidate_table
from raters.views.access import RatingRequest, collection_view
from ratings.agreement import krippendorff_alpha
from ratings.selectors import (
    agreement_units,
    coverage_by_split,
    disagreements,
    multi_rated_ratings,
    rater_summaries,
    ratings_per_day,
)


@require_GET
@collection_view(manage=True)
def training_progress(request: RatingRequest, collection: Collection) -> HttpResponse:
    """Trainers: ratings per day and per rater, coverage of train and test, agreement and leniency."""
    shared = multi_rated_ratings(collection=collection)
    units = agreement_units(ratings=shared)
    alpha = krippendorff_alpha(units, level="ordinal")
    disagreement_count, disagreeing = disagreements(collection=collection)
    return render(
        request,
        "raters/progress.html",
        {
            "collection": collection,
            "per_day": ratings_per_day(collection=collection),
            "raters": rater_summaries(collection=collection, ratings=shared),
            "coverage": coverage_by_split(
                collection=collection, candidates=candidate_table(collection=collection)
            ),
            "alpha": alpha,
            "disagreement_count": disagreement_count,
            "disagreements": disagreeing,
            "alpha_pairs": len(units),
            "alpha_ratings": sum(len(u) for u in units),
            "k": top_k(collection=collection),
            "budget": budget_summary(collection=collection),
        },
    )
