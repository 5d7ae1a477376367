"""Shipping a model into the engine: fit an engine ranker's export model (``rankers.export``) on the
TRAINING labels, measure it on the TEST questions, and store it on a version.

``engine_export_fit(ranker=..., version=...)`` returns the export model (``rankers.export.model``) with:

- the linear model (weights >= 0 over the engine's own feature values: its score, per-field BM25, per-field
  phrase, and the cosine of the app's question and answer vectors when the engine could take the answers'
  vectors: ``vectors``, ``rankers.export.vectors``) fitted by coordinate ascent on the training questions' NDCG@k over their rated candidates
  among the engine's top K (K: the ranker's ``candidates``, default 50), and a LambdaMART tree model over
  the same features (the Learning to Rank formats);
- ``figures``, on the test questions with labels, NDCG@k on rated answers, the measure of every
  comparison in the app (the collection's k, gain and discount; each ranking condensed to its rated
  answers; ideal DCG from all the question's labels):
  ``ndcg_engine`` the engine alone; ``ndcg_export_app`` the linear model as the app ranks the engine's
  top K with the engine's feature values (equal scores in the engine's document order, as its rescorer
  orders them: ``rankers.export.fetch.Candidates.ranked``); ``ndcg_export_engine`` the exported
  rescore (OpenSearch / Elasticsearch) or rerank (Solr) request run by the engine itself; ``parity`` =
  |app − engine| (the issue's bar: at most ``PARITY_TOLERANCE``); ``ndcg_trees_app`` the tree model as
  the app ranks (ties the same way);
  ``ndcg_version`` the version's own ranking (``rankers.backends.get_backend(ranker, version)``: its
  reranker, or the engine as it is) and ``cost`` = ndcg_version − ndcg_export_app: what staying inside
  the engine costs (negative: the export ranks better);
- ``left_out``: the features of the version's reranker that the engine cannot compute, each with why;
- ``vectors``: ``{"field", "answers", "written", "error", "seconds"}``: the field the answers' vectors were
  written into, how many answers the engine holds hold one, how many of them this export wrote (an answer
  whose vector the engine holds already is not written again), and why none when it could not take them
  (the engine's words: no k-NN plugin, a schema that cannot change...), in which case the export has no
  ``vector`` feature.

The question's vector is the app's own (``rankers.semantic.question_vectors``), given to the engine with
each request: in the features' fetch, in the exported request the parity check runs, and in the user's
searches (the rendered request's ``{{question_vector}}``).

Training labels only teach (``labels_for_collection(split="train")``); test labels only measure.

``version_export_build(version=...)`` computes it and stores it as ``version.details["export"]``; the API
and the version page read it there (``version_export``) and render a format (``version_export_render``).

An export never scores below the engine alone (``export_offers``): a model (linear, trees) whose figure
as the app ranks it is below ``ndcg_engine`` is not offered, and neither is anything of a version that
learned nothing (``learned_nothing``: its training kept the untrained order, or every learned candidate
scored exactly the first stage's cross-validated figure). A format whose model is not offered is refused
(``ExportNotOffered``, its why); the LTR formats drop a tree model that is not offered.

The package, a subject per file: ``questions`` (the questions read, their candidates and NDCG@k on rated
answers), ``fit`` (the export model fitted, measured and stored on a version), ``offers`` (what is offered,
and rendering a format).
"""

from __future__ import annotations

from rankers.export.spec import ExportEngineDown, ExportError, ExportRefused
from trainer.engine_export.fit import (
    PARITY_TOLERANCE,
    ExportMissing,
    ExportNotOffered,
    engine_export_fit,
    version_export,
    version_export_build,
)
from trainer.engine_export.offers import (
    Offer,
    export_offers,
    format_offers,
    learned_nothing,
    version_export_render,
)

__all__ = [
    "PARITY_TOLERANCE",
    "ExportEngineDown",
    "ExportError",
    "ExportMissing",
    "ExportNotOffered",
    "ExportRefused",
    "Offer",
    "engine_export_fit",
    "export_offers",
    "format_offers",
    "learned_nothing",
    "version_export",
    "version_export_build",
    "version_export_render",
]
