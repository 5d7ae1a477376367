"""Candidates.ranked (rankers/export/fetch.py): the app's ranking of an export model's scores orders equal
scores as the engine's rescorer does, by document number (the real engines: test_export_real_engines.py,
test_export_solr_ltr.py)."""

from __future__ import annotations

import numpy as np

from rankers.export.fetch import Candidates


def test_ranked_orders_equal_scores_by_document_number():
    candidates = Candidates(
        ids=["a", "b", "c", "d", "e"], values=np.zeros((5, 1)), docs=np.array([40, 7, 12, 3, 9])
    )

    # b, c, e tie at 2.0 (documents 7, 12, 9); a and d at 1.0 (documents 40, 3).
    assert candidates.ranked(np.array([1.0, 2.0, 2.0, 1.0, 2.0])) == ["b", "e", "c", "d", "a"]


def test_ranked_without_document_numbers_keeps_the_engines_order_for_ties():
    candidates = Candidates(ids=["a", "b", "c"], values=np.zeros((3, 1)))

    assert candidates.ranked(np.array([1.0, 3.0, 1.0])) == ["b", "a", "c"]


def test_ranked_of_no_candidates_is_empty():
    assert Candidates(ids=[], values=np.zeros((0, 1)), docs=np.zeros(0, np.int64)).ranked(np.zeros(0)) == []
