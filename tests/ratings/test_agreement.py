import math

import pytest

from ratings.agreement import coincidences, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units,
# values 1-5, with missing values (None).
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
UNITS = [[row[i] for row in OBSERVERS if row[i] is not None] for i in range(12)]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_matches_published_example(level, published):
    assert round(krippendorff_alpha(UNITS, level=level), 3) == published


def test_krippendorff_alpha_ordinal_hand_computed():
    # Units (0, 0), (0, 1), (3, 3): coincidences o00=2, o01=o10=1, o33=2; n0=3, n1=1, n3=2, n=6.
    # Ordinal δ²: d(0,1) = (3+1 - 2)² = 4, d(0,3) = (3+1+0+2 - 2.5)² = 12.25, d(1,3) = (1+0+2 - 1.5)² = 2.25.
    # Observed Σ o·δ² = 2·4 = 8. Expected Σ n_c·n_k·δ² = 2·(3·1·4 + 3·2·12.25 + 1·2·2.25) = 180.
    # α = 1 − (6 − 1)·8/180 = 7/9.
    assert math.isclose(krippendorff_alpha([[0, 0], [0, 1], [3, 3]]), 7 / 9)


def test_krippendorff_alpha_perfect_agreement_is_one():
    assert krippendorff_alpha([[0, 0], [3, 3, 3], [1, 1]]) == 1.0


def test_krippendorff_alpha_undefined_without_variation_or_pairs():
    assert krippendorff_alpha([[2, 2], [2, 2]]) is None
    assert krippendorff_alpha([[1], [3]]) is None
    assert krippendorff_alpha([]) is None


def test_krippendorff_alpha_unknown_level_rejected():
    with pytest.raises(ValueError, match="level must be one of nominal, ordinal, interval, not 'ratio'"):
        krippendorff_alpha(UNITS, level="ratio")


def test_coincidences_weight_pairs_by_unit_size():
    values, o = coincidences([[1, 1, 2]])

    assert values.tolist() == [1.0, 2.0]
    # Ordered pairs: (1,1) twice, (1,2) twice, (2,1) twice; each divided by m − 1 = 2.
    assert o.tolist() == [[1.0, 1.0], [1.0, 0.0]]
