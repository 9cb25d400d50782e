"""The model: texts in, L2-normalised float32 vectors out, through fastembed and onnxruntime."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from fastembed import TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType
from numpy.typing import NDArray

from sharedctx_server.embedding import default_model
from sharedctx_server.embedding.default_model import file_sha256
from sharedctx_server.embedding.spec import DEFAULT_MODEL_NAME, ModelSpec

# Files whose content changes the vectors besides the ONNX file itself: they go into the model id.
_TOKENIZER_FILES = default_model.TOKENIZER_FILES
# A fastembed registration needs a source even when the files are local; it is never fetched,
# because `specific_model_path` short-circuits fastembed's download.
_UNUSED_SOURCE = ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2")
# Padded tokens per onnxruntime call. On CPU the cost is about linear in padded tokens, and big
# batches fall out of cache (attention alone is batch x 12 x len^2 floats): measured on 2 cores,
# fastembed's default batch of 256 texts of 30-150 words ran ~3x slower per text than runs of
# 1-4 texts. So a batch is cut into length-sorted runs of about this many padded tokens.
DEFAULT_RUN_TOKENS = 512
# The default model's int8 mode embeds one text per onnxruntime call: its DynamicQuantizeLinear
# nodes pick one scale for a whole input tensor, so texts sharing a call would shift each other's
# vectors (by up to 0.04 per component, measured), and a text must embed the same whatever came
# with it. On CPU this costs nothing: single texts were the fastest runs anyway (int8 on 2 cores:
# 77 texts/s one by one, 32/s in batches of 8, 22/s in batches of 32).
_ONE_TEXT_PER_RUN = 1
# Rough characters per token, only to sort and cut runs; it errs towards shorter runs.
_CHARS_PER_TOKEN = 3
# Prefixes of a long text tried (in characters) before the tokenizer sees all of it: the model
# reads its first max_tokens tokens only, and tokenizing a 1 MiB text to keep 256 tokens
# took longer than the model run (see Embedder._clip).
_CLIP_CHARS = (2048, 16384)
# The last character before a clip point that ends a word for a BERT pre-tokenizer: whitespace
# or ASCII punctuation (which it splits off as a word of its own), looked for this far back.
_LAST_BOUNDARY = re.compile(r"[\s!-/:-@\[-`{-~][^\s!-/:-@\[-`{-~]*\Z")
_BOUNDARY_SEARCH_CHARS = 1024


class Encoder(Protocol):
    """What the batcher needs from a model: an id, a dimension and a blocking batch call."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


