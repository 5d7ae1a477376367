"""Choosing runs to compare by clicking points of the dashboard's history chart (Chromium, Playwright)."""

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from corpus.models import Role
from evaluation.models import EvaluationRun
from evaluation.services import evaluation_start
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import run_inline
from tests.evaluation.test_browser_dashboard import chromium, log_in  # noqa: F401 - the browser fixture
from tests.evaluation.test_runs_compare import RUNS

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_clicking_chart_points_chooses_runs_and_opens_the_comparison(
    chromium,  # noqa: F811 - the fixture imported above
    live_server,
    make_user,
    small,
    fake_ranker_server,
):
    server = fake_ranker_server(rankings=RUNS[0])
    ranker = http_ranker(small, server.url, name="Service")
    ranker.is_default = True
    ranker.save()
    runs = []
    for rankings in RUNS:
        server.rankings = rankings
        runs.append(run_inline(evaluation_start(ranker=ranker, trigger="ui")))
    # A day apart, so the chart's points stand apart.
    for days, run in zip((2, 1, 0), runs, strict=True):
        EvaluationRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days))
    make_user("tina", collection=small, role=Role.TRAINER)

    page = log_in(chromium, live_server, "tina")
    page.goto(f"{live_server.url}/evaluation/c/tiny/")
    page.wait_for_selector("#history-chart canvas")
    page.locator("#history-chart").scroll_into_view_if_needed()
    for index in (0, 2):  # the oldest and the newest point
        x, y = page.evaluate(
            """(i) => {
                const chart = document.getElementById("history-chart");
                const plot = chart.historyPlot;
                const box = plot.over.getBoundingClientRect();
                return [box.left + plot.valToPos(plot.data[0][i], "x"), box.top + plot.valToPos(plot.data[1][i], "y")];
            }""",
            index,
        )
        page.mouse.move(x, y)
        page.mouse.click(x, y)

    checked = page.eval_on_selector_all(
        "#history-select input[name=run]:checked", "boxes => boxes.map(b => b.value)"
    )
    assert sorted(checked) == sorted([str(runs[0].pk), str(runs[2].pk)])
    assert page.inner_text("#history-select-count") == "2 runs chosen."

    page.click("#history-select button[type=submit]")
    page.wait_for_selector("[data-testid=compare-many]")
    assert "1 → 2" in page.inner_text("[data-testid=pairs]")
