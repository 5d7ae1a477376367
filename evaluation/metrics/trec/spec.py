"""The supported measures, their default cutoffs and trec_eval's ``-m`` syntax.

Measures are printed in trec_eval's order (:data:`MEASURE_ORDER`: ``runid``, ``num_q``, ``P``,
``recall``, ``ndcg_cut``, ``ndcg_cut_judged``, ``success``), cutoffs ascending.  ``ndcg_cut_judged`` is
``trec_eval -J -m ndcg_cut`` (judged documents only) under its own name, so it can be printed beside
``ndcg_cut``; its lines read ``ndcg_cut_judged_10``.  Cutoffs are parsed like C's ``atol``
(``23.4`` is 23); duplicates or cutoffs <= 0 are errors, as in trec_eval, and when a measure is given
twice the first parameter list wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_MEASURES", "JUDGED_ONLY", "MEASURE_ORDER", "Measure", "parse_measures"]

#: Measures printed when none is requested (trec_eval's default would be its "official" set).
DEFAULT_MEASURES: tuple[str, ...] = ("ndcg_cut.10", "success.5")
#: Supported measures, in the order trec_eval prints them.
MEASURE_ORDER: tuple[str, ...] = ("runid", "num_q", "P", "recall", "ndcg_cut", "ndcg_cut_judged", "success")
#: Measures computed on the judged documents only (trec_eval ``-J``): they need the whole ranking.
JUDGED_ONLY: frozenset[str] = frozenset({"ndcg_cut_judged"})
_DEFAULT_CUTOFFS: dict[str, tuple[int, ...]] = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut_judged": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}


@dataclass(frozen=True)
class Measure:
    """A requested measure and its cutoffs (empty for ``runid`` / ``num_q``)."""

    name: str
    cutoffs: tuple[int, ...] = ()

    @property
    def value_names(self) -> list[str]:
        return [f"{self.name}_{c}" for c in self.cutoffs]


def _atol(text: str) -> int:
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def parse_measures(specs: Sequence[str]) -> list[Measure]:
    """Parse ``-m`` arguments (``ndcg_cut.10,20``, ``success``, ``runid`` ...) trec_eval style.

    A name without parameters uses trec_eval's default cutoffs; when a measure is given several
    times, the first parameter list wins.  Returns measures in trec_eval's printing order.
    """
    params: dict[str, str | None] = {}
    for spec in specs:
        name, dot, given = spec.partition(".")
        if name not in MEASURE_ORDER:
            raise ValueError(f"unknown measure {name!r}; supported: {', '.join(MEASURE_ORDER)}")
        if dot and not given:
            raise ValueError(f"improper measure {spec!r}: no parameters after '.'")
        if params.get(name) is None:
            params[name] = given if dot else None
    measures = []
    for name in MEASURE_ORDER:
        if name not in params:
            continue
        if name in ("runid", "num_q"):
            measures.append(Measure(name))
            continue
        param = params[name]
        cutoffs: tuple[int, ...]
        if param is None:
            cutoffs = _DEFAULT_CUTOFFS[name]
        else:
            values = sorted(_atol(p) for p in param.split(","))
            if values[0] <= 0:
                raise ValueError(f"measure {name}.{param}: cutoffs must be positive")
            if len(set(values)) != len(values):
                raise ValueError(f"measure {name}.{param}: duplicate cutoffs")
            cutoffs = tuple(values)
        measures.append(Measure(name, cutoffs))
    return measures
