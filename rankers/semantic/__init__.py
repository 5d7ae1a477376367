"""Answer and question embeddings of a collection: the builtin ranker's semantic signal.

An answer's vector is the embedding (``rankers.embedding``) of its title and body. The vectors of one
state of a collection (its index fingerprint) are stored under ``MODEL_DIR/embeddings/collection-<id>/``
as one matrix whose rows follow the BM25 index's answer order (``vectors-<fingerprint>.npy``), beside
each row's text hash (``hashes-<fingerprint>.npy``). A new state re-encodes only the answers whose text
changed: the others are copied by hash from the previous state's files, or from the vectors kept one per
text under ``EMBEDDINGS_DIR/returned/`` (what an engine's reranker encoded, see ``CandidateVectors``).

Computing them is a job (``EmbeddingBuild``): ``embeddings_plan`` lists the texts to encode and splits
them into parts of ``PART_SIZE``; each part is one Celery task (``rankers.embeddings_part``) whose
vectors go to their own file, written atomically, so parts run on any worker, a killed worker's part
is simply done again, and finished parts are never redone. A part reads only its slice of the plan's
mapped todo file (``todo-<fingerprint>.npy``) and counts itself with one UPDATE, so its cost does not
grow with the build; the part whose count completes the build assembles the matrix. Ranking never builds: without vectors a semantic version ranks as BM25 does.

About 25 ms per answer on 2 cores (batch 16, 128 tokens): 1,400 answers in ~30 s; 100,000 in ~40 min.

The package, a file a subject: ``files`` (where a state's files live, atomic writes), ``encoding`` (answer
texts and matrix, question vectors and their cache), ``returned`` (the vectors of answers an engine
returned: ``CandidateVectors``, the per-text files, the candidate store), ``build`` (the build job).
A setting a test or bench changes (``encoding.load_encoder``, ``encoding._encode_threads``,
``build.PART_SIZE``, ``build.BATCH_SIZE``, ``returned.open_store``) is changed in the module that reads it.
"""

from __future__ import annotations

from rankers.semantic.build import (
    BUILD_WAIT_SECONDS,
    PART_SIZE,
    embeddings_assemble,
    embeddings_build_for,
    embeddings_build_now,
    embeddings_part,
    embeddings_plan,
    embeddings_resume,
)
from rankers.semantic.encoding import (
    BATCH_SIZE,
    QUESTION_CACHE_SIZE,
    _questions,
    answer_text,
    answer_texts,
    answer_vectors,
    encode_on_one_thread,
    question_vectors,
)
from rankers.semantic.files import _part_file, _save_first, _todo_file, embeddings_dir
from rankers.semantic.returned import (
    RETURNED_CACHE_SIZE,
    CandidateVectors,
    _stores,
    forget_vectors,
    vectors_keep,
)

__all__ = [
    "BATCH_SIZE",
    "PART_SIZE",
    "BUILD_WAIT_SECONDS",
    "QUESTION_CACHE_SIZE",
    "RETURNED_CACHE_SIZE",
    "CandidateVectors",
    "_part_file",
    "_questions",
    "_save_first",
    "_stores",
    "_todo_file",
    "answer_text",
    "answer_texts",
    "answer_vectors",
    "embeddings_assemble",
    "embeddings_build_for",
    "embeddings_build_now",
    "embeddings_dir",
    "embeddings_part",
    "embeddings_plan",
    "embeddings_resume",
    "encode_on_one_thread",
    "forget_vectors",
    "question_vectors",
    "vectors_keep",
]
