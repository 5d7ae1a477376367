"""A judge's confidence in one grade (how sure it is): larger is surer; None when the judge gives no
way to tell. Stored as ``Rating.certainty``.

* **builtin**: the distance of the pair's score from the nearest of its three thresholds,
  ``min_g |score − t_g|``, in the score's own units (stars for the propagation mean, 0 … 1 for the BM25
  ratio alone): a score on a threshold is a coin toss between two grades; one far from every threshold
  would keep its grade if the thresholds moved a little.
* **openai-chat, JSON replies**: the reply's own ``"confidence"`` when it is a number from 0 to 1.
* **openai-chat, token log-probabilities** (when the judge asks for them and the service returns them,
  ``choices[0].logprobs.content``): the probability of the grade's token among the grades 0–3 at that
  position, ``exp(lp_g) ÷ Σ_{d ∈ 0…3 listed} exp(lp_d)`` over the position's ``top_logprobs`` (the
  chosen token counted even when the list leaves it out); ``exp(lp_g)`` when the position lists none.
  The grade's token is the first token that is the grade's digit (digit replies), the first after a
  token naming "grade" (JSON), or the last one (reasoning, which ends "Grade: N").

Confidences of different judges are on different scales; they are compared only within one judge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from judges.models import JudgeKind, ReplyFormat

GRADES = ("0", "1", "2", "3")


def meaning(kind: str) -> str:
    """What a confidence of this kind of judge is, in a sentence for its pages."""
    if kind == JudgeKind.BUILTIN:
        return (
            "Confidence is the distance of the pair's score from the nearest grade threshold "
            "(0: on a threshold, a toss-up between two grades)."
        )
    return (
        'Confidence is the reply\'s own "confidence" (JSON replies), else the probability of the grade among '
        "0–3 from the service's token log-probabilities (0.250: no preference; 1.000: sure)."
    )


def threshold_distance(score: float, thresholds: Sequence[float]) -> float:
    """``min_g |score − t_g|`` (module docstring)."""
    if not thresholds:
        raise ValueError("thresholds must not be empty")
    return float(min(abs(score - t) for t in thresholds))


def json_confidence(reply: str) -> float | None:
    """The JSON reply's ``"confidence"`` when it is a number from 0 to 1, else None."""
    text = (reply or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    value = payload.get("confidence") if isinstance(payload, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)


def _grade_position(tokens: list[dict], grade: int, reply_format: str) -> int | None:
    digit = str(grade)
    matches = [i for i, t in enumerate(tokens) if str(t.get("token", "")).strip() == digit]
    if not matches:
        return None
    if reply_format == ReplyFormat.REASONING:
        return matches[-1]
    if reply_format == ReplyFormat.JSON:
        named = [i for i, t in enumerate(tokens) if str(t.get("token", "")).strip(' "').lower() == "grade"]
        after = [i for i in matches if named and i > named[0]]
        return after[0] if after else matches[0]
    return matches[0]


def grade_probability(tokens: object, grade: int, reply_format: str) -> float | None:
    """The grade's probability among 0–3 from token log-probabilities (module docstring), or None
    when ``tokens`` is not a list of ``{"token", "logprob", "top_logprobs"}`` holding the grade."""
    if not isinstance(tokens, list) or not all(isinstance(t, dict) for t in tokens):
        return None
    position = _grade_position(tokens, grade, reply_format)
    if position is None:
        return None
    chosen = tokens[position].get("logprob")
    if isinstance(chosen, bool) or not isinstance(chosen, int | float) or not math.isfinite(chosen):
        return None
    top = tokens[position].get("top_logprobs")
    if not isinstance(top, list) or not top:
        return math.exp(chosen)
    alternatives = {str(grade): float(chosen)}
    for item in top:
        if not isinstance(item, dict):
            continue
        token, logprob = str(item.get("token", "")).strip(), item.get("logprob")
        if isinstance(logprob, bool) or not isinstance(logprob, int | float) or not math.isfinite(logprob):
            continue
        if token in GRADES and token not in alternatives:
            alternatives[token] = float(logprob)
    total = sum(math.exp(lp) for lp in alternatives.values())
    return math.exp(chosen) / total if total > 0 else None
