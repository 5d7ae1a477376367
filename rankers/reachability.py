"""Whether a ranker's service (a search engine, an http ranker) answers now, asked the quick way: one
question, one attempt, at most ``PROBE_SECONDS`` per step (connect, read), no retries. For the pages: the
engine form checks a URL when it is saved, and the Rankers page says "the engine is not answering" before
it offers to train (a training asks the engine thousands of times, and would fail after its retries).

The answer is cached for ``PROBE_CACHE_SECONDS`` per ranker and config, so the Rankers page stays fast and
a changed URL is asked again at once.
"""

from __future__ import annotations

import hashlib
import json

from django.core.cache import cache
from django.core.exceptions import ValidationError

from rankers.base import RankerError, RankerUnavailable, RankQuery
from rankers.config import validate_ranker_config
from rankers.engine import EngineBackend
from rankers.http import HttpBackend
from rankers.models import Ranker, RankerKind

PROBE_SECONDS = 1.0
PROBE_CACHE_SECONDS = 30
# Any words do: the question only has to reach the engine and come back.
PROBE_QUESTION = "test"


def _cache_key(ranker: Ranker) -> str:
    digest = hashlib.sha256(json.dumps(ranker.config, sort_keys=True, default=str).encode()).hexdigest()
    return f"rankers:answers:{ranker.pk}:{digest[:24]}"


def _probe(ranker: Ranker) -> str:
    try:
        config = dict(validate_ranker_config(kind=ranker.kind, config=ranker.config))
    except ValidationError:
        return ""  # the settings page says what is wrong with the config itself
    config.update(timeout=min(float(config["timeout"]), PROBE_SECONDS), retries=0)
    backend: HttpBackend = (
        EngineBackend(config=config) if ranker.kind == RankerKind.ENGINE else HttpBackend(config=config)
    )
    try:
        backend.rank(RankQuery(external_id="probe", text=PROBE_QUESTION), 1)
    except RankerUnavailable as exc:
        # "engine at <url> cannot be reached: the connection was refused (...) (1 attempt)" -> from "cannot".
        detail = str(exc).removesuffix(" (1 attempt)")
        for where in (f"engine at {backend.url} ", f"ranker at {backend.url} "):
            detail = detail.removeprefix(where)
        return f"it {detail}"
    except RankerError:
        return ""  # it answered; Try it shows what is wrong with the answer
    finally:
        backend.close()
    return ""


def service_silence(*, ranker: Ranker, fresh: bool = False) -> str:
    """Why the ranker's service is not answering now, in words ("it cannot be reached: the connection
    was refused (nothing is listening at that address and port)"), or "" when it answers or the ranker
    is builtin. Cached briefly (``fresh``: ask again, as after saving its settings)."""
    if ranker.kind not in (RankerKind.ENGINE, RankerKind.HTTP):
        return ""
    key = _cache_key(ranker)
    if not fresh:
        cached = cache.get(key)
        if cached is not None:
            return cached
    silence = _probe(ranker)
    cache.set(key, silence, PROBE_CACHE_SECONDS)
    return silence
