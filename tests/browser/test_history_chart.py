"""The dashboard's history chart with 1 run and with 500: axis labels and point labels never overlap,
each run can be read in a tooltip by hovering or from the keyboard, the legend names the series (no "–"),
and the table stays one click away."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from corpus.models import Role
from corpus.services import collection_create, membership_set
from evaluation.models import EvaluationRun, RunStatus
from rankers.models import ChampionChange
from rankers.services import ranker_create, version_promote
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import evaluate_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def dashboard(transactional_db, django_user_model, settings, tmp_path):
    """A collection with a builtin ranker evaluated once, and a trainer; returns (ranker, run)."""
    settings.MODEL_DIR = tmp_path / "models"
    collection = load_small_collection(collection_create(name="Tiny", slug="tiny"))
    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.SUCCEEDED
    user = django_user_model.objects.create_user(username="tina", password="pw-tina-123")
    membership_set(collection=collection, user=user, role=Role.TRAINER)
    return ranker, run


def add_older_runs(run: EvaluationRun, count: int) -> None:
    """``count`` copies of ``run``'s figures, one a day before it (its history, without rerunning it)."""
    copies = []
    for day in range(count, 0, -1):
        copy = EvaluationRun.objects.get(pk=run.pk)
        copy.pk = None
        copy.ndcg_mean = 0.3 + 0.4 * (count - day) / count
        copy.label_count = 100 + count - day
        copies.append(copy)
    created = EvaluationRun.objects.bulk_create(copies)
    for day, copy in zip(range(count, 0, -1), created, strict=True):
        copy.created_at = run.created_at - timedelta(days=day)
    EvaluationRun.objects.bulk_update(created, ["created_at"])
    assert EvaluationRun.objects.filter(created_at__lt=run.created_at).count() == count


