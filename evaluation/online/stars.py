"""Clicks as 0–3 stars: COEC and the PBM's and DBN's attractiveness mapped to the raters' scale, thresholds
shown.

A value v becomes ``stars(v) = #{thresholds t : v ≥ t}`` (``np.searchsorted(t, v, side="right")``), so with
thresholds (t₁, t₂, t₃)::

    0 stars: v < t₁     1 star: t₁ ≤ v < t₂     2 stars: t₂ ≤ v < t₃     3 stars: v ≥ t₃

* COEC (:mod:`.coec`), ``COEC_THRESHOLDS = (0.5, 1, 2)``: steps of a factor 2 around 1, the CTR expected
  at the hit's rank. 0 stars below half the expected clicks, 1 up to as many as expected, 2 up to twice
  as many, 3 beyond. A pair with no click has COEC 0, so 0 stars.
* Attractiveness γ of the position-based model (:mod:`.click_model`), the chance a user who sees the hit
  clicks it, and attractiveness a of the cascade (DBN) model (:mod:`.dbn`), the chance a user who reads
  it clicks it: ``ATTRACTIVENESS_THRESHOLDS = (0.25, 0.5, 0.75)``, equal quarters of that probability,
  ``stars = min(⌊4γ⌋, 3)``. The cascade users of bench_online click grades 0/1/2 with 0.05/0.5/0.95
  (navigational), 0.4/0.7/0.9 (informational) and 0/0.5/1 (perfect): 0/2/3, 1/2/3 and 0/2/3 stars once a
  is estimated well, an order that agrees with the grades in all three.

Both are starting points to be checked against people's ratings (a clicks judge is trusted only once its
agreement with people is shown), and a caller may pass its own thresholds. NaN (no evidence) maps to −1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ATTRACTIVENESS_THRESHOLDS", "COEC_THRESHOLDS", "NO_STARS", "to_stars"]

COEC_THRESHOLDS = (0.5, 1.0, 2.0)
ATTRACTIVENESS_THRESHOLDS = (0.25, 0.5, 0.75)
NO_STARS = -1


def to_stars(values: ArrayLike, thresholds: tuple[float, float, float]) -> NDArray[np.int8]:
    """0–3 stars for each value (``NO_STARS`` for NaN), by three increasing thresholds."""
    t = np.asarray(thresholds, dtype=np.float64)
    if t.shape != (3,) or not (np.diff(t) > 0).all():
        raise ValueError(f"thresholds must be three increasing numbers, got {thresholds}")
    v = np.asarray(values, dtype=np.float64)
    stars = np.searchsorted(t, np.nan_to_num(v, nan=-np.inf), side="right").astype(np.int8)
    return np.where(np.isnan(v), NO_STARS, stars).astype(np.int8)
