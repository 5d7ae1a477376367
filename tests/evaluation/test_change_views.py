"""The change line on the dashboard, the run page and the compare page: the same figures, from one function.

Figures of the conftest ``change_case`` (hand-computed in test_change_explained.py): A = 0.631, B = 1.000,
label effect +0.114, ranker effect +0.255 (v1 → v2, two questions: within noise).
"""

import re

import pytest
from django.urls import reverse

from evaluation.metrics.stats import compare_runs
from tests.evaluation.conftest import rate
from tests.evaluation.helpers import evaluate_inline
from tests.evaluation.test_change_explained import A_T2_TODAY

pytestmark = pytest.mark.django_db

P = f"{compare_runs([1.0, 1.0], [1.0, A_T2_TODAY], seed=0).p_value:.3f}"
LINES = [
    "+0.114: new ratings changed what we know (ranker unchanged)",
    f"+0.255: version v1 → version v2; NDCG@10 on rated answers +0.070 (within noise, p = {P})",
]


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def change_block(response) -> str:
    """The change line: the element the shared template change.html renders (tags stripped)."""
    found = re.search(r'<div class="change [a-z]+" data-testid="change">(.*?)</div>', text(response))
    assert found, "no change line"
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def dashboard_url() -> str:
    return reverse("evaluation:dashboard", args=["tiny"])


def compare_url(a, b) -> str:
    return reverse("evaluation:compare", args=["tiny"]) + f"?a={a.pk}&b={b.pk}"


def test_dashboard_change_line_shows_label_and_ranker_effect(client, trainer, change_case):
    client.force_login(trainer)
    response = client.get(dashboard_url())
    block = change_block(response)
    assert block.startswith("+0.369 since the previous run (0.631 → 1.000):")
    for line in LINES:
        assert line in block
    assert "between" not in block
    body = text(response)
    assert 'data-testid="label-effect">' + LINES[0] + "</li>" in body
    assert (
        'data-testid="ranker-effect">+0.255: version v1 → version v2; NDCG@10 on rated answers +0.070 '
        f'(<strong class="verdict">within noise</strong>, p = {P})</li>'
    ) in body
    assert 'data-testid="other-effect"' not in body
    assert "Its 95% confidence interval is +0.000 to +0.140" in body
    assert compare_url(change_case.run_a, change_case.run_b).replace("&", "&amp;") in body


def test_dashboard_and_compare_page_show_the_same_figures(client, trainer, change_case):
    client.force_login(trainer)
    dashboard = client.get(dashboard_url())
    compare = client.get(compare_url(change_case.run_a, change_case.run_b))
    assert compare.status_code == 200
    on_dashboard = change_block(dashboard).replace("since the previous run", "")
    on_compare = change_block(compare).replace("from A to B", "")
    assert on_dashboard == on_compare
    for line in LINES:
        assert line in on_compare
    assert "+0.369" in on_compare


def test_compare_page_questions_use_todays_labels(client, trainer, change_case):
    client.force_login(trainer)
    response = client.get(compare_url(change_case.run_a, change_case.run_b))
    # t1: 1/L -> 1 (+0.369); t2: A's ranking with today's labels 0.860 -> 1 (+0.140).
    assert [(d.external_id, d.delta_text) for d in response.context["winners"]] == [
        ("t1", "+0.369"),
        ("t2", "+0.140"),
    ]
    assert response.context["losers"] == []
    body = text(response)
    assert '<td class="num">0.631</td><td class="num">1.000 (+0.369)</td>' in body
    assert '<td class="num">0.745</td><td class="num">1.000</td>' in body
    assert "2 questions improved, 0 got worse, 0 stayed the same" in body


def test_run_page_shows_the_same_change_as_dashboard(client, trainer, change_case):
    client.force_login(trainer)
    run_page = client.get(reverse("evaluation:run", args=[change_case.run_b.pk]))
    assert change_block(run_page).replace("since the previous run", "") == change_block(
        client.get(dashboard_url())
    ).replace("since the previous run", "")


def test_dashboard_first_run_shows_no_change_line(client, trainer, change_case):
    change_case.run_b.delete()
    change_case.run_a.delete()
    run = evaluate_inline(change_case.ranker)
    client.force_login(trainer)
    response = client.get(dashboard_url())
    body = text(response)
    assert response.context["change"] is None
    assert 'data-testid="change"' not in body
    assert "This is the ranker's first successful evaluation" in body
    run_page = client.get(reverse("evaluation:run", args=[run.pk]))
    assert run_page.context["change"] is None
    assert 'data-testid="change"' not in text(run_page)


def test_dashboard_rater_sees_the_move_alone_without_its_split_test_or_compare_link(
    client, rater, change_case
):
    client.force_login(rater)
    body = text(client.get(dashboard_url()))
    assert (
        '<p class="change" data-testid="change"><span class="delta" data-testid="change-total">+0.369</span> '
        "since the previous evaluation.</p>"
    ) in body
    for line in LINES:
        assert line not in body
    assert "p = " not in body and "randomization" not in body
    assert reverse("evaluation:compare", args=["tiny"]) not in body


def test_dashboard_change_line_after_new_rating_shows_other_part(client, trainer, change_case):
    rate(change_case.collection, "t1", "x3", 3)
    client.force_login(trainer)
    dashboard = client.get(dashboard_url())
    compare = client.get(compare_url(change_case.run_a, change_case.run_b))
    assert 'data-testid="other-effect">+0.193: ratings made after the newer run</li>' in text(dashboard)
    assert change_block(dashboard).replace("since the previous run", "") == change_block(compare).replace(
        "from A to B", ""
    )


def test_compare_page_warns_when_metric_settings_differ(client, trainer, change_case):
    change_case.collection.ndcg_k = 1
    change_case.collection.save()
    run_c = evaluate_inline(change_case.ranker)
    client.force_login(trainer)
    body = text(client.get(compare_url(change_case.run_a, run_c)))
    assert "The runs were scored with different metric settings (k, gain or discount)" in body
    assert (
        'data-testid="label-effect">−0.381: new ratings changed what we know (ranker unchanged)</li>' in body
    )
    assert "different metric settings" not in text(
        client.get(compare_url(change_case.run_a, change_case.run_b))
    )
