"""A constructed case where the deciding pair is obvious (shared by the queue, API and dashboard tests).

On the tiny corpus (``tests.ratings.conftest.build_corpus``), champion v3 ranks the test question q2
[d3, d4, d5] and challenger v4 [d6, d3, d4] (both from their evaluation runs); d3 (3 stars) and d4
(0 stars) are rated by someone else. d6, unrated and at rank 1 in the challenger only, decides the
comparison; d5 (rank 3, champion only) comes next.
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.models import Role
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.services import rating_record
from tests.ratings.conftest import Corpus, build_corpus, make_run


@dataclass
class Scenario:
    corpus: Corpus
    ranker: Ranker
    v3: RankerVersion
    v4: RankerVersion


def two_versions(collection, make_user, corpus: Corpus | None = None) -> Scenario:
    corpus = corpus or build_corpus(collection)
    ranker = Ranker.objects.create(
        collection=corpus.collection,
        name="service",
        kind=RankerKind.HTTP,
        config={"url": "http://127.0.0.1:9/"},
        is_default=True,
    )
    v3 = RankerVersion.objects.create(ranker=ranker, label="v3")
    v4 = RankerVersion.objects.create(ranker=ranker, label="v4")
    ranker.champion = v3
    ranker.save(update_fields=["champion"])
    q2 = corpus.q["q2"]
    for version, ranked in ((v3, ["d3", "d4", "d5"]), (v4, ["d6", "d3", "d4"])):
        run = make_run(ranker, {q2: (ranked, None)})
        run.ranker_version = version
        run.save(update_fields=["ranker_version"])
    someone = make_user("sam", collection=corpus.collection, role=Role.RATER)
    rating_record(rater=someone, question=q2, answer=corpus.a["d3"], stars=3)
    rating_record(rater=someone, question=q2, answer=corpus.a["d4"], stars=0)
    return Scenario(corpus, ranker, v3, v4)
