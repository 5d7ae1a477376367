"""The dashboard's Run evaluation button: disabled, with the run's progress, while that ranker is evaluated."""

import pytest
from django.urls import reverse

from evaluation.models import RunStatus
from tests.evaluation.test_view_run_progress import make_run, today_at
from tests.evaluation.test_views import login, text

pytestmark = pytest.mark.django_db

DISABLED = (
    '<button type="submit" class="primary" disabled aria-describedby="run-busy">Run evaluation</button>'
)
ENABLED = '<button type="submit" class="primary">Run evaluation</button>'


def dashboard(client, trainer) -> str:
    return text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"])))


def test_dashboard_run_button_disabled_while_run_is_running(client, trainer, builtin_ranker):
    make_run(builtin_ranker, status=RunStatus.RUNNING, started_at=today_at(13, 2), total=57, done=20)
    body = dashboard(client, trainer)
    assert DISABLED in body
    assert ENABLED not in body
    assert "A run of BM25 is under way; the button comes back when it ends." in body
    assert '<span data-testid="progress-count">20 of 57</span>' in body


def test_dashboard_run_button_disabled_while_run_is_pending(client, trainer, builtin_ranker):
    make_run(builtin_ranker, status=RunStatus.PENDING)
    assert DISABLED in dashboard(client, trainer)


def test_dashboard_run_button_enabled_when_runs_are_finished(client, trainer, builtin_ranker):
    make_run(builtin_ranker, status=RunStatus.FAILED)
    body = dashboard(client, trainer)
    assert ENABLED in body
    assert "under way" not in body


def test_run_start_htmx_returns_disabled_button_and_polling_progress(client, trainer, builtin_ranker):
    url = reverse("evaluation:run-start", args=["tiny", builtin_ranker.pk])
    body = text(login(client, trainer).post(url, HTTP_HX_REQUEST="true"))
    assert body.lstrip().startswith('<div id="run-control">')
    assert DISABLED in body
    assert "waiting for a worker" in body
