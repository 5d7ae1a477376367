"""corpus.services.collection_create: a setting out of range is a ValidationError naming its field and
nothing is saved; each of the table's check constraints has a field validator that raises first."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from corpus.models import Collection
from corpus.services import collection_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "setting",
    [
        {"ndcg_k": 0},
        {"accuracy_k": 0},
        {"relevance_threshold": 0},
        {"relevance_threshold": 4},
        {"test_fraction": -0.1},
        {"test_fraction": 1.5},
        {"overlap_fraction": -0.1},
        {"overlap_fraction": 1.01},
    ],
)
def test_collection_create_out_of_range_setting_names_the_field_and_saves_nothing(setting):
    with pytest.raises(ValidationError) as error:
        collection_create(name="Bad", slug="bad", **setting)

    assert list(error.value.message_dict) == list(setting)
    assert not Collection.objects.filter(slug="bad").exists()


def test_collection_create_every_check_constraint_has_a_tested_field():
    # The constraints (validated by the database on save, not again by full_clean) and the fields above.
    checked = {"ndcg_k", "accuracy_k", "relevance_threshold", "test_fraction", "overlap_fraction"}
    names = [c.name for c in Collection._meta.constraints]
    assert names == [
        "collection_ndcg_k_positive",
        "collection_accuracy_k_positive",
        "collection_relevance_threshold_1_3",
        "collection_test_fraction_0_1",
        "collection_overlap_fraction_0_1",
    ]
    assert all(any(field in name for field in checked) for name in names)


def test_collection_create_in_range_settings_are_saved():
    collection = collection_create(
        name="Good", slug="good", ndcg_k=5, relevance_threshold=3, test_fraction=1.0
    )

    collection.refresh_from_db()
    assert (collection.ndcg_k, collection.relevance_threshold, collection.test_fraction) == (5, 3, 1.0)
