"""Who may manage a judge or a judging run: trainers of its collection (404 to who cannot see it, 403 to
raters)."""

from __future__ import annotations

from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from api.access import caller_role, collection_for
from corpus.models import Role
from judges.models import Judge, Judging


def _judge_for(request: Request, judge_id: int) -> Judge:
    judge = Judge.objects.select_related("collection", "account").filter(pk=judge_id).first()
    if judge is None or caller_role(request, judge.collection) is None:
        raise NotFound(f"No judge {judge_id} that you can see.")
    collection_for(request, judge.collection.slug, need=Role.TRAINER)
    return judge


def _judging_for(request: Request, judging_id: int) -> Judging:
    judging = Judging.objects.select_related("judge__collection").filter(pk=judging_id).first()
    if judging is None or caller_role(request, judging.judge.collection) is None:
        raise NotFound(f"No judging {judging_id} that you can see.")
    collection_for(request, judging.judge.collection.slug, need=Role.TRAINER)
    return judging
