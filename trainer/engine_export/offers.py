"""What of a stored export is offered (never below the engine alone, nothing of a version that learned
nothing) and rendering one of its formats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankers.export.render import render
from rankers.models import RankerVersion
from trainer.engine_export.fit import ExportNotOffered, version_export
from trainer.export_cost import export_cost


@dataclass(frozen=True)
class Offer:
    """Whether a model or a format of the export is offered, and if not, why (plain words)."""

    offered: bool
    why: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"offered": self.offered, "why": self.why}


# The first stages' orders, and the untrained fusion, in words (trainer.learner's candidate names).
UNTRAINED_ORDERS = {
    "engine": "the engine's own order",
    "bm25": "BM25's own order",
    "fusion": "the untrained fusion (its first stage's score with semantic similarity, fixed weights)",
}
MODEL_NAMES = {"linear": "linear model", "trees": "tree model"}
FIGURE_OF = {"linear": "ndcg_export_app", "trees": "ndcg_trees_app"}


def learned_nothing(version: RankerVersion) -> str:
    """Why the version learned nothing from its ratings, or "" (it learned, or was not trained here):
    its training kept an untrained order (the first stage's, or the untrained fusion), or every candidate
    that learns from ratings scored exactly the first stage's cross-validated NDCG@k (what positive-only
    labels give: no answer is known to be bad, so no order of them is better)."""
    details = version.details if isinstance(version.details, dict) else {}
    rows = details.get("candidates")
    first = details.get("first_stage")
    if not isinstance(rows, list) or not rows or first not in UNTRAINED_ORDERS:
        return ""
    first_cv = next((r.get("cv_ndcg") for r in rows if r.get("name") == first), None)
    trained = [r for r in rows if r.get("trained")]
    chosen = next((r.get("name") for r in rows if r.get("chosen")), None)
    own = UNTRAINED_ORDERS[first]
    if first_cv is not None and trained and all(r.get("cv_ndcg") == first_cv for r in trained):
        k = version.ranker.collection.ndcg_k
        return (
            f"Version {version.label} learned nothing: every candidate that learns from ratings scored "
            f"exactly the cross-validated NDCG@{k} of {own} ({first_cv:.4f}), as when every rated answer "
            f"is relevant and none is known to be bad. It ranks in {own}; there is no model to export."
        )
    if chosen in UNTRAINED_ORDERS:
        return (
            f"Version {version.label} learned nothing: its training kept {UNTRAINED_ORDERS[chosen]}, which "
            "needs no ratings; there is no learned model to export."
        )
    return ""


def export_offers(*, model: dict[str, Any], version: RankerVersion) -> dict[str, Offer]:
    """Whether the export's linear and tree models are offered: not for a version that learned nothing,
    nor when the model, as the app ranks it, scores below the engine alone on the test questions (the
    figures the version page shows). A figure not measured (no test question with labels) does not
    refuse."""
    nothing = learned_nothing(version)
    figures = model.get("figures") or {}
    engine = figures.get("ndcg_engine")
    out: dict[str, Offer] = {}
    for name, figure_name in FIGURE_OF.items():
        score = figures.get(figure_name)
        if nothing:
            out[name] = Offer(False, nothing)
        elif name == "trees" and not model.get("trees"):
            out[name] = Offer(False, "The export has no tree model.")
        elif name == "trees" and not any("feature" in tree for tree in model["trees"]["trees"]):
            out[name] = Offer(
                False,
                "The exported tree model learned nothing: its trees are single leaves (every answer it "
                "could learn from had the same stars), so it ranks in the engine's own order.",
            )
        elif score is not None and engine is not None and score < engine:
            out[name] = Offer(
                False,
                f"The exported {MODEL_NAMES[name]} scores {score:.4f} NDCG@{figures.get('k', 10)} on rated "
                f"answers on the {figures.get('test_questions', 0)} test questions, below the engine alone "
                f"({engine:.4f}): it would rank worse than the engine does, so it is not offered.",
            )
        else:
            out[name] = Offer(True)
    return out


def format_offers(*, model: dict[str, Any], version: RankerVersion) -> dict[str, Offer]:
    """Each format of the export, offered or not: a plugin-free rescore / rerank is the linear model; an
    LTR format uploads the linear model (and the tree model when that is offered), so it is offered
    when the linear model is."""
    linear = export_offers(model=model, version=version)["linear"]
    return {fmt: linear for fmt in model.get("formats", [])}


def version_export_render(*, version: RankerVersion, fmt: str) -> dict[str, Any]:
    """The version's export model in format ``fmt``, with ``models``: whether each of its models is
    offered and why not. ExportMissing when it has none, ExportNotOffered when the format is not offered
    (``export_offers``), ValueError for a format that is unknown or of another engine."""
    model = version_export(version=version)
    offers = export_offers(model=model, version=version)
    if fmt in model.get("formats", []) and not offers["linear"].offered:
        raise ExportNotOffered(offers["linear"].why)
    if not offers["trees"].offered:
        model = {**model, "trees": None}
    body = render(model, fmt)
    # The cost as the version page shows it (``trainer.export_cost``): none when its sign cannot be trusted.
    shown = export_cost(body["figures"])
    body["figures"] = {
        **body["figures"],
        "cost": shown.cost,
        "cost_status": shown.status,
        "cost_text": shown.text,
    }
    carried = ("linear", "trees") if fmt.endswith("-ltr") else ("linear",)
    body["models"] = {name: offers[name].as_json() for name in carried}
    if "trees" in carried and not offers["trees"].offered:
        body["notes"] = [*body["notes"], f"No tree model: {offers['trees'].why}"]
    return body
