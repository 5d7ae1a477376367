"""The version page's online test block (issue 36 §2): the latest test of the version against the champion
(interleaved queries, queries with clicks, wins/losses/ties, online Δ with its interval, the verdict), its
earlier tests folded under it (the same figures and how each ended), and the trainer's start and stop
forms.

Plain forms that post and come back to the version page (303), so the page works without JavaScript;
with htmx the forms and the Refresh link swap the block only (``trainer/online_test.html``). htmx swaps
only 2xx answers, so an input error is shown in the block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from corpus.models import Collection
from corpus.permissions import page_collection
from evaluation.numbers import count, interval, p_text, signed
from evaluation.online.verdict import BETTER, KEEP_GOING, WORSE
from evaluation.selectors.online import (
    OnlineTestResult,
    latest_online_test,
    online_test_result,
    version_online_tests,
)
from rankers.models import OnlineTest, OnlineTestState, Ranker, RankerVersion
from rankers.online_tests import (
    SERVED_BY_ENGINE,
    SERVED_BY_RANKER_SERVER,
    online_test_start,
    online_test_stop,
    running_online_test,
)

TEMPLATE = "trainer/online_test.html"


class OnlineTestForm(forms.Form):
    share = forms.IntegerField(
        min_value=0, max_value=100, initial=100, label="Share of live queries interleaved (%)"
    )
    max_queries = forms.IntegerField(
        min_value=1, required=False, label="Stop after this many interleaved queries (empty: no budget)"
    )
    stop_on_verdict = forms.BooleanField(required=False, initial=True, label="Stop once there is a verdict")
    serving = forms.ChoiceField(
        choices=[
            (SERVED_BY_RANKER_SERVER, "ranker_server serves both versions (interleaved)"),
            (SERVED_BY_ENGINE, "The model is exported into the engine"),
        ],
        initial=SERVED_BY_RANKER_SERVER,
        widget=forms.RadioSelect,
        label="Served by",
    )


@dataclass(frozen=True)
class OnlineTestPanel:
    """The figures of a test as the page writes them."""

    test: OnlineTest
    impressions: str
    queries_with_clicks: str
    wins: str
    losses: str
    ties: str
    delta: str
    interval: str
    p: str
    sentence: str
    verdict_class: str
    stop_due: str
    running: bool
    has_clicks: bool  # without a clicked query there is no Δ to show, only what to do next

    @property
    def ran(self) -> str:
        """When it ran: "2026-11-29 06:18–07:40", the day once when it stopped the day it started."""
        start = timezone.localtime(self.test.started_at)
        if self.test.stopped_at is None:
            return f"{start:%Y-%m-%d %H:%M}–now"
        stop = timezone.localtime(self.test.stopped_at)
        if stop.date() == start.date():
            return f"{start:%Y-%m-%d %H:%M}–{stop:%H:%M}"
        return f"{start:%Y-%m-%d %H:%M} – {stop:%Y-%m-%d %H:%M}"

    @property
    def ended(self) -> str:
        """How the test ended, in words ("" while it runs)."""
        return "" if self.running else (self.test.stop_reason or "Stopped.")

    @classmethod
    def of(cls, result: OnlineTestResult) -> OnlineTestPanel:
        c, v = result.counts, result.verdict
        verdict_class = "better" if v.verdict == BETTER else "worse" if v.verdict == WORSE else "noise"
        running = result.test.state == OnlineTestState.RUNNING
        sentence = result.sentence
        if not running and v.verdict == KEEP_GOING:
            # A stopped test cannot keep going: say it ended undecided (and how far it was from a verdict).
            more = (
                f", about {v.more_queries:,} more queries were needed" if v.more_queries is not None else ""
            )
            sentence = f"stopped before a verdict{more}"
        return cls(
            test=result.test,
            impressions=count(c.impressions),
            queries_with_clicks=count(c.queries_with_clicks),
            wins=count(c.wins),
            losses=count(c.losses),
            ties=count(c.ties),
            delta=signed(v.delta),
            interval=interval(v.low, v.high),
            p=p_text(v.p_value),
            sentence=sentence,
            verdict_class=verdict_class,
            stop_due=result.stop_due,
            running=running,
            has_clicks=c.queries_with_clicks > 0,
        )


def online_context(
    collection: Collection, ranker: Ranker, version: RankerVersion, form: OnlineTestForm | None = None
) -> dict[str, Any]:
    """What the block needs: the version's latest test (figures), its earlier ones (each with its
    figures, latest first), whether another test runs in the collection, and the start form."""
    tests = version_online_tests(version=version)
    panels = [OnlineTestPanel.of(online_test_result(test=test)) for test in tests]
    running = running_online_test(collection=collection)
    return {
        "collection": collection,
        "ranker": ranker,
        "version": version,
        "online": panels[0] if panels else None,
        "online_earlier": panels[1:],
        "online_other": running if running is not None and running.challenger_id != version.pk else None,
        "online_form": form or OnlineTestForm(),
        "online_startable": version.pk != ranker.champion_id and ranker.champion_id is not None,
    }


def _target(request: HttpRequest, slug: str, ranker_id: int, version_id: int):
    collection = page_collection(
        user=request.user,
        slug=slug,
        manage=True,
        refusal="Only trainers of this collection run online tests.",
    )[0]
    ranker = get_object_or_404(Ranker.objects.select_related("champion"), pk=ranker_id, collection=collection)
    version = get_object_or_404(RankerVersion, pk=version_id, ranker=ranker)
    return collection, ranker, version


def _answer(
    request: HttpRequest,
    collection: Collection,
    ranker: Ranker,
    version: RankerVersion,
    form: OnlineTestForm | None = None,
) -> HttpResponse:
    if getattr(request, "htmx", False):
        return render(request, TEMPLATE, online_context(collection, ranker, version, form))
    response = HttpResponseRedirect(
        reverse("ranker-version", args=[collection.slug, ranker.pk, version.pk]) + "#online-heading"
    )
    response.status_code = 303
    return response


@login_required
@require_GET
def version_online_test(request: HttpRequest, slug: str, ranker_id: int, version_id: int) -> HttpResponse:
    """The block alone (htmx's Refresh), or the version page at the block."""
    collection, ranker, version = _target(request, slug, ranker_id, version_id)
    return _answer(request, collection, ranker, version)


@login_required
@require_POST
def version_online_test_start(
    request: HttpRequest, slug: str, ranker_id: int, version_id: int
) -> HttpResponse:
    collection, ranker, version = _target(request, slug, ranker_id, version_id)
    form = OnlineTestForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            online_test_start(
                challenger=version,
                started_by=cast(Any, request.user),
                share=data["share"],
                max_queries=data["max_queries"],
                stop_on_verdict=data["stop_on_verdict"],
                serving=data["serving"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
    if getattr(request, "htmx", False):
        return render(
            request, TEMPLATE, online_context(collection, ranker, version, None if form.is_valid() else form)
        )
    if form.is_valid():
        messages.success(request, f"Online test of {version.label} against {ranker.champion.label} started.")
    else:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
    return _answer(request, collection, ranker, version)


@login_required
@require_POST
def version_online_test_stop(
    request: HttpRequest, slug: str, ranker_id: int, version_id: int
) -> HttpResponse:
    collection, ranker, version = _target(request, slug, ranker_id, version_id)
    test = latest_online_test(version=version)
    try:
        if test is None:
            raise ValidationError({"state": f"{version.label} has no online test."})
        online_test_stop(test=test, stopped_by=cast(Any, request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if not getattr(request, "htmx", False):
            messages.success(request, f"Online test of {version.label} stopped.")
    return _answer(request, collection, ranker, version)
