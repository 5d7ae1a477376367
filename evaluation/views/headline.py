"""The headline the dashboard and a run's page show: NDCG@k and accuracy@k with their interval, a warning
when too few of the top answers are rated, and the change since the ranker's previous run."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation import selectors
from evaluation.models import EvaluationRun, RunStatus
from evaluation.numbers import figure, figure_range

# Below this share of judged answers in the top k, the headline is uncertain: say so and link to rating.
JUDGED_WARNING = 0.9


@dataclass(frozen=True)
class Headline:
    """The headline number and the words around it."""

    run: EvaluationRun

    @property
    def ndcg(self) -> str:
        return figure(self.run.ndcg_mean)

    @property
    def accuracy(self) -> str:
        """Accuracy@k in the NDCG's format (0.700): both are 0–1 means over the same questions."""
        return figure(self.run.accuracy_mean)

    @property
    def judged_percent(self) -> int | None:
        return round(100 * self.run.judged_mean) if self.run.judged_mean is not None else None

    @property
    def ci(self) -> str:
        if self.run.ndcg_ci_low is None:
            return ""
        return figure_range(self.run.ndcg_ci_low, self.run.ndcg_ci_high)

    @property
    def low_judged(self) -> bool:
        return self.run.judged_mean is not None and self.run.judged_mean < JUDGED_WARNING


def change_since_previous(run: EvaluationRun | None) -> selectors.ChangeExplanation | None:
    """The run's change since the ranker's previous successful run (None for a first run)."""
    if run is None or run.status != RunStatus.SUCCEEDED:
        return None
    previous = selectors.previous_successful_run(run=run)
    if previous is None:
        return None
    return selectors.change_explained(run_a=previous, run_b=run)
