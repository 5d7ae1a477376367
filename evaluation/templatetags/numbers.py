"""The figures of :mod:`evaluation.numbers` as template filters, so pages write them as the Python code
does: ``{% load numbers %}``, then ``{{ run.ndcg_mean|figure }}`` ("0.412", "–" when there is none) or
``{{ difference|signed }}`` ("+0.041", "−0.012"); and the measures' names of :mod:`evaluation.measures`:
``{% measure "ndcg_rated" collection.ndcg_k %}`` ("NDCG@10 on rated answers") and ``{% measure_why ... %}``
(the sentence that says how it differs from the headline)."""

from django import template

from evaluation import measures
from evaluation.numbers import figure, percent, signed

register = template.Library()
register.filter("figure", figure)
register.filter("signed", signed)
register.filter("percent", percent)


@register.simple_tag
def measure(key: str, k: int = 10) -> str:
    return measures.name(key, k)


@register.simple_tag
def measure_why(key: str, k: int = 10) -> str:
    return measures.why(key, k)
