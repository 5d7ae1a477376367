"""Where the builtin ranker stops being the right tool for a collection, from issue 37's figures.

On 2 cores, answer embeddings take 8.4–19 ms an answer on one core: about 0.5–1 h at 200,000 answers,
hours at a million; and rating, training and evaluating against the builtin ranker slow down with it. From
about 100,000–200,000 answers an engine ranker (OpenSearch or Solr finds the candidates; a trained
version reranks its top 50) serves a collection better. ``BUILTIN_ANSWERS_LIMIT`` is the middle of that
range; the README's *At scale* section and the collection's page say so at this size.
"""

from __future__ import annotations

BUILTIN_ANSWERS_LIMIT = 150_000


def builtin_outgrown(*, answers: int) -> bool:
    """Whether a collection of ``answers`` answers is better served by an engine ranker than the builtin."""
    return answers >= BUILTIN_ANSWERS_LIMIT
