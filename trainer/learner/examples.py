"""The training questions as examples: their first-stage candidates, signals, features and targets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from corpus.models import Collection, Question, Split
from rankers.features import candidate_features
from rankers.index import CollectionIndex
from rankers.propagation import propagation_scores
from rankers.semantic import question_vectors
from rankers.signals import PROPAGATION_NEIGHBOURS, PROPAGATION_POWER, RatedQuestions, candidate_signals
from rankers.text import tokenize
from ratings.selectors import complete_question_ids, labels_for_collection

from .stages import BM25_STAGE, FirstStage

VectorsOf = Callable[[np.ndarray], np.ndarray]


@dataclass
class QuestionExample:
    question_id: int
    external_id: str
    candidate_ids: list[str]
    positions: np.ndarray
    features: np.ndarray  # the 12 lexical features (LambdaMART)
    # bm25, rm3, cosine (and engine, engine_rank) per candidate; propagation depends on the fold
    signals: dict[str, np.ndarray]
    # Gain of each candidate; NaN when unrated (unknown, not 0 stars), except on a question an import judged
    # with "answers not listed are incorrect" on, whose unlisted candidates are 0 stars (``training_examples``).
    targets: np.ndarray
    labels: dict[str, int]  # every label of the question, retrieved or not (for ideal DCG)
    vector: np.ndarray | None = None
    # An import that says its unlisted answers are incorrect judged it: an unlisted one is 0 stars (in the
    # fit and in cross-validation), not unknown.
    complete: bool = False


def training_questions(*, collection: Collection) -> list[Question]:
    """Training-split questions of the collection that have at least one label, in id order."""
    ids = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", flat=True
    )
    return list(
        Question.objects.filter(collection=collection, split=Split.TRAIN, id__in=ids)
        .order_by("id")
        .distinct()
    )


def training_examples(
    *,
    collection: Collection,
    index: CollectionIndex,
    candidates: int,
    answer_vectors: np.ndarray | None = None,
    first_stage: FirstStage = BM25_STAGE,
    vectors_of: VectorsOf | None = None,
) -> list[QuestionExample]:
    """One example per labelled training question: its first-stage candidates, their features and targets.

    The candidates' vectors come from ``vectors_of(positions)`` or, for every answer, ``answer_vectors``;
    neither: no semantic signals.

    An unrated candidate is unknown (target NaN), except on a question judged by an import whose option
    "answers not listed for a judged question are incorrect" is on (``GroundTruthImport.unlisted_incorrect``,
    the TREC assumption, the default for an import): such a ground truth lists a question's relevant answers
    (R&R's ground truth, TREC qrels), so a candidate it does not list is 0 stars (target 0), as R&R's
    training and trec_eval read it. Read as
    unknown there, a learner sees almost no irrelevant answer: on the Cranfield demo (its ground truth
    rates 30% of BM25's top 10) the learned fusion fitted so was 0.119 below BM25 on the 75 Cranfield
    queries the demo does not have, and 0.043 above it fitted with the unlisted ones at 0 stars
    (``bench/bench_demo_generalise.py``). Ratings people give through the queue, and imports with the option
    off, stay unknown where unrated.
    Such a question is ``complete``: cross-validation reads its unlisted answers as 0 stars too.
    """
    if vectors_of is None and answer_vectors is not None:
        full = answer_vectors
        vectors_of = lambda positions: np.asarray(full[positions])  # noqa: E731
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    questions = training_questions(collection=collection)
    complete = complete_question_ids(collection=collection, split=Split.TRAIN)
    vectors = question_vectors([q.text for q in questions]) if vectors_of is not None else None
    examples = []
    for i, question in enumerate(questions):
        terms = tokenize(question.text)
        positions, bm25, first_scores = first_stage.candidates(index, question, terms, candidates)
        ids = [index.ids[p] for p in positions]
        known = labels[question.pk]
        vector = vectors[i] if vectors is not None else None
        names = ("bm25", "rm3", *first_stage.signals) + (("cosine",) if vector is not None else ())
        signals = candidate_signals(
            index,
            index.term_ids(terms),
            positions,
            bm25,
            names=names,
            question_vector=vector,
            candidate_vectors=vectors_of(positions)
            if vectors_of is not None and vector is not None
            else None,
            engine_scores=first_scores,
        )
        examples.append(
            QuestionExample(
                question_id=question.pk,
                external_id=question.external_id,
                candidate_ids=ids,
                positions=positions,
                features=candidate_features(index, terms, positions, bm25),
                signals={name: signals[:, j] for j, name in enumerate(names)},
                targets=np.array(
                    [known.get(a, 0.0 if question.pk in complete else np.nan) for a in ids], dtype=np.float64
                ),
                labels=known,
                vector=vector,
                complete=question.pk in complete,
            )
        )
    return examples


def rated_questions(examples: list[QuestionExample], index: CollectionIndex) -> RatedQuestions:
    """The examples' vectors and stars over the index's answer positions (for propagation)."""
    rows, columns, stars = [], [], []
    for row, example in enumerate(examples):
        for answer_id, gain in example.labels.items():
            position = index.position.get(answer_id)
            if position is not None:
                rows.append(row)
                columns.append(position)
                stars.append(float(gain))
    gains = sparse.csr_matrix((stars, (rows, columns)), shape=(len(examples), index.size), dtype=np.float64)
    vectors = (
        np.vstack([e.vector for e in examples if e.vector is not None]) if examples else np.zeros((0, 384))
    )
    return RatedQuestions(vectors=vectors, gains=gains, question_ids=tuple(e.question_id for e in examples))


def _propagation(example: QuestionExample, rated: RatedQuestions) -> np.ndarray:
    """Stars that the other rated questions gave this example's candidates (never its own)."""
    assert example.vector is not None
    if rated.vectors.shape[0] == 0:
        return np.zeros(len(example.positions))
    return propagation_scores(
        example.vector[None, :],
        rated.vectors,
        rated.gains[:, example.positions],
        exclude=np.array([rated.without(example.question_id)]),
        top_n=PROPAGATION_NEIGHBOURS,
        power=PROPAGATION_POWER,
    )[0]


def _columns(example: QuestionExample, names: tuple[str, ...], rated: RatedQuestions | None) -> np.ndarray:
    columns = [
        _propagation(example, rated) if name == "propagation" and rated is not None else example.signals[name]
        for name in names
    ]
    return np.column_stack(columns)


def _learnable(example: QuestionExample) -> bool:
    """Whether some rated candidate of the example is relevant (else it has nothing to teach)."""
    return bool(np.any(example.targets > 0))
