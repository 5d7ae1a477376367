"""Files a trained version ranks with are named by their content, so a reused label never aliases."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from rankers.fitting import rated_file_write
from rankers.signals import RatedQuestions
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers


def _rated(stars: float) -> RatedQuestions:
    return RatedQuestions(vectors=np.eye(1, 384, dtype=np.float32), gains=sparse.csr_matrix([[stars, 0.0]]))


def test_rated_file_write_same_label_other_content_gets_another_name(model_dir):
    first = rated_file_write(ranker_id=1, label="v2", rated=_rated(3.0), answer_ids=["a1", "a2"])
    again = rated_file_write(ranker_id=1, label="v2", rated=_rated(3.0), answer_ids=["a1", "a2"])
    other = rated_file_write(ranker_id=1, label="v2", rated=_rated(1.0), answer_ids=["a1", "a2"])

    assert first == again
    assert first != other
    assert first.startswith("models/ranker-1/v2-") and first.endswith("-rated.npz")
    assert (model_dir / first).exists() and (model_dir / other).exists()