def available_cores() -> int:
    """Return the cores this process may run on (its CPU affinity, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Embedder:
    """A loaded embedding model. `embed` blocks; call it from one thread at a time."""

    def __init__(
        self,
        model: TextEmbedding,
        *,
        model_id: str,
        dim: int,
        max_tokens: int | None,
        run_tokens: int = DEFAULT_RUN_TOKENS,
    ) -> None:
        self._model = model
        self._model_id = model_id
        self._dim = dim
        self._max_tokens = max_tokens
        self._run_tokens = run_tokens
        self._tokenizer: Any = _clippable_tokenizer(model, max_tokens)

    @classmethod
    def load(
        cls,
        spec: ModelSpec,
        cache_dir: Path,
        *,
        threads: int | None = None,
        run_tokens: int = DEFAULT_RUN_TOKENS,
    ) -> Embedder:
        """Load the model `spec` names; `threads` are onnxruntime's (default: all cores)."""
        model, recipe, known_hashes = _open(spec, cache_dir, threads or available_cores())
        if spec.is_default and spec.compute == "int8":
            run_tokens = _ONE_TEXT_PER_RUN
        # The description and folder live on fastembed's ONNX model classes, not on their base.
        inner: Any = model.model
        description = inner.model_description
        files = [description.model_file, *description.additional_files, *_TOKENIZER_FILES]
        digest = _fingerprint(Path(inner._model_dir), files, recipe, known_hashes)
        return cls(
            model,
            model_id=f"{_label(spec.name)}@{digest[:12]}",
            dim=int(model.embedding_size),
            max_tokens=_max_tokens(inner),
            run_tokens=run_tokens,
        )

    @property
    def model_id(self) -> str:
        """Names the vectors: `<name>@<12 hex>`, a digest of the model and tokenizer files.

        Equal ids mean the same weights, tokenizer settings (e.g. the 256-token limit) and pooling,
        so vectors with equal ids may be compared and vectors with different ids never may.
        """
        return self._model_id

    @property
    def dim(self) -> int:
        """Number of dimensions of each vector."""
        return self._dim

    @property
    def fastembed_model(self) -> TextEmbedding:
        """The underlying fastembed model (for benchmarks and diagnostics)."""
        return self._model

    @property
    def max_tokens(self) -> int | None:
        """Tokens per text the model sees (including [CLS]/[SEP]); longer texts are cut."""
        return self._max_tokens

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return a float32 `(len(texts), dim)` array of L2-normalised vectors, in order."""
        if isinstance(texts, str):
            # A str is a Sequence[str] too: one vector per character is never what was meant.
            raise TypeError("embed takes a sequence of texts, not a single str")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for run in self._runs(texts):
            clipped = [self._clip(texts[i]) for i in run]
            vectors = list(self._model.embed(clipped, batch_size=len(run)))
            out[run] = np.asarray(vectors, dtype=np.float32)
        # fastembed already normalises most models; doing it here keeps the promise for all.
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, np.maximum(norms, 1e-12), out=out)
        return out

    def _clip(self, text: str) -> str:
        """`text`, or a prefix of it that the model sees exactly as it sees `text`.

        Only for a BERT-style tokenizer (normalised character by character, split into words
        at whitespace and around every punctuation character, truncated on the right to
        max_tokens): cut after a space, a newline or an ASCII punctuation character, a
        prefix's tokens are the text's first ones, so when the prefix alone fills the model's
        window (it is truncated too), the model input is the same ids, mask and type ids.
        Punctuation counts because minified JSON and base64 have no spaces: cut only at
        whitespace, a 1 MiB JSON reply went to the tokenizer whole (1.7 s of a 2 s Put).
        """
        if self._tokenizer is None or self._max_tokens is None:
            return text
        for size in _CLIP_CHARS:
            if len(text) <= size:
                return text
            boundary = _LAST_BOUNDARY.search(text, max(0, size - _BOUNDARY_SEARCH_CHARS), size)
            if boundary is None:
                continue
            prefix = text[: boundary.start() + 1]
            if len(self._tokenizer.encode(prefix).ids) >= self._max_tokens:
                return prefix
        return text

    def _runs(self, texts: Sequence[str]) -> Iterator[list[int]]:
        # Similar lengths side by side: every run is padded to its longest text.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        cap = self._max_tokens or 512
        run: list[int] = []
        for i in order:
            longest = min(cap, len(texts[i]) // _CHARS_PER_TOKEN + 2)
            if run and (len(run) + 1) * longest > self._run_tokens:
                yield run
                run = []
            run.append(i)
        if run:
            yield run


def _clippable_tokenizer(model: TextEmbedding, max_tokens: int | None) -> Any:
    """The model's tokenizer when Embedder._clip may cut texts for it (a BERT normaliser and
    word splitter, right truncation at max_tokens); else None."""
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if tokenizer is None or not max_tokens:
        return None
    try:
        truncation = tokenizer.truncation or {}
        bert = (
            type(tokenizer.normalizer).__name__ == "BertNormalizer"
            and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
        )
    except AttributeError:
        return None
    right = truncation.get("direction") == "right" and truncation.get("stride") == 0
    if not (bert and right and truncation.get("max_length") == max_tokens):
        return None
    return tokenizer


def _open(
    spec: ModelSpec, cache_dir: Path, threads: int
) -> tuple[TextEmbedding, str, dict[str, str]]:
    """Return the fastembed model, the recipe that goes into its id, and file hashes known."""
    fastembed_cache = str(cache_dir / "fastembed")
    if spec.is_default:
        model_dir = default_model.default_model_dir(cache_dir, spec.compute)
        name = _register(DEFAULT_MODEL_NAME, "mean", default_model.DIM, default_model.MODEL_FILE)
        model = TextEmbedding(
            name, cache_dir=fastembed_cache, threads=threads, specific_model_path=str(model_dir)
        )
        # The fp32 folder links the wheel's file, hashed moments ago by default_model_dir: no
        # need to read 23 MB again. The int8 copy is hashed: its bytes name its vectors.
        known = (
            {default_model.MODEL_FILE: default_model.PINNED_SHA256}
            if spec.compute == "fp32"
            else {}
        )
        return model, default_model.model_recipe(spec.compute), known
    if spec.path is not None and not _listed_by_fastembed(spec.name):
        if spec.dim is None:
            raise ValueError(
                f"model {spec.name!r} at {spec.path} is not one fastembed knows: set its dim"
            )
        name = _register(spec.name, spec.pooling, spec.dim, spec.model_file)
        model = TextEmbedding(
            name, cache_dir=fastembed_cache, threads=threads, specific_model_path=str(spec.path)
        )
        return model, f"pooling={spec.pooling};dim={spec.dim}", {}
    # A model fastembed lists: its own description says file, pooling and dim. With no path,
    # fastembed downloads it into the cache on first use (network needed once).
    extra: dict[str, Any] = {}
    if spec.path is not None:
        extra["specific_model_path"] = str(spec.path)
    model = TextEmbedding(spec.name, cache_dir=fastembed_cache, threads=threads, **extra)
    return model, f"fastembed={spec.name.lower()}", {}


def _listed_by_fastembed(name: str) -> bool:
    return any(m["model"].lower() == name.lower() for m in TextEmbedding.list_supported_models())


def _register(name: str, pooling: str, dim: int, model_file: str) -> str:
    # fastembed keeps custom models in a class-level registry that refuses a name twice; the
    # registered name spells out everything registered, so an existing entry is the same model.
    registered = f"sharedctx/{name}/{pooling}/{dim}/{model_file}"
    if not _listed_by_fastembed(registered):
        TextEmbedding.add_custom_model(
            registered,
            pooling=PoolingType.MEAN if pooling == "mean" else PoolingType.CLS,
            normalization=True,
            sources=_UNUSED_SOURCE,
            dim=dim,
            model_file=model_file,
        )
    return registered


def _fingerprint(
    model_dir: Path, files: Sequence[str], recipe: str, known: Mapping[str, str]
) -> str:
    digest = hashlib.sha256(recipe.encode())
    for rel in files:
        path = model_dir / rel
        if path.is_file():
            file_digest = known.get(rel) or file_sha256(path)
            digest.update(f"\n{rel}\0{file_digest}".encode())
    return digest.hexdigest()


def _label(name: str) -> str:
    # Model ids go into Redis keys: no ':' (key separator) nor '{}' (cluster hash tags).
    return re.sub(r"[^A-Za-z0-9._/-]+", "-", name)


def _max_tokens(inner: Any) -> int | None:
    tokenizer = getattr(inner, "tokenizer", None)
    truncation = tokenizer.truncation if tokenizer is not None else None
    return int(truncation["max_length"]) if truncation else None
