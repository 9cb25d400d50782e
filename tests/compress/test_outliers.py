"""A folded run keeps the lines whose numbers stand out: the GPU nearly out of memory."""

from __future__ import annotations

import random

import numpy as np
from sharedctx_server.compress import compress
from sharedctx_server.compress.outliers import MAX_OUTLIERS, _column_medians, standing_out
from sharedctx_server.tokens import TokenCounter


def _row(left: str, middle: str, right: str, fill: str = " ", edge: str = "|") -> str:
    """A line of nvidia-smi's box: three cells of its widths."""
    return f"{edge}{left:{fill}<41}{edge}{middle:{fill}>24}{edge}{right:{fill}>22}{edge}"


def gpus(n: int = 8, full: int = 3, ecc: int = 5) -> str:
    """`nvidia-smi` on `n` alike GPUs; GPU `full` nearly out of memory and idle, GPU `ecc`
    with 3 uncorrected ECC errors."""
    rng = random.Random(5)
    rule = _row("", "", "", "-", "+")
    lines = [
        "Sat Dec  5 18:02:31 2026",
        "+" + "-" * 89 + "+",
        f"| {'NVIDIA-SMI 550.90.07    Driver Version: 550.90.07    CUDA Version: 12.4':<88}|",
        rule,
        _row(
            " GPU  Name      Persistence-M ", " Bus-Id          Disp.A ", " Volatile Uncorr. ECC "
        ),
        _row(" Fan  Temp   Perf  Pwr:Usage/Cap ", " Memory-Usage ", " GPU-Util  Compute M. "),
        _row("", "", "", "=", "|"),
    ]
    for i in range(n):
        used, util = (80123, 0) if i == full else (62000 + rng.randint(0, 1500), 95)
        watts = f"{rng.randint(500, 700)}W /  700W "
        lines += [
            _row(f"   {i}  NVIDIA H100 80GB HBM3   On  ", f" 00000000:{i + 1}8:00.0 Off ",
                 f" {3 if i == ecc else 0} "),
            _row(f" N/A   {60 + rng.randint(0, 12)}C    P0    {watts}",
                 f" {used}MiB /  81559MiB ", f" {util}%      Default "),
            _row("", "", " Disabled "),
            rule,
        ]  # fmt: skip
    return "\n".join(lines) + "\n"


def test_the_gpu_that_stands_out_is_kept(token_counter: TokenCounter) -> None:
    result = compress(gpus(), count_tokens=token_counter.count, tool_name="nvidia-smi")
    assert result.compressor == "log" and "similar lines]" in result.text
    assert "| 80123MiB / 81559MiB | 0% Default |" in result.text
    assert "00000000:68:00.0 Off | 3 |" in result.text


def test_numbers_that_vary_at_random_keep_no_line() -> None:
    rng = random.Random(1)
    lines = [
        f"12:00:{i % 60:02d} conn from 10.0.{rng.randint(0, 9)}.{rng.randint(1, 250)}:"
        f"{rng.randint(1024, 65535)} id={rng.getrandbits(64):x} bytes={rng.randint(10, 90000)}"
        for i in range(200)
    ]
    assert standing_out(lines, [0] * len(lines)) == []


def test_a_few_odd_values_in_a_constant_slot_stand_out_and_many_do_not() -> None:
    lines = [f"GET /health 200 {i}" for i in range(40)]
    lines[17] = "GET /health 503 17"
    assert standing_out(lines, [0] * 40) == [17]
    # A second common value (a day after midnight) is no outlier.
    days = [f"2026-12-0{5 if i < 30 else 6} job ran" for i in range(40)]
    assert standing_out([d.replace("-0", " 0") for d in days], [0] * 40) == []


def test_at_most_a_few_lines_of_a_run_are_kept() -> None:
    lines = [f"worker used {1000 + i % 3}MiB" for i in range(60)]
    for i in (5, 15, 25, 35, 45):
        lines[i] = f"worker used {9000 + i}MiB"
    kept = standing_out(lines, [0] * 60)
    assert len(kept) == MAX_OUTLIERS and set(kept) <= {5, 15, 25, 35, 45}


def test_column_medians_are_numpys() -> None:
    """The sort-based medians equal np.median's, infinities and NaN included."""
    rng = np.random.default_rng(7)
    for rows in (1, 2, 3, 6, 21):
        values = rng.integers(0, 50, size=(rows, 4)).astype(np.float64)
        values[rng.random((rows, 4)) < 0.1] = np.inf
        values[rng.random((rows, 4)) < 0.05] = np.nan
        assert np.array_equal(_column_medians(values), np.median(values, axis=0), equal_nan=True), (
            values
        )
