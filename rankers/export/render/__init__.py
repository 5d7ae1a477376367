"""The export model (``rankers.export.model``) as the files and API calls that put it into the engine.

Each format renders to ``{"format", "engine", "name", "window", "summary", "features", "weights",
"requests": [{"step", "method", "url", "body"?}], "search": {"linear": request, "trees"?: request},
"notes": [...], "left_out": [...], "figures": {...}}``: ``requests`` are applied in order (none for the
plugin-free formats); ``search`` holds the search request that ranks with each model afterwards
(``{"method", "url", "body" | "params" | "form"}``). Every search
request is a template in the engine ranker's own language (``rankers.engine_config``): ``{{question}}``
where the question goes (structurally: a JSON string value or one parameter), ``{{rows}}`` for how many
answers, so it can be pasted as an engine ranker's request here, which is how the tests run it.

The package, a file a subject:

* :mod:`.formats` – the formats, and rendering the export model in one of them (``render``).
* :mod:`.parts` – what every format holds: its header and the ranker's own search request, the model in it.
* :mod:`.plain` – the plugin-free formats: ``opensearch-rescore`` and ``solr-rerank``.
* :mod:`.ltr` – the Learning to Rank plugins' formats: ``opensearch-ltr`` and ``solr-ltr``.
* :mod:`.vectors` – the question's vector in a rendered search, and the notes on where it goes.
"""

from rankers.export.render.formats import FORMATS, RENDERERS, formats_for, render
from rankers.export.render.ltr import (
    KEYWORDS,
    LTR_VECTOR_MARK,
    SOLR_LTR_QUERY,
    render_opensearch_ltr,
    render_solr_ltr,
)
from rankers.export.render.plain import (
    opensearch_rescore_body,
    render_opensearch_rescore,
    render_solr_rerank,
    solr_rerank_params,
)
from rankers.export.render.vectors import fill_question_vector, uses_vector

__all__ = [
    "FORMATS",
    "KEYWORDS",
    "LTR_VECTOR_MARK",
    "RENDERERS",
    "SOLR_LTR_QUERY",
    "fill_question_vector",
    "formats_for",
    "opensearch_rescore_body",
    "render",
    "render_opensearch_ltr",
    "render_opensearch_rescore",
    "render_solr_ltr",
    "render_solr_rerank",
    "solr_rerank_params",
    "uses_vector",
]
