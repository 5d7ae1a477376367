"""The rerank settings of an engine (or http) ranker's config, ``candidates`` and ``budget_ms``: checked, and
filled in with the defaults."""

from __future__ import annotations

from typing import Any

# Reranking an engine's (or http ranker's) answers: how many of its top answers a trained version
# reranks, the same at training and ranking (a model learned on one depth ranks another badly), and how
# long ranker_server may spend reranking before it answers the engine's own order instead.
RERANK_DEFAULTS = {"candidates": 50, "budget_ms": 50}


def check_rerank_settings(config: dict[str, Any], errors: dict[str, str], cleaned: dict[str, Any]) -> None:
    """Check ``candidates`` (10–1000) and ``budget_ms`` (1–10000) when given and copy them to ``cleaned``;
    left out, ``rerank_settings`` supplies the defaults."""
    if "candidates" in config:
        candidates = config["candidates"]
        if isinstance(candidates, bool) or not isinstance(candidates, int) or not 10 <= candidates <= 1000:
            errors["candidates"] = "candidates must be a whole number from 10 to 1000."
        else:
            cleaned["candidates"] = candidates
    if "budget_ms" in config:
        budget = config["budget_ms"]
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= 10_000:
            errors["budget_ms"] = "budget_ms must be a whole number of milliseconds from 1 to 10000."
        else:
            cleaned["budget_ms"] = budget


def rerank_settings(config: dict[str, Any]) -> tuple[int, int]:
    """(candidates, budget_ms) of an engine or http ranker's config, defaults filled in."""
    return (
        int(config.get("candidates", RERANK_DEFAULTS["candidates"])),
        int(config.get("budget_ms", RERANK_DEFAULTS["budget_ms"])),
    )
