"""The version page's online test block: the figures and verdict beside the offline verdict, the start
and stop forms (plain posts coming back to the page, or htmx swapping the block), who may use them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rankers.models import OnlineTest
from rankers.online_tests import CANNOT_INTERLEAVE, online_test_start, online_test_stop
from tests.online_support import online_log, online_ranker
from tests.trainer.rankers_views_support import assert_authz

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def versions(collection):
    return online_ranker(collection)


def _url(versions, name: str = "ranker-version", version=None) -> str:
    ranker, _, challenger = versions
    return reverse(name, args=["tiny", ranker.pk, (version or challenger).pk])


def test_version_online_test_start_and_stop_authz(client, versions, rater, outsider, trainer):
    start = _url(versions, "ranker-version-online-test-start")
    assert start == f"/c/tiny/rankers/{versions[0].pk}/versions/{versions[2].pk}/online-test/start/"

    assert_authz(
        client,
        method="post",
        url=start,
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=303,
        data={"share": "100", "serving": "ranker_server", "stop_on_verdict": "on"},
    )
    assert OnlineTest.objects.get().state == "running"
    assert_authz(
        client,
        method="post",
        url=_url(versions, "ranker-version-online-test-stop"),
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=303,
    )
    assert OnlineTest.objects.get().state == "stopped"


def test_version_page_shows_the_online_test_figures_and_verdict(client, versions, trainer):
    test = online_test_start(challenger=versions[2], started_by=trainer, share=50)
    online_log(test, [1, 1, 1, -1, 0, None])
    client.force_login(trainer)

    html = client.get(_url(versions)).content.decode()

    assert 'data-testid="online-impressions">6<' in html
    assert 'data-testid="online-clicked">5<' in html
    assert 'data-testid="online-wlt">3 / 1 / 1<' in html
    assert "v2 against v1 on 50% of the live queries," in html
    verdict = html.split('data-testid="online-verdict">')[1].split("</p>")[0]
    assert (
        verdict
        == "Keep going: about 150 more queries:\n    online Δ +0.200 (95% CI −0.276 to +0.397, p = 0.985)"
    )
    assert 'data-testid="online-stop"' in html and 'data-testid="online-start"' not in html
    assert 'href="' + _url(versions, "ranker-version-online-test") + '"' in html  # Refresh works without htmx


def test_version_online_test_start_plain_post_comes_back_to_the_page(client, versions, trainer):
    client.force_login(trainer)

    response = client.post(
        _url(versions, "ranker-version-online-test-start"),
        {"share": "30", "max_queries": "", "serving": "ranker_server"},
    )

    assert (response.status_code, response["Location"]) == (303, _url(versions) + "#online-heading")
    test = OnlineTest.objects.get()
    assert (test.share, test.max_queries, test.stop_on_verdict, test.started_by) == (30, None, False, trainer)


def test_version_online_test_start_htmx_for_an_exported_model_says_it_cannot_interleave(
    client, versions, trainer
):
    client.force_login(trainer)

    response = client.post(
        _url(versions, "ranker-version-online-test-start"), {"share": "100", "serving": "engine"}, **HTMX
    )

    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith("<section")
    assert 'data-testid="online-serving-error">' + CANNOT_INTERLEAVE.replace("'", "&#x27;") in html
    assert not OnlineTest.objects.exists()


def test_version_online_test_stop_htmx_swaps_the_block(client, versions, trainer):
    online_test_start(challenger=versions[2], started_by=trainer)
    client.force_login(trainer)

    html = client.post(_url(versions, "ranker-version-online-test-stop"), **HTMX).content.decode()

    assert "stopped" in html.split('data-testid="online-state">')[1].split("</p>")[0]
    assert "Stopped by tom." in html and 'data-testid="online-start"' in html


def test_version_page_of_the_champion_offers_no_online_test(client, versions, trainer):
    client.force_login(trainer)

    html = client.get(_url(versions, version=versions[1])).content.decode()

    none = " ".join(html.split('data-testid="online-none">')[1].split("</p>")[0].split())
    assert none == (
        "v1 is the champion: an online test puts a challenger against it on live traffic, started from the "
        f"challenger's page (a version in the <a href=\"/c/tiny/rankers/#ranker-{versions[0].pk}\">rankers' list</a>)."
    )
    assert 'data-testid="online-start"' not in html


def test_version_page_online_test_without_clicks_says_what_to_do_not_an_empty_delta(
    client, versions, trainer
):
    test = online_test_start(challenger=versions[2], started_by=trainer, share=40)
    online_log(test, [None, None])
    client.force_login(trainer)

    html = client.get(_url(versions)).content.decode()

    verdict = html.split('data-testid="online-verdict">')[1].split("</p>")[0]
    assert verdict == "No verdict yet: no interleaved query has a click."
    assert "p = 1.000" not in html and "95% CI – to –" not in html
    assert "interleaves v2 into 40% of\n    its answers" in html.split('data-testid="online-next">')[1]
    assert 'data-testid="online-impressions">2<' in html


def test_version_page_online_test_stopped_without_clicks_has_no_verdict(client, versions, trainer):
    client.force_login(trainer)
    client.post(
        _url(versions, "ranker-version-online-test-start"), {"share": "100", "serving": "ranker_server"}
    )

    html = client.post(_url(versions, "ranker-version-online-test-stop"), **HTMX).content.decode()

    verdict = html.split('data-testid="online-verdict">')[1].split("</p>")[0]
    assert verdict == "No verdict: the test stopped before any interleaved query had a click."
    assert 'data-testid="online-next"' not in html


def test_version_page_stopped_online_test_without_verdict_says_so_not_keep_going(client, versions, trainer):
    test = online_test_start(challenger=versions[2], started_by=trainer, share=50)
    online_log(test, [1, 1, 1, -1, 0, None])
    online_test_stop(test=test, stopped_by=trainer)
    client.force_login(trainer)

    html = client.get(_url(versions)).content.decode()

    verdict = html.split('data-testid="online-verdict">')[1].split("</p>")[0]
    assert verdict == (
        "Stopped before a verdict, about 150 more queries were needed:\n"
        "    online Δ +0.200 (95% CI −0.276 to +0.397, p = 0.985)"
    )
    state = html.split('data-testid="online-state">')[1].split("</p>")[0]
    test.refresh_from_db()
    assert state.endswith(
        f"started {test.started_at:%Y-%m-%d %H:%M} by tom, <strong>stopped</strong> {test.stopped_at:%Y-%m-%d %H:%M}."
        " Stopped by tom."
    )


def test_rankers_page_marks_the_version_under_an_online_test(client, versions, trainer):
    ranker, champion, challenger = versions
    test = online_test_start(challenger=challenger, started_by=trainer)
    client.force_login(trainer)

    html = client.get(reverse("rankers", args=["tiny"])).content.decode()

    badge = f'<a class="badge" data-testid="online-running" href="{_url(versions)}#online-heading">online test running</a>'
    assert html.count('data-testid="online-running"') == 1 and badge in html
    online_test_stop(test=test, stopped_by=trainer)
    assert (
        'data-testid="online-running"' not in client.get(reverse("rankers", args=["tiny"])).content.decode()
    )


def test_version_page_lists_earlier_online_tests_latest_first_behind_a_disclosure(client, versions, trainer):
    first = online_test_start(challenger=versions[2], started_by=trainer, share=30)
    online_log(first, [1, -1])
    online_test_stop(test=first, stopped_by=trainer)
    second = online_test_start(challenger=versions[2], started_by=trainer, share=60)
    online_log(second, [1, 1, 0, None])
    online_test_stop(test=second, stopped_by=None, reason="Stopped by its stop rule: budget spent.")
    online_test_start(challenger=versions[2], started_by=trainer)
    client.force_login(trainer)

    html = client.get(_url(versions)).content.decode()

    assert "v2 against v1 on 100% of the live queries," in html.split('data-testid="online-state">')[1]
    history = html.split('data-testid="online-history">')[1].split("</details>")[0]
    assert "<summary>Earlier online tests of v2 (2)</summary>" in history
    rows = [row.split("</tr>")[0] for row in history.split('data-testid="online-history-row">')[1:]]
    first.refresh_from_db()
    second.refresh_from_db()
    ran = f"{second.started_at:%Y-%m-%d %H:%M}–{second.stopped_at:%H:%M}"  # the same day
    assert rows[0].startswith(f'<td class="when" data-label="Ran">{ran}</td>')
    assert 'Share">60%</td>' in rows[0] and 'queries">4</td>' in rows[0] and 'clicks">3</td>' in rows[0]
    assert "2 / 0 / 1" in rows[0] and "+0.333 (" in rows[0]
    assert "Stopped by its stop rule: budget spent.</td>" in rows[0]
    assert 'Share">30%</td>' in rows[1] and "1 / 1 / 0" in rows[1] and "+0.000 (" in rows[1]
    assert "Stopped before a verdict" in rows[1] and 'ended">Stopped by tom.</td>' in rows[1]
