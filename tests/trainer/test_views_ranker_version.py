"""A version's page: what it learned from, cross-validation, features, its verdict against the champion."""

from __future__ import annotations

import html
import re

from django.urls import reverse

from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create
from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import COMPARISON, assert_authz


def _url(rankers, version) -> str:
    return reverse("ranker-version", args=[rankers.collection.slug, rankers.ranker.pk, version.pk])


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)).strip())


def _testid(body: str, name: str) -> str:
    return _text(re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>.*?</\1>', body, re.S).group(0))


def test_ranker_version_authz(client, rankers, rater, outsider, trainer):
    url = _url(rankers, rankers.v2)
    assert url == f"/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/"
    assert_authz(client, method="get", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=200)


def test_ranker_version_of_another_ranker_is_404(client, rankers, trainer, other_collection):
    from rankers.services import ranker_create

    other = ranker_create(collection=other_collection, name="Elsewhere", kind="builtin")
    client.force_login(trainer)

    url = reverse("ranker-version", args=["tiny", rankers.ranker.pk, other.champion.pk])
    assert client.get(url).status_code == 404


def test_ranker_version_shows_comparison_sentence(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _testid(body, "comparison") == (
        "NDCG@10 on rated answers 0.412 vs 0.371 (+0.041, 95% CI +0.012 to +0.070, p = 0.004): better"
    )


def test_ranker_version_small_p_and_negative_difference(client, rankers, trainer):
    rankers.v2.comparison = {
        **rankers.v2.comparison,
        "challenger_ndcg": 0.3,
        "champion_ndcg": 0.35,
        "difference": -0.05,
        "ci_low": -0.07,
        "ci_high": -0.031,
        "p_value": 0.0002,
        "verdict": "worse",
    }
    rankers.v2.save()
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _testid(body, "comparison") == (
        "NDCG@10 on rated answers 0.300 vs 0.350 (−0.050, 95% CI −0.070 to −0.031, p < 0.001): worse"
    )


def test_ranker_version_shows_counts_cv_and_duration(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert (
        _testid(body, "label-count"),
        _testid(body, "training-questions"),
        _testid(body, "test-questions"),
    ) == (
        "1,234",
        "105",
        "45",
    )
    assert _testid(body, "cv") == "model 0.512 · BM25 0.430"
    assert _testid(body, "cv-comparison") == (
        "chosen − BM25 +0.082 (95% CI +0.051 to +0.114, p < 0.001) over 98 training questions"
    )
    assert 'data-testid="model-unused"' not in body
    assert _testid(body, "duration") == "12.3 s"
    assert "LambdaMART." in _text(body)
    grid = re.search(r'<caption id="grid-caption">.*?</table>', body, re.S).group(0)
    rows = [_text(r) for r in re.findall(r"<tr.*?</tr>", grid, re.S)[1:]]
    assert rows == ["num_leaves 3, learning_rate 0.1 0.501", "num_leaves 7, learning_rate 0.05 chosen 0.512"]


def test_ranker_version_features_sorted_by_importance(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    table = re.search(r'<table class="features">.*?</table>', body, re.S).group(0)
    rows = [_text(r) for r in re.findall(r"<tr>.*?</tr>", table, re.S)[1:]]
    assert rows == [
        "title_coverage share of question terms in the title 60.0%",
        "bm25 BM25 score of title + body 25.0%",
        "doc_length answer length 15.0%",
    ]


def test_ranker_version_candidates_list_and_message_are_shown(client, rankers, trainer):
    version = RankerVersion.objects.create(
        ranker=rankers.ranker,
        label="v3",
        method="learned-fusion",
        details={
            "candidates": [
                {"name": "bm25", "cv_ndcg": 0.4301, "spread": 0.021},
                {"name": "learned-fusion", "cv_ndcg": 0.4712, "spread": 0.0185, "chosen": True},
                {"name": "untested"},
            ],
            "message": "semantic model unavailable: lexical features only",
        },
    )
    client.force_login(trainer)

    body = client.get(_url(rankers, version)).content.decode()

    table = re.search(r'<caption id="candidates-caption">.*?</table>', body, re.S).group(0)
    rows = [_text(r) for r in re.findall(r"<tr.*?</tr>", table, re.S)[1:]]
    assert rows == [
        "plain BM25 0.430 0.021",
        "learned fusion of BM25, semantic similarity, RM3 and rating propagation chosen 0.471 0.018",
        "untested –",
    ]
    assert _testid(body, "notice") == "semantic model unavailable: lexical features only"
    assert "Learned fusion of BM25, semantic similarity, RM3 and rating propagation." in _text(body)
    assert "Not compared with a champion." in body


def test_ranker_version_champion_has_no_promote_button(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v1)).content.decode()

    assert 'data-testid="promote-button"' not in body
    assert "v1 is the champion" in _text(body)
    assert (
        "Untrained fusion z(BM25) + z(semantic similarity): the best ranker that needs no ratings."
        in _text(body)
    )


def test_ranker_version_other_version_has_promote_form(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    form = re.search(r'<form method="post" action="([^"]+)">.*?</form>', body, re.S)
    assert form.group(1) == f"/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/promote/"
    assert "csrfmiddlewaretoken" in form.group(0)
    assert _testid(form.group(0), "promote-button") == "Promote v2 to champion"


def test_ranker_version_model_set_aside_is_said(client, rankers, trainer):
    rankers.v2.method, rankers.v2.uses_model = "bm25", False
    rankers.v2.save()
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _testid(body, "model-unused") == "This version does not use the model"
    assert "Plain BM25." in _text(body)


def test_ranker_version_http_version_says_it_was_trained_elsewhere(client, collection, trainer):
    from rankers.services import ranker_create

    service = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )
    version = RankerVersion.objects.create(ranker=service, label="build-7")
    client.force_login(trainer)

    body = client.get(reverse("ranker-version", args=["tiny", service.pk, version.pk])).content.decode()

    assert "trained by the ranker service and announced through the API" in body
    assert "What it learned from" not in body
    assert _testid(body, "promote-button") == "Promote build-7 to champion"


def test_ranker_version_first_version_says_its_method_once_and_no_bare_dash(client, rankers, trainer):
    client.force_login(trainer)
    baseline = rankers.ranker.versions.get(label="bm25")

    body = client.get(_url(rankers, baseline)).content.decode()

    text = _text(body)
    assert baseline.notes == "Plain BM25: the baseline, no ratings needed."
    assert text.lower().count("plain bm25") == 2  # the notes, and the cross-validation sentence
    assert "Plain BM25. Created" not in text
    assert _testid(body, "cv") == (
        "No cross-validation figures: this version was not trained here from ratings (plain BM25 and the "
        "untrained fusion need none; a model announced by a service is trained elsewhere)."
    )
    assert "from it: –" not in text


def _predicted(rankers, **predicted) -> None:
    rankers.v2.comparison = {
        **rankers.v2.comparison,
        "champion_id": rankers.v1.pk,
        "predicted": {
            "probability": 0.7351,
            "expected_difference": 0.0127,
            "verdict": "",
            "verdict_shares": [0.4, 0.6, 0.0],
            "ratings_to_settle": 35,
            **predicted,
        },
    }
    rankers.v2.save()


def _inline_text(body: str, name: str) -> str:
    """The element's text as a browser shows it: its inline tags (strong, span) add no space."""
    element = re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>.*?</\1>', body, re.S).group(0)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", element)).strip())


def _hrefs(body: str, name: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(rf'href="([^"]*)" data-testid="{name}"', body)]


def test_ranker_version_predicted_not_settled_links_certainty_and_deciding_queue(client, rankers, trainer):
    _predicted(rankers)
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _inline_text(body, "predicted") == (
        "Counting the unrated answers in either version’s top 10, their stars predicted from the ratings so far: "
        "probability that v2 is better 74% (expected difference +0.013). Verdict once every answer is rated: "
        "Not settled yet: within noise in 60%, real improvement in 40%. About 35 more ratings would settle this."
    )
    pair = f"champion={rankers.v1.pk}&challenger={rankers.v2.pk}"
    assert _hrefs(body, "certainty-link") == [f"/evaluation/c/tiny/certainty/?{pair}"]
    assert _hrefs(body, "rate-deciding") == [f"/c/tiny/rate/?mode=decide&{pair}"]


def test_ranker_version_predicted_settled_has_no_rating_link(client, rankers, trainer):
    _predicted(rankers, verdict="real improvement", verdict_shares=[0.97, 0.03, 0.0], ratings_to_settle=0)
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _testid(body, "predicted-verdict") == "Real improvement, settled"
    assert "More ratings would not change this much" in _testid(body, "predicted")
    assert _hrefs(body, "rate-deciding") == []


def test_ranker_version_predicted_of_a_ranker_not_the_default_has_no_links(client, rankers, trainer):
    _predicted(rankers)
    other = ranker_create(collection=rankers.collection, name="Other", kind="builtin")
    Ranker.objects.filter(pk=other.pk).update(is_default=True)
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert _testid(body, "predicted-probability") == "74%"
    assert (_hrefs(body, "certainty-link"), _hrefs(body, "rate-deciding")) == ([], [])


def test_ranker_version_without_predicted_figures_says_nothing_of_them(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers, rankers.v2)).content.decode()

    assert 'data-testid="predicted"' not in body


def test_ranker_version_same_model_and_not_measured_better_are_said(client, rankers, trainer):
    v3 = RankerVersion.objects.create(
        ranker=rankers.ranker,
        label="v3",
        method="fusion",
        details={
            "params": {"signals": ["bm25", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)},
            "candidates": [
                {"name": "fusion", "trained": False, "cv_ndcg": 0.5697, "chosen": True},
                {"name": "lambdamart", "trained": True, "cv_ndcg": 0.4725, "chosen": False},
            ],
        },
        comparison={**COMPARISON, "verdict": "within noise", "p_value": 0.08, "champion_id": rankers.v1.pk},
    )
    client.force_login(trainer)

    body = client.get(reverse("ranker-version", args=["tiny", rankers.ranker.pk, v3.pk])).content.decode()

    assert (
        '<p class="notice" data-testid="same-model">v3 is the same model as v1 (the untrained fusion): training '
        "kept it because no model that learns from ratings beat it in cross-validation.</p>"
    ) in body
    hint = re.search(r'data-testid="promote-unmeasured">(.*?)</p>', body, re.S).group(1)
    assert hint == (
        "v3 scored 0.412 vs the champion&#x27;s 0.371 in NDCG@10 on rated answers (+0.041): it is not measured better (within noise on 45 "
        "test questions). You will be asked to confirm before it replaces v1; the change is recorded with your "
        "name."
    )


def test_ranker_version_names_the_imports_that_made_unlisted_answers_0_stars(client, rankers, trainer):
    version = RankerVersion.objects.create(
        ranker=rankers.ranker,
        label="v3",
        method="learned-fusion",
        details={
            "complete_questions": 93,
            "unlisted_incorrect": [{"id": 4, "name": "import 4 (qrels.test)", "questions": 93}],
        },
    )
    client.force_login(trainer)

    body = client.get(_url(rankers, version)).content.decode()

    assert _testid(body, "unlisted-zero") == (
        "The training read the answers not listed for 93 training questions as 0 stars, because import 4 "
        "(qrels.test) says that answers not listed for a judged question are incorrect. Change it for the "
        "next training ."
    )
    assert 'href="/c/tiny/manage/#imports-heading">Change it for the next training</a>' in body
