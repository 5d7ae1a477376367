import numpy as np
import pytest

from judges.stats.confusion import confusion_matrix


def test_confusion_matrix_counts_rows_people_columns_judge():
    matrix = confusion_matrix([0, 0, 1, 3, 3, 2], [0, 1, 1, 2, 3, 3])

    assert matrix.tolist() == [
        [1, 1, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 1],
        [0, 0, 1, 1],
    ]
    assert np.trace(matrix) == 3


def test_confusion_matrix_empty_is_zeros():
    assert confusion_matrix([], []).tolist() == [[0] * 4] * 4


def test_confusion_matrix_grade_outside_scale_raises():
    with pytest.raises(ValueError, match="second must hold grades from 0 to 3"):
        confusion_matrix([1], [7])
