"""Reads for judges (one subject per module).

* :mod:`.grades` – people's grades (the label rule over people's ratings only) and a judge's stars.
* :mod:`.pairs` – the pairs a new judging run judges, by its selection (the queue, test top k, ...).
* :mod:`.runs` – a collection's judges and a judge's runs.
* :mod:`.agreement` – how far a judge agrees with people; its least certain grades; runs scored both ways.
"""

from .agreement import (
    DISAGREEMENTS_SHOWN,
    LEAST_CERTAIN_SHOWN,
    Agreement,
    SystemScore,
    UncertainJudgment,
    agreement,
    latest_runs,
    least_certain,
    system_scores,
)
from .grades import HumanPair, Pair, human_grades, human_labelled_pairs, judge_grades
from .pairs import select_pairs
from .runs import judges_of, judgings_of, latest_judging

__all__ = [
    "DISAGREEMENTS_SHOWN",
    "LEAST_CERTAIN_SHOWN",
    "Agreement",
    "HumanPair",
    "Pair",
    "SystemScore",
    "UncertainJudgment",
    "agreement",
    "human_grades",
    "human_labelled_pairs",
    "judge_grades",
    "judges_of",
    "judgings_of",
    "latest_judging",
    "latest_runs",
    "least_certain",
    "select_pairs",
    "system_scores",
]
