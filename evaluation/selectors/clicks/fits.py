"""The click models fitted to the kept events: the position-based model and the cascade (DBN) model,
from the same counted rows."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evaluation.online import (
    CascadeModel,
    Coec,
    PositionBasedModel,
    fit_dbn,
    fit_position_based_model,
)


def _counted_rows(
    result: Coec, action: list[str], query: list[str | None], object_id: list[str]
) -> tuple[NDArray, NDArray[np.bool_], NDArray[np.int64]] | None:
    """(action names lower-cased, which events count: a click or an impression of a matched text, each
    counted event's pair index among the COEC rows); None when no event counts. Each event finds its pair
    by a dict of the COEC rows."""
    kind = np.char.lower(np.asarray(action, dtype=str)) if action else np.empty(0, dtype=str)
    known = np.array([q is not None for q in query], dtype=bool)
    counted = known & ((kind == "click") | (kind == "impression"))
    if not counted.any():
        return None
    index = {
        pair: i
        for i, pair in enumerate(zip(result.user_query.tolist(), result.object_id.tolist(), strict=True))
    }
    texts = np.asarray(query, dtype=object)[counted].astype(str).tolist()
    objects = np.asarray(object_id, dtype=object)[counted].astype(str).tolist()
    pair = np.fromiter((index[p] for p in zip(texts, objects, strict=True)), dtype=np.int64, count=len(texts))
    return kind, counted, pair


def position_based_model(
    result: Coec, action: list[str], ordinal: NDArray[np.int64], query: list[str | None], object_id: list[str]
) -> PositionBasedModel | None:
    """The PBM fitted to (ordinal, pair) rows of clicks and impressions (n = max of the two); None when
    no pair has either. Each click or impression finds its pair among the COEC rows by a dict of them;
    the rows are counted with ``np.unique`` and ``np.bincount``."""
    rows = _counted_rows(result, action, query, object_id)
    if rows is None:
        return None
    kind, counted, pair = rows
    n_pairs = result.value.size
    is_click = kind[counted] == "click"
    codes, row = np.unique(ordinal[counted] * n_pairs + pair, return_inverse=True)
    clicks = np.bincount(row, weights=is_click, minlength=codes.size).astype(np.int64)
    shown = np.bincount(row, weights=~is_click, minlength=codes.size).astype(np.int64)
    return fit_position_based_model(
        codes // n_pairs, codes % n_pairs, clicks, np.maximum(shown, clicks), n_pairs=n_pairs
    )


def cascade_model(
    result: Coec,
    action: list[str],
    ordinal: NDArray[np.int64],
    query: list[str | None],
    object_id: list[str],
    query_id: list[str],
) -> CascadeModel | None:
    """The DBN fitted to the sessions of the log: one per query id, a row per (ordinal, pair) with an
    impression or a click event, clicked when a click event is there; None when no pair has either. Rows
    are made unique with ``np.unique`` over (session, ordinal, pair) codes."""
    rows = _counted_rows(result, action, query, object_id)
    if rows is None:
        return None
    kind, counted, pair = rows
    _, session = np.unique(np.asarray(query_id, dtype=str)[counted], return_inverse=True)
    n_pairs, ranks = result.value.size, int(ordinal[counted].max()) + 1
    codes, row = np.unique((session.ravel() * ranks + ordinal[counted]) * n_pairs + pair, return_inverse=True)
    clicked = np.bincount(row.ravel(), weights=kind[counted] == "click", minlength=codes.size) > 0
    return fit_dbn(
        codes // n_pairs // ranks, codes // n_pairs % ranks, codes % n_pairs, clicked, n_pairs=n_pairs
    )
