"""The builtin ranker's signals for one question's BM25 candidates, the same at training and ranking time.

=============  =================================================================================
signal         meaning
=============  =================================================================================
bm25           BM25 score of the answer's title + body (what retrieval sorted by)
cosine         cosine of the question's and the answer's all-MiniLM-L6-v2 embeddings
rm3            BM25 under the question expanded by RM3 pseudo-relevance feedback from its top
               ``RM3_FEEDBACK_DOCS`` candidates (``rankers.rm3``)
propagation    stars that similar *training* questions gave this answer, weighted by question
               similarity (``rankers.propagation``); never from test questions
engine         the search engine's (or http ranker's) own score of the answer, for a ranker that
               reranks an engine's top answers (``rankers.reranking``)
engine_rank    1 / (rank in the engine's answers, from 1): its order, whatever its scores' scale
=============  =================================================================================

The app's signals (bm25, rm3, cosine, propagation) are computed on the app's copy of each answer, also
when an engine retrieved it.

``SEMANTIC`` signals need embeddings; without them (model package missing, vectors not built) only
``LEXICAL`` ones can be computed, and a version that needs the others ranks as BM25 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from rankers.index import CollectionIndex
from rankers.propagation import propagation_scores
from rankers.rm3 import rm3_scores, rows_terms, term_frequency_matrix

SIGNALS = ("bm25", "cosine", "rm3", "propagation", "engine", "engine_rank")
LEXICAL = ("bm25", "rm3")
ENGINE = ("engine", "engine_rank")
SEMANTIC = ("cosine", "propagation")
RM3_FEEDBACK_DOCS = 10
RM3_TERMS = 10
RM3_ORIGINAL_WEIGHT = 0.5
PROPAGATION_NEIGHBOURS = 10
PROPAGATION_POWER = 2.0


@dataclass(frozen=True)
class RatedQuestions:
    """What propagation learns from: training questions' vectors and their stars per answer position.

    ``gains`` is a (questions × answers) CSR matrix over the index's answer positions, 0 where unrated.
    Only training questions belong here (the caller chooses them).
    """

    vectors: np.ndarray
    gains: sparse.csr_matrix
    question_ids: tuple[int, ...] = ()

    def without(self, question_id: int) -> int:
        """The row of ``question_id`` (to leave out: a question must not propagate to itself), or -1."""
        try:
            return self.question_ids.index(question_id)
        except ValueError:
            return -1

    def save(self, path: Path, answer_ids: Sequence[str]) -> None:
        """Store with answer external ids, so a later index (other positions) can read it back."""
        coo = self.gains.tocoo()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as out:
            np.savez(
                out,
                vectors=self.vectors.astype(np.float32),
                rows=coo.row.astype(np.int64),
                answers=np.array([answer_ids[c] for c in coo.col], dtype=str),
                stars=coo.data.astype(np.float64),
            )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, index: CollectionIndex) -> RatedQuestions:
        with np.load(path) as data:
            vectors, rows, answers, stars = data["vectors"], data["rows"], data["answers"], data["stars"]
        columns = np.array([index.position.get(str(a), -1) for a in answers], dtype=np.int64)
        keep = columns >= 0  # answers deleted since training propagate nothing
        gains = sparse.csr_matrix(
            (stars[keep], (rows[keep], columns[keep])), shape=(len(vectors), index.size), dtype=np.float64
        )
        return cls(vectors=vectors, gains=gains)


def candidate_signals(
    index: CollectionIndex,
    term_ids: list[int],
    positions: np.ndarray,
    bm25: np.ndarray,
    *,
    names: Sequence[str],
    question_vector: np.ndarray | None = None,
    answer_vectors: np.ndarray | None = None,
    rated: RatedQuestions | None = None,
    exclude: int = -1,
    candidate_vectors: np.ndarray | None = None,
    engine_scores: np.ndarray | None = None,
) -> np.ndarray:
    """(len(positions), len(names)) signals of the candidates at ``positions`` (first-stage order).

    ``bm25``: the title + body BM25 score of every answer. ``exclude``: a row of ``rated`` to leave
    out (the question itself, when it is a training question). The answers' vectors come as
    ``answer_vectors`` (every answer's, indexed by position) or ``candidate_vectors`` (the candidates'
    only, in order); ``engine_scores`` are the engine's scores of the candidates, in order. Raises
    ValueError when a signal is asked for without what it needs.
    """
    columns = []
    for name in names:
        if name == "bm25":
            columns.append(bm25[positions].astype(np.float64))
        elif name == "cosine":
            if candidate_vectors is None and answer_vectors is not None:
                candidate_vectors = np.asarray(answer_vectors[positions])
            if question_vector is None or candidate_vectors is None:
                raise ValueError("cosine needs the question's and the answers' vectors")
            columns.append(np.asarray(candidate_vectors, dtype=np.float64) @ question_vector)
        elif name in ENGINE:
            if engine_scores is None:
                raise ValueError(f"{name} needs the engine's scores of the candidates")
            if name == "engine":
                columns.append(np.asarray(engine_scores, dtype=np.float64))
            else:
                columns.append(1.0 / np.arange(1, len(positions) + 1, dtype=np.float64))
        elif name == "rm3":
            own_offsets, own_terms = rows_terms(index.doc_offsets, index.doc_terms, positions)
            tf = term_frequency_matrix(own_offsets, own_terms, np.arange(len(positions)), len(index.idf))
            feedback = min(RM3_FEEDBACK_DOCS, len(positions))
            lengths = np.diff(index.doc_offsets)
            columns.append(
                rm3_scores(
                    term_ids,
                    tf,
                    tf[:feedback],
                    bm25[positions[:feedback]],
                    index.idf,
                    float(lengths.mean()) if len(lengths) else 1.0,
                    fb_terms=RM3_TERMS,
                    original_weight=RM3_ORIGINAL_WEIGHT,
                )
            )
        elif name == "propagation":
            if question_vector is None or rated is None:
                raise ValueError("propagation needs the question's vector and the rated questions")
            if len(rated.vectors) == 0:
                columns.append(np.zeros(len(positions)))
                continue
            scores = propagation_scores(
                question_vector[None, :],
                rated.vectors,
                rated.gains[:, positions],
                exclude=np.array([exclude]),
                top_n=PROPAGATION_NEIGHBOURS,
                power=PROPAGATION_POWER,
            )
            columns.append(scores[0])
        else:
            raise ValueError(f"unknown signal {name!r}; known: {', '.join(SIGNALS)}")
    return np.column_stack(columns) if columns else np.zeros((len(positions), 0))
