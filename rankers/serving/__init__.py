"""Serving a ranker over the HTTP ranker protocol: what ``manage.py ranker_server`` runs.

It is the reference implementation of the protocol an ``http`` ranker speaks (see
``rankers/http.py``)::

    POST /     {"question": {"id": "q-17", "text": "..."}, "rows": 10}
    200        {"answers": [{"id": "184", "score": 12.7}, ...]}
    GET /healthz

``--ranker ID`` (default: the collection's default ranker if it is builtin, else plain BM25) and
``--version ID`` (default: the ranker's champion) say what is served:

- a **builtin** ranker: BM25 over the app's copy of the answers, reranked by the version's model;
- an **engine** (or **http**) ranker: POST / calls the engine (or service) with the question, with its
  own timeout and retries, and a trained version reranks its top ``candidates`` answers (the ranker's
  config, default 50; ``rankers.reranking``). Every answer says whether it was reranked, and by which
  version::

      200  {"answers": [...], "reranked": true, "version": "v2"}
      200  {"answers": [...the engine's order...], "reranked": false, "version": "v2",
            "fallback": "reranker took longer than 50 ms"}

  ``reranked`` false with a ``fallback``: the version reranks, but this answer is the engine's own order,
  for the reason given (the rerank took longer than the ranker's ``budget_ms``, it failed, the embedding
  model can't be used, the version's model can't be loaded). ``reranked`` false without ``fallback``: the
  version served ranks as the engine does (e.g. v1, "the engine as it is"). The engine down or answering
  what can't be used: 502 {"error": "engine at ... cannot be reached ..."}.

  ``POST /rank`` is Retrieve and Rank's *rank* call: the caller searched already and sends the
  candidates, best first::

      POST /rank {"question": {"id": "q-17", "text": "..."},
                  "candidates": [{"id": "184", "score": 12.3}, {"id": "29", "score": 11.0}, ...],
                  "rows": 10}
      200        {"answers": [...], "reranked": true, "version": "v2"}

  ``candidates``: at most ``MAX_CANDIDATES`` objects with ``id`` (text or whole number, unique) and
  ``score`` (the engine's score, a finite number): on every candidate or on none. Without scores the
  candidates are scored n, n-1, ..., 1 in the order given (n candidates): the order (the ``engine_rank``
  signal) is the caller's either way, but a version that learned from the engine's scores (the
  ``engine`` signal) then sees other values than it was trained on, and the answer has a ``warning``
  saying so. As in POST /, only the first ``candidates`` are reranked; ids the collection doesn't know
  follow the reranked ones in the order given. ``rows``: 1-1000, default 10. A field that is wrong is a
  400 naming it: {"error": "\\"candidates[3].id\\" repeats \\"candidates[0].id\\" ('184')"}.

``POST /encode {"text": "..."}`` answers ``{"vector": [384 numbers]}``: the question's unit vector by the
app's embedding model (the one the reranker uses), for an exported search whose ``vector`` feature needs
it (``{{question_vector}}``, ``rankers.export``): the engine holds the answers' vectors but cannot run the
model. Any server, any ranker; 503 when the model cannot be loaded.

**The budget.** The rerank step runs in a worker thread (``RERANK_WORKERS`` of them); the request waits
for it at most ``budget_ms`` (the ranker's config, default 50) from the step's start, then answers the
engine's order (``"fallback": "reranker took longer than 50 ms"``); a rerank still queued then is
cancelled, one running finishes in the background and fills the caches (answer vectors met for the first
time are encoded and kept, on disk too), so the next question meeting those answers is fast. A rerank
that raises is a fallback too, never a 500. The ``Server-Timing`` header gives the milliseconds of the
engine call, of the rerank step and of the whole request from its body read to its answer
(``engine;dur=8.1, rerank;dur=3.2, total;dur=11.9``).

The index, the version's model and the answers' texts are loaded once at start (and the embedding model,
by a warm-up rerank), and again for a new champion when the server was not pinned with ``--version``: the
online watch loads it off the request path and swaps it in (``online.py``), and every answer's
``version`` (a builtin ranker's too) names the version that ranked it. Requests are served by a thread
each (``ThreadingHTTPServer``) and never touch the database. Every error is JSON: 400 for a request that is wrong, 404 for another path, 413 for a body
over 1 MB, 502 when the engine fails, 500 {"error": ...} for a bug.

Fault injection, for tests and benchmarks only (a real service never wants these):
``--latency-ms N`` sleeps N ms before answering; ``--fail-first N`` answers the first N rank requests
with 500; ``--garbage`` answers 200 with a body that is not JSON; ``--unknown-ids N`` puts N answer
ids the collection does not have at the top of every ranking; ``--rerank-delay-ms N`` sleeps N ms in
each rerank step; ``--rerank-fail`` makes each rerank step raise.

Files:

- ``protocol.py``: the requests (POST / and POST /rank), their limits and their checks (``ProtocolError``);
- ``service.py``: an engine or http ranker's reranking service: the engine call, the rerank within the
  budget, the fallbacks (``RerankingService``, ``reranking_service``), fault injection (``Faults``);
- ``handler.py``: the threaded HTTP server and its request handler (JSON errors, ``Server-Timing``).
"""
