"""The BM25 index keeps each answer's terms in order (features and RM3 read them)."""

from __future__ import annotations

import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import collection_create
from rankers.index import build_index
from rankers.text import tokenize
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import collection_import


@pytest.mark.django_db
def test_index_doc_terms_keep_order_and_repeats(model_dir):
    collection = collection_create(name="C", slug="c")
    collection_import(
        collection=collection,
        answers=[AnswerRecord("a1", "Wing flutter", "flutter of a swept wing at speed")],
    )

    index = build_index(collection=collection)

    terms = tokenize("Wing flutter") + tokenize("flutter of a swept wing at speed")
    assert [int(t) for t in index.doc(0)] == index.term_ids(terms)
    assert len(index.doc(0)) == 6  # "wing" and "flutter" twice each: repeats are kept
