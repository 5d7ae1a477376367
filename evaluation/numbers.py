"""Numbers in words: how every page, message and API text writes a figure, one function per kind.

Pure formatting, no queries and no Django. A value that is missing (None), NaN or not a number at all
(a string, a bool: ``RankerVersion.comparison`` and ``details`` are JSON that may hold anything) shows
as :data:`NO_VALUE`, "–".

* :func:`figure` – an NDCG@k, accuracy@k or any other 0–1 mean: three decimals, "0.412".
* :func:`figure_range` – two such figures as a range: "0.412–0.530".
* :func:`signed` – a difference of two figures: signed, three decimals, a true minus ("+0.041",
  "−0.012"); a difference that rounds to zero is "+0.000", never "−0.000".
* :func:`interval` – a confidence interval of a difference: "−0.010 to +0.052".
* :func:`p_text` – a p-value with its name: "p = 0.004", "p < 0.001", "p = –" (``name="p (Holm)"``:
  "p (Holm) = 0.004").
* :func:`percent` – a share 0–1 as a percentage: "42%", one decimal with ``digits=1``: "12.3%".
* :func:`probability` – a probability as a whole percentage, kept off 0% and 100% unless it is exactly
  that: 0.996 is "99%", 0.004 is "1%".
* :func:`count` – a count with thousands separators: "1,234".

Templates show the same kinds through the filters of ``evaluation/templatetags/numbers.py``
(``{% load numbers %}``, ``{{ run.ndcg_mean|figure }}``).
"""

from __future__ import annotations

import math
from numbers import Real

NO_VALUE = "–"
# Below this a p-value shows as "p < 0.001": three decimals cannot tell it from 0.
P_FLOOR = 0.001


def number(value: object) -> float | None:
    """``value`` as a float, or None when it is missing, NaN or not a number (bools are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    result = float(value)
    return None if math.isnan(result) else result


def figure(value: object) -> str:
    """An NDCG@k, accuracy@k or other 0–1 mean: "0.412"; "–" when there is none."""
    x = number(value)
    return NO_VALUE if x is None else f"{x:.3f}"


def figure_range(low: object, high: object) -> str:
    """Two figures as a range, low first: "0.412–0.530"."""
    return f"{figure(low)}–{figure(high)}"


def signed(value: object) -> str:
    """A difference of figures: "+0.041", "−0.012" (a true minus); "+0.000" for any difference that
    rounds to zero (never "−0.000"); "–" when there is none."""
    x = number(value)
    if x is None:
        return NO_VALUE
    rounded = round(x, 3) or 0.0  # -0.0 is falsy: a difference that rounds to zero shows "+0.000"
    return f"{rounded:+.3f}".replace("-", "−")


def interval(low: object, high: object) -> str:
    """A confidence interval of a difference: "−0.010 to +0.052"."""
    return f"{signed(low)} to {signed(high)}"


def p_text(value: object, name: str = "p") -> str:
    """A p-value after its name: "p = 0.004", "p < 0.001" (below :data:`P_FLOOR`), "p = –" when
    there is none."""
    x = number(value)
    if x is None:
        return f"{name} = {NO_VALUE}"
    return f"{name} < {P_FLOOR}" if x < P_FLOOR else f"{name} = {x:.3f}"


def percent(share: object, digits: int = 0) -> str:
    """A share 0–1 as a percentage: "42%" (``digits=1``: "12.3%"); "–" when there is none."""
    x = number(share)
    return NO_VALUE if x is None else f"{100 * x:.{digits}f}%"


def probability(value: object) -> str:
    """A probability as a whole percentage kept off 0% and 100% unless exact: 0.996 is "99%", 0.004
    is "1%"; "–" when there is none."""
    x = number(value)
    if x is None:
        return NO_VALUE
    whole = round(100 * x)
    if whole == 100 and x < 1:
        whole = 99
    if whole == 0 and x > 0:
        whole = 1
    return f"{whole}%"


def count(value: object) -> str:
    """A count with thousands separators: "1,234"; "–" when there is none."""
    x = number(value)
    return NO_VALUE if x is None else f"{round(x):,}"
