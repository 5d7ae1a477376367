"""The Cranfield demo's answer vectors, shipped beside its data so the demo's semantic signal is ready at once.

Encoding the demo's 1,400 answers takes a minute of both cores (``rankers.semantic``); every fresh
``make run`` and every test that trains on the demo would spend it again for the same vectors. So
``demo_data/cranfield-vectors.npz`` holds them: ``keys`` (each answer text's ``text_hash``, which names the
model and token limit), ``vectors`` (float32, 1,400 × 384, encoded as a fresh embeddings build encodes
them: parts of ``PART_SIZE`` in the file's order, batches of ``BATCH_SIZE``, so they are the vectors a
build would compute) and ``model_sha256`` (the model file they came from). ``demo_vectors_seed`` puts them
in the one-file-per-text store, where the demo's embeddings build finds every answer and encodes none.
Vectors of another model are not used: the build encodes as if there were no file.

``manage.py shell -c "from trainer.demo_vectors import main; main()"`` writes the file again (after a model or demo data change); a test
(tests/trainer/test_demo_vectors.py) re-encodes the first parts and compares.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from corpus.services import ImportFiles, parse_import_files
from rankers.embedding import MODEL_SHA256, Encoder, load_encoder, text_hash
from rankers.semantic import BATCH_SIZE, PART_SIZE, answer_text, vectors_keep
from trainer.services import DEMO_DATA_DIR

DEMO_VECTORS_FILE = DEMO_DATA_DIR / "cranfield-vectors.npz"


def demo_answer_texts() -> list[str]:
    """The demo answers' texts as the embeddings build reads them, in the demo file's order."""
    answers, _, _ = parse_import_files(ImportFiles(rnr_documents=DEMO_DATA_DIR / "cranfield-data.json"))
    return [answer_text(answer.title, answer.body) for answer in answers]


def demo_vectors_encode(texts: list[str], encoder: Encoder) -> np.ndarray:
    """``texts``' vectors as a fresh embeddings build encodes them (parts of PART_SIZE, batches of
    BATCH_SIZE): the int8 model quantises each batch's activations together, so the batches matter."""
    parts = [
        encoder.encode(texts[start : start + PART_SIZE], batch_size=BATCH_SIZE).astype(np.float32)
        for start in range(0, len(texts), PART_SIZE)
    ]
    return np.vstack(parts)


def demo_vectors_seed(*, root: Path | None = None) -> int:
    """Keep the shipped demo vectors in the store under ``root`` (default ``EMBEDDINGS_DIR``); returns how
    many were added (0 when they were there already, or the file is another model's)."""
    with np.load(DEMO_VECTORS_FILE) as shipped:
        if str(shipped["model_sha256"]) != MODEL_SHA256:
            return 0
        keys = [str(key) for key in shipped["keys"]]
        return vectors_keep(keys=keys, vectors=shipped["vectors"], root=root)


def main() -> None:
    """Encode the demo's answers and write DEMO_VECTORS_FILE."""
    texts = demo_answer_texts()
    vectors = demo_vectors_encode(texts, load_encoder())
    keys = np.array([text_hash(text) for text in texts])
    with open(DEMO_VECTORS_FILE, "wb") as out:
        np.savez_compressed(out, keys=keys, vectors=vectors, model_sha256=np.array(MODEL_SHA256))
    print(f"wrote {len(texts)} vectors to {DEMO_VECTORS_FILE}")
