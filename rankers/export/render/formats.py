"""The formats and rendering the export model (``rankers.export.model``) in one of them."""

from __future__ import annotations

from typing import Any

from rankers.export.render.ltr import render_opensearch_ltr, render_solr_ltr
from rankers.export.render.plain import render_opensearch_rescore, render_solr_rerank

FORMATS = {
    "opensearch-rescore": "opensearch",
    "opensearch-ltr": "opensearch",
    "solr-rerank": "solr",
    "solr-ltr": "solr",
}


def formats_for(engine: str) -> list[str]:
    """The formats of an export model fitted on ``engine`` (``opensearch`` or ``solr``)."""
    return [name for name, family in FORMATS.items() if family == engine]


RENDERERS = {
    "opensearch-rescore": render_opensearch_rescore,
    "opensearch-ltr": render_opensearch_ltr,
    "solr-rerank": render_solr_rerank,
    "solr-ltr": render_solr_ltr,
}


def render(model: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The export model in format ``fmt``; ValueError for an unknown format or one of another engine."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt[:40]!r}.")
    if FORMATS[fmt] != model["engine"]:
        raise ValueError(
            f"this export model was fitted on {model['engine']}'s features; its formats are "
            f"{', '.join(formats_for(model['engine']))}, not {fmt!r}."
        )
    return RENDERERS[fmt](model)
