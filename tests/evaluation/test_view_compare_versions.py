"""The compare page's one chooser with versions: any two versions of a ranker (champion or not) are
compared through their latest runs; a version without one is offered an evaluation, or a comparison now
(``versions_compare``, nothing stored); the selects always show what is compared."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluation.models import EvaluationRun, RunStatus
from evaluation.numbers import signed
from evaluation.services import versions_compare
from rankers.models import RankerVersion
from tests.evaluation.helpers import evaluate_inline
from tests.evaluation.test_view_compare_many import chosen

pytestmark = pytest.mark.django_db

URL = reverse("evaluation:compare", args=["tiny"])


@pytest.fixture
def versions(builtin_ranker):
    """v1, the champion, evaluated; v2, never promoted, evaluated; v3, never evaluated."""
    v1, v2, v3 = (
        RankerVersion.objects.create(ranker=builtin_ranker, label=label, method="bm25")
        for label in ("v1", "v2", "v3")
    )
    builtin_ranker.champion = v1
    builtin_ranker.save()
    first = evaluate_inline(builtin_ranker)
    second = evaluate_inline(builtin_ranker, ranker_version=v2)
    assert (first.ranker_version, second.ranker_version) == (v1, v2)
    assert first.status == second.status == RunStatus.SUCCEEDED
    return v1, v2, v3, first, second


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def _testid(html: str, name: str) -> str:
    return _text(re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>(.*?)</\1>', html, re.S).group(2))


def test_compare_two_versions_uses_their_latest_runs_without_promoting(client, trainer, versions):
    v1, v2, _, first, second = versions
    client.force_login(trainer)

    response = client.get(URL + f"?a=v{v1.pk}&b=v{v2.pk}")

    assert response.status_code == 200
    assert (response.context["run_a"], response.context["run_b"]) == (first, second)
    html = response.content.decode()
    assert chosen(html)["compare-a"] == f"v{v1.pk}" and chosen(html)["compare-b"] == f"v{v2.pk}"
    assert _testid(html, "side-a") == (
        f"BM25 v1 (its latest run, run {first.pk}, {first.created_at:%Y-%m-%d %H:%M})"
    )
    assert _testid(html, "side-b").startswith(f"BM25 v2 (its latest run, run {second.pk},")
    v1.ranker.refresh_from_db()
    assert v1.ranker.champion == v1  # nothing promoted


def test_compare_version_without_a_run_offers_an_evaluation_and_a_comparison_now(client, trainer, versions):
    v1, _, v3, _, _ = versions
    client.force_login(trainer)

    html = client.get(URL + f"?a=v{v1.pk}&b=v{v3.pk}").content.decode()

    assert _testid(html, "compare-missing").startswith("Not evaluated yet BM25 v3 has no evaluation run yet.")
    start = reverse("evaluation:run-start", args=["tiny", v3.ranker_id])
    assert f'action="{start}"' in html and f'name="version" value="{v3.pk}"' in html
    assert 'data-testid="compare-now"' in html
    assert 'data-testid="compare-pair"' not in html  # no table of runs that are not the ones chosen

    now = client.get(URL + f"?a=v{v1.pk}&b=v{v3.pk}&now=1")

    expected = versions_compare(challenger=v3, champion=v1)
    assert now.context["now"].comparison == expected
    assert _testid(now.content.decode(), "now-difference") == signed(expected.difference)
    assert chosen(now.content.decode())["compare-b"] == f"v{v3.pk}"
    assert EvaluationRun.objects.filter(ranker_version=v3).count() == 0  # nothing stored


def test_run_start_evaluates_the_chosen_version_and_returns_to_the_compare_page(client, trainer, versions):
    v1, _, v3, _, _ = versions
    client.force_login(trainer)
    back = URL + f"?a=v{v1.pk}&b=v{v3.pk}"
    start = reverse("evaluation:run-start", args=["tiny", v3.ranker_id])

    response = client.post(start, {"version": v3.pk, "next": back})

    assert (response.status_code, response["Location"]) == (303, back)
    run = EvaluationRun.objects.get(ranker_version=v3)
    assert run.status == RunStatus.PENDING
    html = client.get(back).content.decode()
    assert f"an evaluation of it is under way (run {run.pk})" in _text(html)
    # A "next" elsewhere goes to the dashboard instead.
    elsewhere = client.post(start, {"version": v1.pk, "next": "//example.com/x"})
    assert elsewhere["Location"] == reverse("evaluation:dashboard", args=["tiny"]) + f"?ranker={v1.ranker_id}"


def test_run_start_version_of_another_ranker_is_404(client, trainer, versions, builtin_ranker):
    v1, *_ = versions
    other = type(builtin_ranker).objects.create(
        collection=builtin_ranker.collection, name="Other", kind="builtin"
    )
    client.force_login(trainer)

    response = client.post(reverse("evaluation:run-start", args=["tiny", other.pk]), {"version": v1.pk})

    assert response.status_code == 404


def test_compare_the_same_run_twice_is_400_and_says_so(client, trainer, versions):
    v1, _, _, first, _ = versions
    client.force_login(trainer)

    response = client.get(URL + f"?a={first.pk}&b=v{v1.pk}")

    assert response.status_code == 400
    assert _testid(response.content.decode(), "compare-error") == (
        f"A and B are the same run (run {first.pk}): choose two different ones."
    )


def test_compare_options_list_versions_marked_then_runs(client, trainer, versions):
    v1, v2, v3, first, second = versions
    client.force_login(trainer)

    options = client.get(URL).context["options"]

    assert options.versions == [
        (f"v{v3.pk}", "BM25 v3 (not evaluated yet)"),
        (f"v{v2.pk}", "BM25 v2"),
        (f"v{v1.pk}", "BM25 v1 (champion)"),
    ]
    assert [value for value, _ in options.runs] == [str(second.pk), str(first.pk)]
    assert chosen(client.get(URL).content.decode())["compare-a"] == ""  # nothing preset: nothing compared
