"""The BM25 index is built once per version, saved, and mapped from disk by every process that loads it
(issue 37); its scores are exactly the scores of the index held in memory, as bm25s computed them before."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import collection_create
from rankers.index import FIELDS, build_index, forget_indexes, index_root, load_index
from rankers.string_table import StringTable
from rankers.text import tokenize
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

ANSWERS = [
    AnswerRecord("a1", "Wing flutter", "flutter of a swept wing at high speed"),
    AnswerRecord("b2", "", "boundary layer transition on a flat plate"),
    AnswerRecord("c3", "Heat transfer", "heat transfer in hypersonic flow over a wing"),
    AnswerRecord("d4", "Flutter speed", "the speed at which flutter starts, measured"),
    AnswerRecord("é5", "Plate buckling", "buckling of a thin plate under heat"),
]
QUERIES = ["wing flutter speed", "heat heat plate", "unknownword wing", "nothing matches", "boundary"]


@pytest.fixture
def collection(model_dir):
    collection = collection_create(name="C", slug="c")
    collection_import(collection=collection, answers=ANSWERS)
    return collection


def test_load_index_scores_equal_bm25s_scores_of_the_index_in_memory(collection):
    built = build_index(collection=collection)
    mapped = load_index(collection=collection)

    for query in QUERIES:
        terms = tokenize(query)
        for field in FIELDS:
            in_memory = built.bm25[field]
            # the old path: bm25s looks the query's strings up in the field's own vocabulary
            known = [t for t in terms if t in in_memory.vocab_dict] if in_memory else []
            before = in_memory.get_scores(known) if known else np.zeros(5, np.float32)
            assert np.array_equal(mapped.scores(field, terms), before), (query, field)
    got = [round(float(s), 4) for s in mapped.scores("both", tokenize("wing flutter speed"))]
    assert got == [1.4786, 0.0, 0.3711, 1.0854, 0.0]


def test_load_index_maps_the_saved_index_from_disk(collection):
    load_index(collection=collection)
    forget_indexes()  # as a second process would

    index = load_index(collection=collection)

    both = index.bm25["both"]
    mapped = [index.doc_terms, index.doc_offsets, index.idf, index.ids.blob, both.scores["data"]]
    assert all(isinstance(array, np.memmap) for array in mapped)
    assert (
        index.build_seconds,
        both.vocab_dict,
        len(list(index_root(collection_id=collection.pk).iterdir())),
    ) == (
        0.0,
        {},
        2,  # the version and the build lock
    )
    assert (index.position["é5"], index.position.get("zz"), "c3" in index.position, index.ids[1:3]) == (
        4,
        None,
        True,
        ["b2", "c3"],
    )
    assert [int(t) for t in index.doc(0)] == index.term_ids(
        tokenize("Wing flutter flutter of a swept wing at high speed")
    )


def test_string_table_finds_each_string_and_nothing_else(tmp_path):
    strings = ["", "a", "é", "ab", "a" * 300, "x y"]
    StringTable.of(strings).save(tmp_path, "t")

    table = StringTable.load(tmp_path, "t")

    assert ([table.find(s) for s in strings], table.find("b"), list(table), table[-1]) == (
        [0, 1, 2, 3, 4, 5],
        None,
        strings,
        "x y",
    )
