"""The compare page with 2 to 6 runs (run=…): matrix, pairs with Holm; errors; the dashboard's run choice."""

import re

import pytest
from django.urls import reverse

from evaluation.models import RunStatus
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import evaluate_inline
from tests.evaluation.test_runs_compare import RUNS

pytestmark = pytest.mark.django_db

URL = reverse("evaluation:compare", args=["tiny"])


@pytest.fixture
def three_runs(small, fake_ranker_server):
    server = fake_ranker_server(rankings=RUNS[0])
    ranker = http_ranker(small, server.url)
    ranker.is_default = True
    ranker.save()
    runs = []
    for rankings in RUNS:
        server.rankings = rankings
        runs.append(evaluate_inline(ranker))
    assert {r.status for r in runs} == {RunStatus.SUCCEEDED}
    return runs


def chosen(html: str) -> dict[str, str]:
    """Each select of the compare chooser and the value it shows (selected), "" for none."""
    return {
        select_id: "".join(re.findall(r'<option value="([^"]*)" selected>', body))
        for select_id, body in re.findall(r'<select id="([^"]+)"[^>]*>(.*?)</select>', html, re.S)
    }


def query(runs) -> str:
    return URL + "?" + "&".join(f"run={r.pk}" for r in runs)


def test_compare_many_shows_runs_pairs_and_matrix(client, trainer, three_runs):
    client.force_login(trainer)

    response = client.get(query(three_runs))

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="compare-many"' in html
    many = response.context["many"]
    assert [r.pk for r in many.runs] == [r.pk for r in three_runs]
    assert "1 → 2" in html and "1 → 3" in html and "2 → 3" in html
    assert "p (Holm) = " in html
    assert "<strong>1.000</strong>" in html  # the best run of a question in bold
    assert "0.607" in html  # q1 of run 2, three decimals
    # The one chooser shows the runs compared: A, B and the first of the more runs, the rest empty.
    assert chosen(html) == {
        "compare-a": str(three_runs[0].pk),
        "compare-b": str(three_runs[1].pk),
        "compare-more-1": str(three_runs[2].pk),
        "compare-more-2": "",
        "compare-more-3": "",
        "compare-more-4": "",
    }


def test_compare_many_one_run_is_400(client, trainer, three_runs):
    client.force_login(trainer)

    response = client.get(query(three_runs[:1]))

    assert response.status_code == 400
    assert "Choose 2 to 6 runs to compare; you chose 1." in response.content.decode()


def test_compare_many_too_many_runs_names_the_range(client, trainer, three_runs, small, fake_ranker_server):
    server = fake_ranker_server(rankings=RUNS[1])
    ranker = http_ranker(small, server.url, name="Other")
    more = [evaluate_inline(ranker) for _ in range(4)]
    client.force_login(trainer)

    response = client.get(query([*three_runs, *more]))

    assert response.status_code == 400
    assert "Choose 2 to 6 runs to compare; you chose 7." in response.content.decode()


def test_compare_many_run_of_another_collection_or_repeated_is_400(client, trainer, three_runs):
    client.force_login(trainer)

    unknown = client.get(query(three_runs[:1]) + "&run=abc")
    repeated = client.get(query([three_runs[0], three_runs[0]]))

    assert unknown.status_code == repeated.status_code == 400
    assert "Choose evaluation runs of this collection, each once." in repeated.content.decode()


def test_compare_many_refused_to_raters_and_outsiders(client, rater, outsider, three_runs):
    client.force_login(rater)
    assert client.get(query(three_runs)).status_code == 403
    client.force_login(outsider)
    assert client.get(query(three_runs)).status_code == 404


def test_compare_two_runs_with_a_and_b_still_works(client, trainer, three_runs):
    client.force_login(trainer)

    response = client.get(URL + f"?a={three_runs[0].pk}&b={three_runs[1].pk}")

    assert response.status_code == 200
    assert "many" not in response.context
    assert response.context["winner_count"] == 2 and response.context["loser_count"] == 1


def test_dashboard_lets_trainers_choose_runs_to_compare(client, trainer, rater, three_runs):
    client.force_login(trainer)
    html = client.get(reverse("evaluation:dashboard", args=["tiny"])).content.decode()

    assert 'data-testid="history-select"' in html
    assert f'action="{URL}"' in html
    for run in three_runs:
        assert f'name="run" value="{run.pk}"' in html
    assert "js/history_select.js" in html

    client.force_login(rater)
    assert (
        'data-testid="history-select"'
        not in client.get(reverse("evaluation:dashboard", args=["tiny"])).content.decode()
    )


def test_compare_pickers_name_each_run_by_its_number(client, trainer, three_runs):
    # The three runs were made within the same minute: only the number tells them apart.
    client.force_login(trainer)

    labels = [label for _, label in client.get(URL).context["options"].runs]

    assert [label.split(" · ")[0] for label in labels] == [f"Run {r.pk}" for r in reversed(three_runs)]
    assert len(set(labels)) == 3
