"""The main queue: the most useful question for a rater now (``next_task``), and what the same state
tells (``task_for_question``, ``queue_pairs``, ``queue_pairs_with_reasons``, ``rater_overview``).

* :mod:`.state` – one rater's state of a collection, in a handful of queries (parts kept per process).
* :mod:`.assess` – one question's priority, sort key, reason and answers to show for the rater.
* :mod:`.pick` – ``next_task``, and the queue's order walked from its front (kept assessments).
* :mod:`.reads` – the next pairs in order, a question opened directly, the home page's overview.

Per rater, a question is offered only while it holds a pair the rater has not rated (and they have not
skipped the question). Questions are ranked by the first of these that applies, and the reason is shown:

1. test questions whose latest evaluation put unlabelled answers in the top k (they make NDCG@k uncertain);
2. pairs with fewer raters than the target (``collection.target_raters``; ``overlap_target_raters`` for a
   deterministic sample of questions used to measure agreement), the least-rated questions first
   (training before test on a tie), so training and test questions fill up together;
3. pairs whose raters disagree by 2 or more stars (a further opinion settles them);
4. pairs where a judge (a model) is 2 or more stars from people, then a judge's least sure grades no
   person rated (:mod:`raters.next_task.judge_reads`);
5. questions with the lowest NDCG@k in the latest evaluation.

A question's pool is its candidates (:mod:`raters.next_task.pool`) within its rating budget
(:mod:`raters.next_task.budget`), plus the pairs the queue wants judged (unlabelled answers of the latest
evaluation's top k, labelled pairs short of raters or disputed). A page shows at most k answers at a time,
shuffled.
"""

from raters.next_task.picking.pick import next_task
from raters.next_task.picking.reads import (
    Overview,
    queue_pairs,
    queue_pairs_with_reasons,
    rater_overview,
    task_for_question,
)
from raters.next_task.table import latest_run

__all__ = [
    "Overview",
    "latest_run",
    "next_task",
    "queue_pairs",
    "queue_pairs_with_reasons",
    "rater_overview",
    "task_for_question",
]
