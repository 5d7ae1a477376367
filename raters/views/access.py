"""Who may open a rating page, and what a refused request gets.

Every collection page goes through ``collection_view``: anonymous users are sent to log in (htmx requests
get a 401 JSON error, since a redirect would be swapped into the card), non-members get 404 (we do not
reveal which collections exist), and pages for trainers give raters 403. The per-answer endpoints go
through ``pair_view``, the same rules in one query.

Errors are JSON ``{"error": ..., "field": ...}`` for htmx requests (the card shows the message) and a page
otherwise; nothing is stored when a request is refused. A failed CSRF check gets the same (``csrf_failure``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django_htmx.middleware import HtmxDetails

from corpus.models import Answer, Collection, Question
from corpus.permissions import collection_access, collection_and_access
from ratings.selectors import rating_target


class RatingRequest(HttpRequest):
    """What the views may rely on: a logged-in user (checked first), django-htmx's details, the role."""

    user: User
    htmx: HtmxDetails
    collection_role: str


class Refusal(Exception):
    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


def _wants_json(request: RatingRequest) -> bool:
    return request.headers.get("HX-Request") == "true" or "application/json" in request.headers.get(
        "Accept", ""
    )


def _refusal_response(request: RatingRequest, refusal: Refusal) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"error": refusal.message, "field": refusal.field}, status=refusal.status)
    return render(
        request,
        "raters/error.html",
        {"status": refusal.status, "message": refusal.message, "back": request.headers.get("Referer", "")},
        status=refusal.status,
    )


def collection_view(*, manage: bool = False) -> Callable:
    """Resolve ``slug`` to a collection the user may rate in (or manage), else refuse."""

    def decorator(view: Callable) -> Callable:
        @functools.wraps(view)
        def wrapped(request: RatingRequest, slug: str, **kwargs: object) -> HttpResponse:
            if not request.user.is_authenticated:
                if _wants_json(request):
                    return JsonResponse(
                        {"error": "You are logged out. Log in again to keep rating.", "field": None},
                        status=401,
                    )
                return redirect_to_login(request.get_full_path())
            try:
                collection, access = collection_and_access(user=request.user, slug=slug)
                if collection is None or access.role is None:
                    raise Refusal(404, f"There is no collection “{slug}” that you are a member of.")
                if manage and not access.may_manage:
                    raise Refusal(403, "Only the collection's trainers can see this page.")
                request.collection_role = access.role
                return view(request, collection, **kwargs)
            except Refusal as refusal:
                return _refusal_response(request, refusal)

        return wrapped

    return decorator


def pair_view(view: Callable) -> Callable:
    """``collection_view`` for the per-answer endpoints (the hot path: one request per star clicked).

    One query (``rating_target``) finds the answer with its collection, checks the question is in the same
    collection and reads the user's membership, which ``collection_access`` takes as read: the same rules,
    so the per-answer endpoints admit exactly whom every other collection page admits. Refusals take the
    general path so that they say exactly what ``collection_view`` would (no collection you are a member
    of, unknown question/answer).
    """

    @functools.wraps(view)
    def wrapped(request: RatingRequest, slug: str, question_id: int, answer_id: int) -> HttpResponse:
        if not request.user.is_authenticated:
            return collection_view()(view)(request, slug, question_id=question_id, answer_id=answer_id)
        target = rating_target(
            slug=slug, question_id=question_id, answer_id=answer_id, user_id=request.user.pk
        )
        role = None
        if target is not None:
            role = collection_access(
                user=request.user, collection=target.collection, member_role=target.member_role
            ).role
        if target is None or not target.question_here or role is None:
            return collection_view()(_refuse_pair)(
                request, slug, question_id=question_id, answer_id=answer_id
            )
        request.collection_role = role
        try:
            return view(request, target.collection, target.question, target.answer)
        except Refusal as refusal:
            return _refusal_response(request, refusal)

    return wrapped


def _refuse_pair(
    request: RatingRequest, collection: Collection, question_id: int, answer_id: int
) -> HttpResponse:
    question_in(collection, question_id)
    answer_in(collection, answer_id)
    raise Refusal(404, "Not found.")  # unreachable: pair_view only comes here when one of them is missing


def question_in(collection: Collection, question_id: int) -> Question:
    question = Question.objects.filter(collection=collection, pk=question_id).first()
    if question is None:
        raise Refusal(
            404, f"Question {question_id} is not in the collection “{collection.slug}”.", "question"
        )
    return question


def answer_in(collection: Collection, answer_id: int) -> Answer:
    answer = Answer.objects.filter(collection=collection, pk=answer_id).first()
    if answer is None:
        raise Refusal(404, f"Answer {answer_id} is not in the collection “{collection.slug}”.", "answer")
    return answer


def csrf_failure(request: RatingRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a clear 403 (JSON for htmx requests); nothing was stored."""
    message = "This page's security token is missing or out of date, so nothing was saved. Reload the page and try again."
    if _wants_json(request):
        return JsonResponse({"error": message, "field": "csrfmiddlewaretoken"}, status=403)
    return render(request, "raters/error.html", {"status": 403, "message": message, "back": ""}, status=403)
