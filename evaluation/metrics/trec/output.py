"""trec_eval's output lines.

Lines are ``"%-22s\\t%s\\t%6.4f"`` (measure, query id, value): per query (``-q``) first, queries in byte
order of their ids, then the ``all`` summary; measures in trec_eval's order (see :mod:`.spec`), cutoffs
ascending.  ``runid`` prints the run's tag and ``num_q`` the number of evaluated queries.
"""

from __future__ import annotations

from .engine import TrecEvaluation

__all__ = ["format_evaluation"]


def format_evaluation(result: TrecEvaluation, per_query: bool = False) -> list[str]:
    """trec_eval's output lines: per query (if ``per_query``) then the ``all`` summary."""
    lines: list[str] = []
    value_measures = [m for m in result.measures if m.cutoffs]
    if per_query:
        columns = [(name, result.values[name].tolist()) for m in value_measures for name in m.value_names]
        for i, qid in enumerate(result.qids):
            lines.extend(f"{name:<22}\t{qid}\t{values[i]:6.4f}" for name, values in columns)
    for measure in result.measures:
        if measure.name == "runid":
            lines.append(f"{'runid':<22}\tall\t{result.run_id}")
        elif measure.name == "num_q":
            lines.append(f"{'num_q':<22}\tall\t{result.num_q}")
        else:
            lines.extend(f"{name:<22}\tall\t{result.mean(name):6.4f}" for name in measure.value_names)
    return lines
