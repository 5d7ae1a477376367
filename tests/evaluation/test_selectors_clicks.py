"""Implicit judgments of a collection from its UBI log: COEC by the SRW formula, the DBN's and the PBM's
attractiveness on the hand-built log of ``click_log.py``, matched to questions by normalised text.

Worked by hand, with the date range 2026-11-28 and max_rank 20 (16 events kept: not the click at
ordinal 21, the click of 2026-11-20 or the other application's), expected CTR per rank:
rank 1: 3 clicks / 5 impressions = 0.6; rank 2: 1 / 3; rank 3: 1 click / 1 impression = 1.0; rank 4: 0.
COEC = clicks / (ctr(best rank) · impressions):
"laptop bag"·a1: 2 / (0.6 · 2) = 5/3 (2 stars); ·a2: 1 / (0.6 · 2) = 5/6 (1 star); ·a3: 0 (0 stars);
"usb cable"·a1 and ·a3: 0 (0 stars); ·a2: a click, no impression: COEC 0 and no stars.
"""

from __future__ import annotations

import datetime as dt
import uuid

import numpy as np
import pytest

from evaluation.online import fit_position_based_model
from evaluation.selectors.clicks import (
    ClickParameters,
    implicit_judgments,
    implicit_judgments_cached,
    normalise,
    star_mapping,
)
from tests.evaluation.click_log import clicky_collection
from ubi.models import UbiEvent

DAY = dt.date(2026, 11, 28)


@pytest.fixture
def clicky(db):
    return clicky_collection()


def _by_pair(result):
    return {(j.question_external_id, j.answer_external_id): j for j in result.judgments}


def test_normalise_folds_case_and_space():
    assert normalise("  Laptop \t BAG\n") == "laptop bag"


def test_implicit_judgments_coec_by_the_srw_formula(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY))

    pairs = _by_pair(result)
    assert {pair: (j.clicks, j.impressions, j.best_rank) for pair, j in pairs.items()} == {
        ("q1", "a1"): (2, 2, 1),
        ("q1", "a2"): (1, 2, 1),
        ("q1", "a3"): (0, 1, 3),
        ("q2", "a1"): (0, 1, 2),
        ("q2", "a2"): (1, 0, 3),
        ("q2", "a3"): (0, 1, 1),
    }
    assert pairs[("q1", "a1")].coec == pytest.approx(5 / 3)
    assert pairs[("q1", "a2")].coec == pytest.approx(5 / 6)
    assert [pairs[p].coec for p in [("q1", "a3"), ("q2", "a1"), ("q2", "a2"), ("q2", "a3")]] == [0, 0, 0, 0]
    assert {pair: j.coec_stars for pair, j in pairs.items()} == {
        ("q1", "a1"): 2,
        ("q1", "a2"): 1,
        ("q1", "a3"): 0,
        ("q2", "a1"): 0,
        ("q2", "a2"): None,
        ("q2", "a3"): 0,
    }
    assert result.expected_ctr[:4] == [(1, 0.6), (2, pytest.approx(1 / 3)), (3, 1.0), (4, 0.0)]
    assert len(result.expected_ctr) == 20
    assert result.events == 16


def test_implicit_judgments_counts_unmatched_queries(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY))

    assert (result.queries, result.matched_queries, result.unmatched_texts) == (5, 3, 1)
    assert result.unmatched == [("cheap phones", 2)]
    assert result.unknown_answer_pairs == 1  # "usb cable"·zz


def test_implicit_judgments_without_date_range_keep_the_old_click(clicky):
    result = implicit_judgments(collection=clicky)

    pairs = _by_pair(result)
    # rank 3: 2 clicks / 1 impression = 2.0; "laptop bag"·a3: 1 / (2.0 · 1) = 0.5, 1 star.
    assert result.expected_ctr[2] == (3, 2.0)
    assert (pairs[("q1", "a3")].clicks, pairs[("q1", "a3")].coec, pairs[("q1", "a3")].coec_stars) == (
        1,
        0.5,
        1,
    )
    assert result.events == 17


def test_implicit_judgments_max_rank_one_keeps_the_top(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(max_rank=1, start_date=DAY))

    pairs = _by_pair(result)
    assert sorted(pairs) == [("q1", "a1"), ("q1", "a2"), ("q2", "a3")]
    assert pairs[("q1", "a1")].coec == pytest.approx(1 / 0.6)
    assert pairs[("q1", "a2")].coec == pytest.approx(1 / 0.6)
    assert result.expected_ctr == [(1, 0.6)]


