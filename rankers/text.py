"""Turning text into index terms, the same way for answers and questions.

Lower-case, split on anything that is not a letter or digit, drop English stop words (bm25s's list),
then Snowball English stemming (PyStemmer), so "flows" and "flow" meet. Nothing is downloaded: the
stop words ship with bm25s and the stemmer is compiled into PyStemmer.

Changing any step changes every index term, so ``TOKENIZER_VERSION`` is part of each index's
fingerprint: bump it and indexes are rebuilt.
"""

from __future__ import annotations

import re
import threading

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

TOKENIZER_VERSION = "1"

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset(STOPWORDS_EN)
# A PyStemmer object is not safe to share between threads (it keeps a cache); one per thread is.
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def tokenize(text: str) -> list[str]:
    """Index terms of ``text`` in order (repeats kept: BM25 counts them, bigram features need order)."""
    words = [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]
    return _stemmer().stemWords(words) if words else []