def open_dashboard(browser, live_server, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("tina")
    page.get_by_label("Password").fill("pw-tina-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/evaluation/c/tiny/")
    page.locator("#history-chart canvas").wait_for()
    return context, page


def point_labels(page) -> list[dict]:
    """The point labels the chart drew, with their boxes in canvas pixels (recorded from fillText)."""
    return page.evaluate("window.__labels")


RECORD_LABELS = """() => {
  window.__labels = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y) {
    if (!this.getTransform().isIdentity) return fill.apply(this, arguments); // the rotated y-axis title
    const w = this.measureText(text).width;
    const align = this.textAlign;
    const left = align === "center" ? x - w / 2 : align === "right" || align === "end" ? x - w : x;
    window.__labels.push({text: String(text), left: left, right: left + w, y: y, canvas: this.canvas.width});
    return fill.apply(this, arguments);
  };
}"""


def overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes overlap: baselines closer than a line (11 px text) and spans crossing."""
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            if abs(a["y"] - b["y"]) < 11 and a["left"] < b["right"] and b["left"] < a["right"]:
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize("runs", [1, 500])
@pytest.mark.parametrize("width", [1280, 390])
def test_chart_labels_never_overlap_or_leave_the_chart(browser, live_server, dashboard, runs, width):
    ranker, run = dashboard
    add_older_runs(run, runs - 1)
    context, page = open_dashboard(browser, live_server, width)
    try:
        page.evaluate(RECORD_LABELS)
        page.evaluate("window.dispatchEvent(new Event('resize'))")  # redraw with the recorder in place
        page.wait_for_function("window.__labels.length > 0")
        labels = point_labels(page)
        assert overlapping(labels) == []
        canvas_width = labels[0]["canvas"]
        assert all(label["left"] >= 0 and label["right"] <= canvas_width for label in labels)
        drawn = [label["text"] for label in labels if " labels" in label["text"]]
        latest = f"{run.ranker_version.label} · {run.label_count:,} labels"
        assert drawn[0] == latest  # the latest run is always labelled
        if runs == 500:
            assert 1 < len(drawn) < 30  # thinned: a few labels, not 500
        assert page.evaluate("document.documentElement.scrollWidth") == width
        legend = page.locator(".u-legend").inner_text()
        assert "–" not in legend and "--" not in legend
        assert "NDCG@10" in legend and "Accuracy@5" in legend
    finally:
        context.close()


def test_chart_tooltip_on_hover_and_keyboard(browser, live_server, dashboard):
    ranker, run = dashboard
    add_older_runs(run, 4)
    context, page = open_dashboard(browser, live_server, 1280)
    try:
        chart = page.locator("#history-chart")
        tooltip = page.locator(".chart-tooltip")
        expect(tooltip).to_be_hidden()

        # Keyboard: Tab reaches the chart; it shows the latest run, arrows move between runs.
        chart.focus()
        expect(tooltip).to_be_visible()
        expect(tooltip).to_contain_text(f"NDCG@10: {run.ndcg_mean:.3f}")
        expect(page.locator("#history-chart-info")).to_contain_text("(run 5 of 5)")
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#history-chart-info")).to_contain_text("(run 4 of 5)")
        expect(tooltip).to_contain_text("NDCG@10: 0.600")
        page.keyboard.press("Home")
        expect(tooltip).to_contain_text("NDCG@10: 0.300")
        expect(tooltip).to_contain_text("100 labels")
        page.keyboard.press("Escape")
        expect(tooltip).to_be_hidden()

        # Mouse: hovering a point shows its run.
        page.keyboard.press("End")
        box = page.locator("#history-chart .u-over").bounding_box()
        page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)  # the far left: the oldest run
        page.mouse.move(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
        expect(tooltip).to_be_visible()
        expect(tooltip).to_contain_text("NDCG@10: 0.300")
        # The table is still there, folded, one click away.
        page.get_by_text("History as a table").click()
        expect(page.locator(".history-table tbody tr")).to_have_count(5)
    finally:
        context.close()


RECORD_CHANGE_LINES = """() => {
  window.__changeLines = [];
  const moveTo = CanvasRenderingContext2D.prototype.moveTo;
  const stroke = CanvasRenderingContext2D.prototype.stroke;
  CanvasRenderingContext2D.prototype.moveTo = function (x, y) {
    this.__lastMove = x;
    return moveTo.apply(this, arguments);
  };
  // The champion changes' lines: dashed, in their colour, stroked from the context's own path.
  CanvasRenderingContext2D.prototype.stroke = function () {
    if (!arguments.length && this.strokeStyle === "#6b4fbb" && this.getLineDash().length)
      window.__changeLines.push({x: this.__lastMove, canvas: this.canvas.width});
    return stroke.apply(this, arguments);
  };
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_chart_draws_one_line_per_champion_change(browser, live_server, dashboard, width):
    """Three champion changes listed, three dashed lines drawn: the first champion, set when the ranker was
    made ten days before its first run (outside the runs' time range), and two promotions seconds apart
    (the same pixel on a chart of days)."""
    ranker, run = dashboard
    add_older_runs(run, 4)
    first = ChampionChange.objects.get(ranker=ranker)
    ChampionChange.objects.filter(pk=first.pk).update(created_at=run.created_at - timedelta(days=10))
    baseline = ranker.versions.get(label="bm25")
    version_promote(version=baseline, changed_by=None, reason="test: baseline back")
    version_promote(version=ranker.versions.get(label="v1"), changed_by=None, reason="test: v1 again")
    context, page = open_dashboard(browser, live_server, width)
    try:
        expect(page.locator(".champion-changes summary")).to_have_text(
            "Champion changes (3), the dashed lines on the chart"
        )
        page.evaluate(RECORD_CHANGE_LINES)
        page.evaluate("window.dispatchEvent(new Event('resize'))")  # redraw with the recorder in place
        # uPlot redraws on the next animation frame; two frames later it has.
        lines = page.evaluate(
            "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame("
            "() => done(window.__changeLines))))"
        )
        xs = [line["x"] for line in lines[-3:]]  # the last redraw's
        dpr = page.evaluate("devicePixelRatio")
        assert len(lines) % 3 == 0 and lines  # every redraw draws the three
        assert xs == sorted(xs)
        assert all(b - a >= 6 * dpr - 0.01 for a, b in zip(xs, xs[1:], strict=False))
        assert all(0 <= x <= lines[-1]["canvas"] for x in xs)
    finally:
        context.close()
