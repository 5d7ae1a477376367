"""The figures of :mod:`evaluation.numbers` as template filters, so pages write them as the Python code
does: ``{% load numbers %}``, then ``{{ run.ndcg_mean|figure }}`` ("0.412", "–" when there is none) or
``{{ difference|signed }}`` ("+0.041", "−0.012")."""

from django import template

from evaluation.numbers import figure, signed

register = template.Library()
register.filter("figure", figure)
register.filter("signed", signed)
