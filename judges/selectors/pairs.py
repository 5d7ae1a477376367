"""The pairs a new judging run judges, by its selection."""

from __future__ import annotations

from collections import defaultdict

from django.core.exceptions import ValidationError

from corpus.models import Answer, Question
from evaluation.models import QuestionResult
from evaluation.selectors.clicks import METHODS, implicit_judgments
from judges.models import Judge, JudgeKind, Selection
from judges.selectors.grades import Pair, human_grades
from raters.next_task.budget import is_overlap_question
from raters.next_task.picking import queue_pairs
from raters.next_task.table import candidate_table, latest_run
from ratings.models import Label, Rating


def _judged(judge: Judge) -> set[Pair]:
    return set(Rating.objects.filter(rater_id=judge.account.user_id).values_list("question_id", "answer_id"))


def select_pairs(*, judge: Judge, selection: str, limit: int, question_ids: list[str]) -> list[Pair]:
    """The pairs a new run judges, at most ``limit``, none the judge has rated already.

    - queue: the rating queue's next pairs for the judge's account (its order and reasons);
    - test-top: the unlabelled answers in the test questions' top k of the latest evaluation;
    - questions: the current candidates (default ranker's top k) and the labelled answers of the
      questions with these ids;
    - overlap: pairs people rated in the overlap sample, to calibrate the judge against them;
    - clicked: the pairs with click stars in the production log (by the judge's click model for a clicks
      judge, by either for another); a clicks judge rates only these, and every run rates them all
      again, since the log grows.
    """
    collection = judge.collection
    done = _judged(judge) if judge.kind != JudgeKind.CLICKS else set()
    if judge.kind == JudgeKind.CLICKS and selection != Selection.CLICKED:
        raise ValidationError(
            {"selection": "A clicks judge rates the pairs with click evidence: choose “clicked”."}
        )
    if selection == Selection.CLICKED:
        methods = [judge.model] if judge.kind == JudgeKind.CLICKS else list(METHODS)
        pairs = [
            (j.question_id, j.answer_id)
            for j in implicit_judgments(collection=collection).judgments
            if any(j.stars(m) is not None for m in methods)
        ]
    elif selection == Selection.QUEUE:
        pairs = queue_pairs(collection=collection, rater=judge.account.user, limit=limit + len(done))
    elif selection == Selection.TEST_TOP:
        run = latest_run(collection=collection)
        if run is None:
            raise ValidationError(
                {
                    "selection": "No evaluation yet, so the test questions' top 10 is not known: run one "
                    "first (Run evaluation on the collection's dashboard)."
                }
            )
        ids = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        labelled = set(
            Label.objects.filter(question__collection=collection).values_list("question_id", "answer_id")
        )
        pairs = []
        for q, ranked in (
            QuestionResult.objects.filter(run=run, error="")
            .order_by("question_id")
            .values_list("question_id", "ranked_answer_ids")
        ):
            for external_id in (ranked or [])[: run.ndcg_k]:
                a = ids.get(external_id)
                if a is not None and (q, a) not in labelled:
                    pairs.append((q, a))
    elif selection == Selection.QUESTIONS:
        wanted = [str(x).strip() for x in question_ids if str(x).strip()]
        if not wanted:
            raise ValidationError({"question_ids": "Name at least one question id."})
        found = dict(
            Question.objects.filter(collection=collection, external_id__in=wanted)
            .order_by()  # by the unique index: the default order makes SQLite walk the whole collection
            .values_list("external_id", "id")
        )
        missing = [x for x in wanted if x not in found]
        if missing:
            raise ValidationError(
                {"question_ids": f"No question {', '.join(repr(m) for m in missing[:5])} in this collection."}
            )
        table = candidate_table(collection=collection)
        labelled_answers: dict[int, list[int]] = defaultdict(list)
        for q, a in (
            Label.objects.filter(question_id__in=found.values())
            .order_by("answer_id")
            .values_list("question_id", "answer_id")
        ):
            labelled_answers[q].append(a)
        pairs = [
            (found[x], a) for x in wanted for a in [*table.get(found[x], []), *labelled_answers[found[x]]]
        ]
    else:
        external = dict(Question.objects.filter(collection=collection).values_list("id", "external_id"))
        pairs = [
            pair
            for pair in sorted(human_grades(collection=collection))
            if is_overlap_question(
                collection_slug=collection.slug,
                external_id=external[pair[0]],
                fraction=collection.overlap_fraction,
            )
        ]
    result = list(dict.fromkeys(p for p in pairs if p not in done))
    return result[:limit]
