"""The rating page pools two rankings: still 10 answers at a time, shuffled, and the help says why."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from corpus.models import Answer, Question, Role, Split
from corpus.services import collection_create, membership_set
from rankers.backends import RankQuery, get_backend
from rankers.builtin import clear_ranker_caches
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.services import version_promote
from raters.next_task.pool import interleaved
from raters.next_task.task import shuffled
from tests.browser.conftest import log_in
from tests.raters.conftest import table_refreshed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pooled(transactional_db, settings, tmp_path, django_user_model):
    """30 answers on wings; the champion ranks BM25's candidates in reverse, so its top 10 and BM25's
    top 10 share nothing and the pool holds 20."""
    settings.MODEL_DIR = tmp_path / "models"
    clear_ranker_caches()
    collection = collection_create(name="Pooled", slug="pooled")
    collection.overlap_fraction = 0.0
    collection.save(update_fields=["overlap_fraction"])
    for n in range(30):
        Answer.objects.create(
            collection=collection, external_id=f"a{n:02d}", title=f"Wing note {n}", body="wing " * (1 + n % 7)
        )
    question = Question.objects.create(
        collection=collection, external_id="q1", text="How does a wing behave?", split=Split.TRAIN
    )
    ranker = Ranker.objects.create(collection=collection, name="Built-in", kind=RankerKind.BUILTIN)
    bm25 = RankerVersion.objects.create(ranker=ranker, label="bm25", method="bm25")
    champion = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="learned-fusion",
        uses_model=True,
        details={"params": {"signals": ["bm25", "rm3"], "weights": [-1.0, 0.0]}},
    )
    version_promote(version=champion, changed_by=None, reason="test")
    user = django_user_model.objects.create_user(username="pia", password="pw-pia-12345")
    membership_set(collection=collection, user=user, role=Role.RATER)
    query = RankQuery("q1", question.text)
    rankings = [get_backend(ranker, v).rank(query, 10).ids for v in (champion, bm25)]
    table_refreshed(collection)  # the pool as the table's job builds it (no request builds it)
    yield collection, question, user, rankings
    clear_ranker_caches()


def test_rating_page_shows_ten_pooled_answers_shuffled_with_help(page, live_server, pooled):
    collection, question, user, (champion_top, bm25_top) = pooled
    assert not set(champion_top) & set(bm25_top)
    ids = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
    first_page = [ids[a] for a in interleaved([champion_top, bm25_top], 10)[:10]]

    log_in(page, live_server, username="pia", password="pw-pia-12345")
    page.goto(f"{live_server.url}/c/{collection.slug}/rate/")
    cards = page.locator(".answer-card")
    expect(cards).to_have_count(10)

    shown = [int(cards.nth(i).get_attribute("data-answer")) for i in range(10)]
    # Five from each ranking, in the rater's stable shuffle, not in either ranking's order.
    assert sorted(shown) == sorted(first_page)
    assert shown == shuffled(first_page, rater_id=user.pk, question_id=question.pk)
    assert len(set(shown) & {ids[a] for a in champion_top}) == 5
    page.locator("#help summary").click()
    expect(page.locator("#queue-help")).to_contain_text(
        "The answers come from several rankers taken in turns"
    )
