"""Who may open the dashboard's pages: anonymous users are sent to log in; non-members get 404 (we do
not reveal which collections exist); pages for trainers (and starting evaluations) give raters 403."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse

from corpus.permissions import collection_access, page_collection
from evaluation import selectors

REFUSAL = "Only the collection's trainers can see this page or start evaluations."


def collection_page(*, manage: bool = False) -> Callable:
    """Resolve ``slug`` to a collection the user may see (or manage) and pass it and the role on."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
            collection, access = page_collection(user=request.user, slug=slug, manage=manage, refusal=REFUSAL)
            return view(request, collection=collection, role=access.role, **kwargs)

        return wrapped

    return decorator


def run_page(*, manage: bool = False) -> Callable:
    """Resolve ``run_id`` to a run of a collection the user may see (or manage)."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, run_id: int, **kwargs) -> HttpResponse:
            run = selectors.run_detail(run_id=run_id)
            if run is None:
                raise Http404("No such evaluation run.")
            access = collection_access(user=request.user, collection=run.collection)
            return view(
                request, run=run, role=access.or_refuse(manage=manage, refusal=REFUSAL).role, **kwargs
            )

        return wrapped

    return decorator
