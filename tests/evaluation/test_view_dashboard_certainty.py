"""The "How sure are we?" page (htmx loads it into the dashboard): exact headline bounds, P(challenger
better), the link that rates what decides."""

from __future__ import annotations

import html
import math
import re

import pytest
from django.urls import reverse

from corpus.models import Role
from rankers.models import RankerVersion
from tests.evaluation.decide_scenario import two_versions
from tests.evaluation.test_views import login, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(collection, make_user):
    return two_versions(collection, make_user)


def test_dashboard_certainty_headline_bounds_by_hand(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)

    page = text(login(client, trainer).get(reverse("evaluation:certainty", args=["tiny"])))

    # Champion v3 on q2: d3 (3 stars) at rank 1, d4 (0) at 2, d5 unrated at 3. d5 at 0 stars: NDCG 1;
    # at 3 stars: (3 + 3/2) / (3 + 3/log2 3) = 0.920, the lowest (1 star: 0.964, 2 stars: 0.939).
    low = 4.5 / (3 + 3 / math.log2(3))
    assert f'data-testid="headline-bounds">{low:.3f}–1.000<' in page
    assert "1 unrated answer in their top 10" in page
    assert re.search(r'data-testid="probability-better">\d{1,3}%<', page)
    assert "Probability that version v4 scores a higher NDCG@10 than version v3" in page
    assert re.search(r'data-testid="comparison-settle">About \d+ more ratings? would settle this.<', page)
    assert 'data-testid="verdict">Within noise, settled<' in page
    assert "for each of 200 ways the unrated answers could turn out" in page
    link = f"/c/tiny/rate/?mode=decide&amp;champion={scenario.v3.pk}&amp;challenger={scenario.v4.pk}"
    assert f'data-testid="rate-deciding" href="{link}"' in page


def test_dashboard_certainty_says_it_in_plain_words_first_and_folds_the_figures(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)
    url = reverse("evaluation:certainty", args=["tiny"])

    partial = text(login(client, trainer).get(url, HTTP_HX_REQUEST="true"))
    page = text(client.get(url))

    plain = html.unescape(re.search(r'data-testid="certainty-plain">([^<]*)</p>', partial).group(1))
    assert plain == (
        "Version v3's score may still change as answers get rated. About 1 more rating would settle this. "
        "Version v4 and version v3 score about the same (the difference could be chance), "
        "and more ratings would not change that."
    )
    # The figures and the tests behind them come after the plain words, inside a disclosure: folded on the
    # dashboard, open on the page of their own.
    folded = '<details class="certainty-figures"> <summary>The figures behind this, and how they are worked out</summary>'
    assert (
        partial.index("certainty-plain") < partial.index(folded) < partial.index("paired randomization test")
    )
    assert partial.index(folded) < partial.index("Probability that version v4")
    assert '<details class="certainty-figures" open>' in page


def test_dashboard_certainty_picked_versions_compare_those(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)
    url = reverse("evaluation:certainty", args=["tiny"])

    page = text(login(client, trainer).get(url, {"champion": scenario.v4.pk, "challenger": scenario.v3.pk}))

    assert "Probability that version v3 scores a higher NDCG@10 than version v4" in page


def test_dashboard_certainty_rater_sees_it_and_the_link_rates_the_deciding_answers(
    client, scenario, make_user
):
    rater = make_user("rhea", collection=scenario.corpus.collection, role=Role.RATER)
    login(client, rater)
    page = text(client.get(reverse("evaluation:certainty", args=["tiny"]), HTTP_HX_REQUEST="true"))
    assert "<html" not in page  # htmx gets the section alone
    link = re.search(r'data-testid="rate-deciding" href="([^"]+)"', page).group(1).replace("&amp;", "&")

    response = client.get(link, follow=True)

    q2 = scenario.corpus.q["q2"]
    assert response.redirect_chain[-1][0] == reverse("rate-question", args=["tiny", q2.pk])
    body = text(response)
    assert "Chosen because these answers decide whether version v4 is better than version v3" in body
    shown = set(re.findall(r'name="stars-(\d+)"', body))
    assert shown == {str(scenario.corpus.a["d6"].pk), str(scenario.corpus.a["d5"].pk)}


def test_dashboard_loads_certainty_with_htmx_and_links_to_it_without(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)

    page = text(login(client, trainer).get(reverse("evaluation:dashboard", args=["tiny"])))

    url = reverse("evaluation:certainty", args=["tiny"])
    assert f'hx-get="{url}" hx-trigger="load"' in page
    assert f'<a href="{url}">How sure are we of the headline, and is the challenger better?</a>' in page


def test_certainty_page_of_another_collection_is_404(client, scenario, outsider):
    assert login(client, outsider).get(reverse("evaluation:certainty", args=["tiny"])).status_code == 404


def test_certainty_page_without_a_ranker_says_so(client, collection, trainer):
    page = text(login(client, trainer).get(reverse("evaluation:certainty", args=["tiny"])))

    assert "Nothing to say yet" in page


def test_dashboard_certainty_without_rankings_says_why_not_zero(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)
    # v5 has no run, and its ranker (nothing listens on port 9) cannot rank now.
    v5 = RankerVersion.objects.create(ranker=scenario.ranker, label="v5")

    page = text(
        login(client, trainer).get(reverse("evaluation:certainty", args=["tiny"]), {"challenger": v5.pk})
    )

    assert 'data-testid="certainty-unavailable">No figures now: service could not rank the test' in page
    assert "headline-bounds" not in page


def test_certainty_page_says_its_title_once(client, scenario, make_user):
    trainer = make_user("tina", collection=scenario.corpus.collection, role=Role.TRAINER)

    page = text(login(client, trainer).get(reverse("evaluation:certainty", args=["tiny"])))
    partial = text(
        login(client, trainer).get(reverse("evaluation:certainty", args=["tiny"]), HTTP_HX_REQUEST="true")
    )

    assert '<h1 id="page-heading">How sure are we? ' in page
    assert "How sure are we?</h2>" not in page
    assert "<h2>How sure are we of the headline?</h2>" in page
    # Inside the dashboard the card keeps its own heading, one level down.
    assert '<h2 id="certainty-heading">How sure are we?</h2>' in partial
    assert "<h3>How sure are we of the headline?</h3>" in partial
