"""A collection's implicit judgments from its UBI log: the events kept, matched to pairs, COEC, the DBN
and the PBM figures with their stars (the package docstring says how)."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, defaultdict

import numpy as np
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from corpus.models import Answer, Collection, Question
from evaluation.online import (
    ATTRACTIVENESS_THRESHOLDS,
    COEC_THRESHOLDS,
    NO_RANK,
    NO_STARS,
    coec,
    to_stars,
)
from evaluation.selectors.clicks.fits import cascade_model, position_based_model
from evaluation.selectors.clicks.parameters import (
    UNMATCHED_SHOWN,
    ClickParameters,
    ImplicitJudgment,
    ImplicitJudgments,
    normalise,
)
from ubi.models import UbiEvent, UbiQuery
from ubi.production_questions import logged_queries


def _in_range(queryset: QuerySet, parameters: ClickParameters) -> QuerySet:
    if parameters.start_date:
        start = dt.datetime.combine(parameters.start_date, dt.time(), tzinfo=dt.UTC)
        queryset = queryset.filter(timestamp__gte=start)
    if parameters.end_date:
        end = dt.datetime.combine(parameters.end_date + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
        queryset = queryset.filter(timestamp__lt=end)
    return queryset


def _events(application: str, parameters: ClickParameters) -> list[tuple[str, int, str | None, str, str]]:
    """(action, ordinal, user_query or None, object_id, query_id) of the kept events."""
    queries = UbiQuery.objects.filter(query_id=OuterRef("query_id"))
    events = UbiEvent.objects.filter(ordinal__isnull=False, ordinal__lte=parameters.max_rank).filter(
        Exists(queries.filter(application=application)) | (Q(application=application) & ~Exists(queries))
    )
    events = _in_range(events, parameters).annotate(user_query=Subquery(queries.values("user_query")[:1]))
    return list(
        events.order_by().values_list("action_name", "ordinal", "user_query", "object_id", "query_id")
    )


def implicit_judgments(
    *, collection: Collection, parameters: ClickParameters | None = None
) -> ImplicitJudgments:
    """Every matched pair's COEC, DBN and PBM figures with their stars, and what did not match."""
    parameters = parameters or ClickParameters()
    application = parameters.application or collection.slug
    questions: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for pk, external_id, text in (
        Question.objects.filter(collection=collection).order_by("pk").values_list("pk", "external_id", "text")
    ):
        questions[normalise(text)].append((pk, external_id))
    texts = Counter(
        normalise(text)
        for text in logged_queries(
            application=application, start_date=parameters.start_date, end_date=parameters.end_date
        )
        .order_by()
        .values_list("user_query", flat=True)
        .iterator(chunk_size=5000)
    )
    unmatched = Counter({text: n for text, n in texts.items() if text not in questions})
    rows = _events(application, parameters)
    action = [a for a, _, _, _, _ in rows]
    ordinal = np.array([o for _, o, _, _, _ in rows], dtype=np.int64)
    spelt = {q: normalise(q) for q in {q for _, _, q, _, _ in rows if q is not None}}
    query = [None if q is None else spelt[q] for _, _, q, _, _ in rows]
    object_id = [o for _, _, _, o, _ in rows]
    query_id = [s for _, _, _, _, s in rows]
    result = coec(
        action=action,
        ordinal=ordinal,
        user_query=np.array(query, dtype=object),
        object_id=np.array(object_id, dtype=object),
        max_rank=parameters.max_rank,
        first_ordinal=1,
    )
    model = position_based_model(result, action, ordinal, query, object_id)
    attractiveness = model.attractiveness if model else np.full(result.value.size, np.nan)
    seen = model.impressions if model else np.zeros(result.value.size, dtype=np.int64)
    pbm_stars = to_stars(attractiveness, ATTRACTIVENESS_THRESHOLDS)
    cascade = cascade_model(result, action, ordinal, query, object_id, query_id)
    nothing = np.full(result.value.size, np.nan)
    dbn_a = cascade.attractiveness if cascade else nothing
    dbn_s = cascade.satisfaction if cascade else nothing
    dbn_seen = cascade.reads if cascade else np.zeros(result.value.size, dtype=np.int64)
    dbn_stars = to_stars(dbn_a, ATTRACTIVENESS_THRESHOLDS)
    coec_stars = to_stars(result.value, COEC_THRESHOLDS)
    answers = dict(
        Answer.objects.filter(collection=collection, external_id__in=set(result.object_id.tolist()))
        .order_by()
        .values_list("external_id", "pk")
    )
    judgments, unknown = [], 0
    columns = zip(
        result.user_query.tolist(),
        result.object_id.tolist(),
        result.clicks.tolist(),
        result.impressions.tolist(),
        result.best_rank.tolist(),
        result.value.tolist(),
        coec_stars.tolist(),
        attractiveness.tolist(),
        seen.tolist(),
        pbm_stars.tolist(),
        dbn_a.tolist(),
        dbn_s.tolist(),
        dbn_seen.tolist(),
        dbn_stars.tolist(),
        strict=True,
    )
    for (
        text,
        object_,
        clicks,
        impressions,
        best,
        value,
        stars,
        gamma,
        shown,
        pbm,
        a,
        s,
        reads,
        dbn,
    ) in columns:
        if text not in questions:
            continue
        if object_ not in answers:
            unknown += 1
            continue
        for question_id, question_external_id in questions[text]:
            judgments.append(
                ImplicitJudgment(
                    question_id=question_id,
                    answer_id=answers[object_],
                    question_external_id=question_external_id,
                    answer_external_id=object_,
                    query=text,
                    clicks=clicks,
                    impressions=impressions,
                    best_rank=None if best == NO_RANK else best,
                    coec=value,
                    coec_stars=stars if impressions > 0 else None,
                    attractiveness=None if math.isnan(gamma) else gamma,
                    seen=shown,
                    pbm_stars=None if pbm == NO_STARS else pbm,
                    dbn_attractiveness=None if math.isnan(a) else a,
                    dbn_satisfaction=None if math.isnan(s) else s,
                    dbn_reads=reads,
                    dbn_stars=None if dbn == NO_STARS else dbn,
                )
            )
    judgments.sort(key=lambda j: (j.question_id, -(j.coec), j.answer_id))
    return ImplicitJudgments(
        parameters=parameters,
        judgments=judgments,
        events=len(rows),
        queries=sum(texts.values()),
        matched_queries=sum(n for text, n in texts.items() if text in questions),
        unmatched_texts=len(unmatched),
        unmatched=sorted(unmatched.items(), key=lambda item: (-item[1], item[0]))[:UNMATCHED_SHOWN],
        unknown_answer_pairs=unknown,
        expected_ctr=[(result.first_ordinal + r, float(c)) for r, c in enumerate(result.expected_ctr)],
        examination=[(int(r), float(t)) for r, t in zip(model.ranks, model.examination, strict=True)]
        if model
        else [],
        pbm_iterations=model.iterations if model else 0,
        pbm_converged=bool(model.converged) if model else True,
        dbn_iterations=cascade.iterations if cascade else 0,
        dbn_converged=bool(cascade.converged) if cascade else True,
        dbn_sessions=cascade.sessions if cascade else 0,
    )