def test_implicit_judgments_pbm_fits_the_rows_of_the_log(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY))

    # Pairs in (text, object) order: cheap·a1 0, laptop·a1 1, ·a2 2, ·a3 3, usb·a1 4, ·a2 5, ·a3 6, ·zz 7;
    # rows (rank, pair, clicks, impressions), a click counting as seen (usb·a2 at rank 3).
    rows = [(1, 1, 1, 1), (2, 1, 1, 1), (2, 2, 0, 1), (1, 2, 1, 1), (3, 3, 0, 1), (1, 6, 0, 1)]
    rows += [(2, 4, 0, 1), (3, 5, 1, 1), (4, 7, 0, 1), (1, 0, 1, 2)]
    rank, pair, clicks, shown = (np.array(column) for column in zip(*rows, strict=True))
    model = fit_position_based_model(rank, pair, clicks, shown, n_pairs=8)
    pairs = _by_pair(result)
    expected = {("q1", "a1"): 1, ("q1", "a2"): 2, ("q1", "a3"): 3, ("q2", "a1"): 4, ("q2", "a2"): 5}
    expected[("q2", "a3")] = 6
    for key, index in expected.items():
        assert pairs[key].attractiveness == pytest.approx(model.attractiveness[index], rel=1e-12)
        assert pairs[key].pbm_stars == min(int(4 * model.attractiveness[index]), 3)
        assert pairs[key].seen == model.impressions[index]
    assert [theta for _, theta in result.examination] == pytest.approx(model.examination.tolist(), rel=1e-12)
    assert (result.pbm_iterations, result.pbm_converged) == (model.iterations, model.converged)


def test_implicit_judgments_dbn_reads_the_sessions_of_the_log(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY))

    # Sessions are query ids. Q1: a1* a2 a3 (last click at 1: a2, a3 unread); Q2: a2* a1* (a2's click was
    # not the last: s = 0); Q3: a3 a1 a2* zz (a click with no impression counts as shown; zz unread).
    # SDBN: laptop·a1 2 clicks / 2 reads, s 2/2; ·a2 1/1, s 0/1; ·a3 never read; usb·a1 and ·a3 0/1;
    # ·a2 1/1, s 1/1. EM (from those smoothed, (k + 1) / (n + 2)) ends where the last click of Q1 satisfies
    # (s = 1: nothing clicked below it says otherwise), so a2 and a3 below it were unread: a2 stays 1.
    pairs = _by_pair(result)
    assert {pair: (j.dbn_reads, j.dbn_stars) for pair, j in pairs.items()} == {
        ("q1", "a1"): (2, 3),
        ("q1", "a2"): (1, 3),
        ("q1", "a3"): (0, None),
        ("q2", "a1"): (1, 0),
        ("q2", "a2"): (1, 3),
        ("q2", "a3"): (1, 0),
    }
    none = -1.0  # stands for None (never read, never clicked) in the comparison
    figures = {
        pair: tuple(none if x is None else x for x in (j.dbn_attractiveness, j.dbn_satisfaction))
        for pair, j in pairs.items()
    }
    assert figures == {
        ("q1", "a1"): pytest.approx((1.0, 1.0), abs=1e-5),
        ("q1", "a2"): pytest.approx((1.0, 0.0), abs=1e-5),
        ("q1", "a3"): (none, none),
        ("q2", "a1"): (0.0, none),
        ("q2", "a2"): pytest.approx((1.0, 1.0), abs=1e-5),
        ("q2", "a3"): (0.0, none),
    }
    assert (result.dbn_sessions, result.dbn_converged) == (5, True)
    assert pairs[("q1", "a2")].stars("dbn") == 3 and pairs[("q1", "a2")].value("dbn") == pytest.approx(1.0)


def test_implicit_judgments_of_a_log_elsewhere_are_empty(clicky):
    result = implicit_judgments(collection=clicky, parameters=ClickParameters(application="nobody"))

    assert (result.judgments, result.events, result.queries, result.examination) == ([], 0, 0, [])


def test_click_parameters_refuse_a_reversed_range():
    with pytest.raises(ValueError, match="start_date must not be after end_date"):
        ClickParameters(start_date=DAY, end_date=DAY - dt.timedelta(days=1))


def test_star_mapping_shows_the_thresholds():
    assert star_mapping((0.5, 1.0, 2.0)) == [
        {"stars": 0, "from": None, "below": 0.5},
        {"stars": 1, "from": 0.5, "below": 1.0},
        {"stars": 2, "from": 1.0, "below": 2.0},
        {"stars": 3, "from": 2.0, "below": None},
    ]


def test_implicit_judgments_cached_until_the_log_changes(clicky):
    first = implicit_judgments_cached(collection=clicky)
    again = implicit_judgments_cached(collection=clicky)
    UbiEvent.objects.create(event_id=uuid.uuid4(), application="clicky", action_name="click", query_id="Q3",
                            timestamp=dt.datetime(2026, 11, 28, tzinfo=dt.UTC), ordinal=1, object_id="a3")  # fmt: skip

    after = implicit_judgments_cached(collection=clicky)

    assert (first.events, again.events, after.events) == (17, 17, 18)
    assert [
        j.clicks for j in after.judgments if j.answer_external_id == "a3" and j.question_external_id == "q2"
    ] == [1]
