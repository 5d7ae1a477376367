"""Backends of rankers: whatever orders a collection's answers for a question.

``get_backend(ranker, version)`` is the one way to get something to call ``rank(query, k)`` on:

- ``builtin``: BM25 over the collection's answers, reranked by the version's LambdaMART model when it
  has one (``builtin.py``, ``features.py``, ``fitting.py``; training is ``trainer.learner``);
- ``http``: any service speaking the protocol in ``http.py`` (``manage.py ranker_server`` serves it);
- ``engine``: a search engine called directly, by a request template and a response mapping (``engine.py``).

A version of an ``http`` or ``engine`` ranker that was trained here reranks the service's top
``candidates`` answers (``reranking.RerankingBackend``); any other version ranks as the service does.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from rankers.base import RankerBackend, RankerError, RankerUnavailable, Ranking, RankQuery
from rankers.builtin import BuiltinBackend
from rankers.config import validate_ranker_config
from rankers.engine import EngineBackend
from rankers.engine_config import rerank_settings
from rankers.http import HttpBackend
from rankers.index import known_answer_ids, load_index
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.reranking import RerankingBackend, reranks
from rankers.selectors import ranking_version

__all__ = ["RankQuery", "Ranking", "RankerBackend", "RankerError", "RankerUnavailable", "get_backend"]


def get_backend(ranker: Ranker, version: RankerVersion | None = None) -> RankerBackend:
    """A backend ranking as ``version`` of ``ranker`` does.

    ``version`` None means the ranker's champion (else its latest version); a builtin ranker without versions is plain BM25.
    Raises RankerError for a config that cannot be used (e.g. an http ranker without a url) or a version
    of another ranker.
    """
    if version is not None and version.ranker_id != ranker.pk:
        raise RankerError(f"version {version.label!r} belongs to another ranker than {ranker.name!r}")
    try:
        config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
    except ValidationError as exc:  # a config written around the services (admin, shell)
        raise RankerError(f"ranker {ranker.name!r} has an unusable config: {exc}") from exc
    if version is None:
        version = ranking_version(ranker=ranker)
    if ranker.kind == RankerKind.BUILTIN:
        return BuiltinBackend(collection=ranker.collection, version=version, candidates=config["candidates"])
    if ranker.kind not in (RankerKind.HTTP, RankerKind.ENGINE):
        raise RankerError(f"ranker {ranker.name!r} has unknown kind {ranker.kind!r}")
    first = service_backend(ranker, config)
    if not reranks(version):
        return first
    assert version is not None
    return RerankingBackend(
        first=first,
        index=load_index(collection=ranker.collection),
        version=version,
        depth=rerank_settings(config)[0],
    )


def service_backend(ranker: Ranker, config: dict | None = None) -> HttpBackend:
    """The http or engine ranker's service as it is: what its trained versions rerank."""
    if config is None:
        config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
    known = known_answer_ids(collection_id=ranker.collection_id)
    if ranker.kind == RankerKind.ENGINE:
        return EngineBackend(config=config, known_ids=known)
    return HttpBackend(config=config, known_ids=known)
