"""One thing, one number, one name (issue 34 §1): the same version, questions and labels show the same
NDCG@10 on every page and in the API, and a figure of another measure always carries its own name.

The scenario is the product's own loop on a small collection: a real training (v2, promoted by the gate),
real evaluations of v1 and v2 (the services a worker calls), then every place that shows a figure of v2
is read: the dashboard's headline, the runs table, the Rankers page (champion and versions table), the
version page, the training's message, the compare page and the API (the run, the version). The answers
each question does not judge stay unrated, so the headline (an unrated answer counts as 0 stars) and the
comparisons' NDCG@10 on rated answers differ here: a page that showed one under the other's name fails.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from corpus.formats.records import JudgmentRecord
from corpus.models import Role, Split
from corpus.services import collection_create, membership_set
from evaluation.measures import NDCG_RATED, name
from evaluation.numbers import figure
from rankers.services import ranker_create
from tests.evaluation.helpers import evaluate_inline
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (model_dir)
from tests.rankers.rankers_support import learnable_records
from trainer.models import Training
from trainer.services import collection_import, training_run

pytestmark = pytest.mark.views

RATED = name(NDCG_RATED, 10)  # "NDCG@10 on rated answers"
FIGURE = r"[01]\.\d{3}"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _testid(html: str, testid: str) -> str:
    match = re.search(rf'<(\w+)[^>]*data-testid="{testid}"[^>]*>(.*?)</\1>', html, re.S)
    assert match, f"no element with data-testid={testid!r}"
    return _text(match.group(2))


def _bare_figures(text: str) -> list[str]:
    """Every figure written right after the bare headline name "NDCG@10" (not "NDCG@10 on rated answers",
    "estimated NDCG@10", "cross-validated NDCG@10 ...")."""
    return re.findall(rf"(?<![A-Za-z] )NDCG@10(?! on rated)[ :]+({FIGURE})", text)


@pytest.fixture
def loop(db, model_dir, trainer):
    collection = collection_create(name="Loop", slug="loop")
    answers, questions, judgments = learnable_records(40)
    # A second good answer (2 stars) on each test question, below unrated answers in the rankings: the
    # headline counts those unrated answers as 0 stars, NDCG@10 on rated answers leaves them out.
    judgments += [
        JudgmentRecord(q.external_id, f"d{q.external_id[1:]}-1", 2)
        for q in questions
        if q.split == Split.TEST
    ]
    collection_import(collection=collection, answers=answers, questions=questions, judgments=judgments)
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
    v1 = ranker.champion
    old = evaluate_inline(ranker, ranker_version=v1)
    training = training_run(training_id=Training.objects.create(ranker=ranker).pk, worker="w")
    v2 = training.version
    new = evaluate_inline(ranker, ranker_version=v2)  # the run the promotion queued, as a worker runs it
    return collection, ranker, v1, v2, training, old, new


def test_figures_agree_for_one_version_on_every_page_and_the_api(client, trainer, loop):
    collection, ranker, v1, v2, training, old, new = loop
    ranker.refresh_from_db()
    assert ranker.champion_id == v2.pk  # the gate promoted it
    headline = figure(new.ndcg_mean)
    rated = figure(v2.comparison["challenger_ndcg"])
    # The scenario must tell the two measures apart, or this test could not catch one shown as the other.
    assert headline != rated, (headline, rated)
    client.force_login(trainer)

    dashboard = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()
    assert _testid(dashboard, "headline") == headline
    assert set(_bare_figures(_text(dashboard))) <= {headline, figure(old.ndcg_mean)}

    rankers = client.get(reverse("rankers", args=[collection.slug])).content.decode()
    assert _testid(rankers, "champion-test-ndcg").startswith(f"{headline} its latest evaluation")
    assert headline in [
        _text(cell) for cell in re.findall(r'data-testid="version-test-ndcg">(.*?)</td>', rankers, re.S)
    ]
    assert set(_bare_figures(_text(rankers))) <= {headline, figure(old.ndcg_mean)}

    version_url = reverse("ranker-version", args=[collection.slug, ranker.pk, v2.pk])
    version = client.get(version_url).content.decode()
    assert _testid(version, "version-test-ndcg").startswith(f"Test NDCG@10: {headline}")
    assert _testid(version, "comparison").startswith(f"{RATED} {rated} vs ")
    assert set(_bare_figures(_text(version))) <= {headline}

    # The training's message names the comparison's measure and never writes its figure as the headline's.
    training.refresh_from_db()
    assert f"{RATED} {rated} vs " in training.decision_reason
    assert _bare_figures(training.decision_reason) == []

    run_page = client.get(reverse("evaluation:run", args=[new.pk])).content.decode()
    assert headline in _bare_figures(_text(run_page))
    assert set(_bare_figures(_text(run_page))) <= {headline}

    compare = client.get(
        reverse("evaluation:compare", args=[collection.slug]), {"run": [old.pk, new.pk]}
    ).content.decode()
    compare_text = _text(compare)
    assert f"{RATED[0].upper()}{RATED[1:]}, today" in compare_text
    assert set(_bare_figures(compare_text)) <= {headline, figure(old.ndcg_mean)}

    api_run = client.get(reverse("api-evaluation-detail", args=[new.pk])).json()
    assert figure(api_run["ndcg_mean"]) == headline
    listed = client.get(reverse("api-ranker-versions", args=[ranker.pk])).json()["results"]
    api_v2 = next(v for v in listed if v["label"] == "v2")
    assert figure(api_v2["test_ndcg"]) == headline
    assert (api_v2["comparison"]["measure"], figure(api_v2["comparison"]["challenger_ndcg"])) == (
        NDCG_RATED,
        rated,
    )
    api_training = client.get(reverse("api-training", args=[training.pk])).json()
    assert figure(api_training["version"]["test_ndcg"]) == headline


def test_figures_agree_headline_stays_the_champions_after_a_challenger_is_evaluated(client, trainer, loop):
    collection, ranker, v1, v2, training, old, new = loop
    later = evaluate_inline(
        ranker, ranker_version=v1
    )  # v1 is no longer the champion: a point, not the headline
    assert later.created_at > new.created_at and figure(later.ndcg_mean) != figure(new.ndcg_mean)
    client.force_login(trainer)

    dashboard = client.get(reverse("evaluation:dashboard", args=[collection.slug])).content.decode()

    assert _testid(dashboard, "headline") == figure(new.ndcg_mean)
    assert "version v2" in _text(dashboard.split('data-testid="headline"')[0])
