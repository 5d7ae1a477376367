"""Production questions: logged query texts matched by normalised text, and the frequent others imported as
questions with the commonest spelling and a stable id."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError

from corpus.models import Question
from tests.evaluation.click_log import clicky_collection
from ubi.models import UbiQuery
from ubi.production_questions import (
    normalise_query,
    production_question_id,
    production_questions_import,
    query_spellings,
)


@pytest.fixture
def clicky(db):
    return clicky_collection()


def test_normalise_query_folds_case_and_space():
    assert normalise_query("  Cheap\tPHONES \n") == "cheap phones"


def test_query_spellings_count_each_spelling(clicky):
    assert query_spellings(application="clicky")["laptop bag"] == {"Laptop BAG": 1, "laptop bag": 1}


def test_production_questions_import_takes_the_commonest_spelling(clicky):
    for i, text in enumerate(["Cheap Phones", "Cheap  Phones"]):
        UbiQuery.objects.create(
            query_id=f"spelt-{i}",
            application="clicky",
            user_query=text,
            timestamp=dt.datetime(2026, 11, 28, tzinfo=dt.UTC),
        )

    imported = production_questions_import(collection=clicky, queries=["CHEAP phones", "usb cable"])

    # "Cheap Phones" twice (once with two spaces), "cheap phones" twice: the tie goes to "Cheap Phones".
    assert [(q.external_id, q.text) for q in imported.created] == [
        (production_question_id("cheap phones"), "Cheap Phones")
    ]
    assert imported.already == 1
    assert production_question_id("Cheap  PHONES") == production_question_id("cheap phones")
    assert (
        production_question_id("cheap phones").startswith("ubi-") and len(production_question_id("x")) == 16
    )


def test_production_questions_import_again_adds_nothing(clicky):
    production_questions_import(collection=clicky, queries=["cheap phones"])

    again = production_questions_import(collection=clicky, queries=["cheap phones"])

    assert (again.created, again.already) == ([], 1)
    assert Question.objects.filter(collection=clicky).count() == 3


def test_production_questions_import_refuses_a_text_never_logged(clicky):
    with pytest.raises(ValidationError) as refused:
        production_questions_import(collection=clicky, queries=["cheap phones", "free lunch"])

    assert refused.value.message_dict == {"queries": ["Never asked in the production log: 'free lunch'."]}
    assert Question.objects.filter(collection=clicky).count() == 2
