"""The Cranfield demo collection, loaded from ``trainer/demo_data/`` unless it exists."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from corpus.models import Collection
from corpus.services import ImportFiles, collection_create, parse_import_files

from .imports import collection_import

DEMO_DATA_DIR = Path(__file__).resolve().parents[1] / "demo_data"
# Raters read it on their home card: plain words, no formula (the import's grade → stars rule, "rnr":
# stars = max(grade − 1, 0), is the import page's and corpus.formats.grades' to tell).
DEMO_DESCRIPTION = (
    "Questions about aircraft and airflow, with summaries of 1,400 aeronautics papers as answers "
    "(the Cranfield collection, as IBM Watson Retrieve and Rank's tutorial shipped it)."
)
_FORMER_DESCRIPTION = (
    "Cranfield 1400 aeronautics abstracts and 150 questions, as IBM Watson Retrieve and Rank's "
    "tutorial shipped them. Grades 0–4 mapped to stars = max(grade − 1, 0)."
)


@transaction.atomic
def demo_collection_load(*, slug: str = "cranfield") -> Collection | None:
    """Load the Cranfield demo collection unless it exists. Returns it when it was created now.

    A demo loaded before its description was reworded for raters gets the new words (left alone if a
    trainer changed it)."""
    if Collection.objects.filter(slug=slug).exists():
        Collection.objects.filter(slug=slug, description=_FORMER_DESCRIPTION).update(
            description=DEMO_DESCRIPTION
        )
        return None
    collection = collection_create(
        name="Cranfield (demo)",
        slug=slug,
        description=DEMO_DESCRIPTION,
    )
    answers, questions, judgments = parse_import_files(
        ImportFiles(
            rnr_documents=DEMO_DATA_DIR / "cranfield-data.json",
            rnr_ground_truth=DEMO_DATA_DIR / "cranfield-gt.csv",
        )
    )
    collection_import(collection=collection, answers=answers, questions=questions, judgments=judgments)
    return collection
