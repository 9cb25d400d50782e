"""`sharedctx compress --explain`: which compressor ran, why, token counts, what it dropped."""

from __future__ import annotations

import gc
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from sharedctx.cli import main


@pytest.fixture(autouse=True)
def _no_stray_output(capsys: pytest.CaptureFixture[str]) -> None:
    """These tests read the command's stderr line by line. An RPC task that an earlier
    module's in-process server left pending reports itself to stderr when it is collected,
    which once happened in the middle of one of them (`Task was destroyed but it is
    pending!`, a GeneratorExit traceback): collected first, and its report dropped."""
    gc.collect()
    capsys.readouterr()


def _listing() -> str:
    lines = [
        f"-rw-r--r-- 1 root root {i * 97:>6} Dec  2 02:05 report_{i:03d}.csv" for i in range(80)
    ]
    lines.append("ls: cannot open directory './private': Permission denied")
    return "\n".join(lines) + "\n"


def test_explain_says_what_ran_why_and_what_was_dropped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "ls.txt"
    path.write_text(_listing(), encoding="utf-8")
    assert main(["compress", "--explain", "--tool-name", "ls", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("[listing (ls): 80 entries")
    assert "ls: cannot open directory './private': Permission denied" in out
    lines = err.splitlines()
    assert lines[0].startswith("listing: ") and "saved" in lines[0]
    assert any(line.split()[:2] == ["listing", "chosen"] for line in lines)
    assert any(line.split()[:3] == ["log", "not", "run"] for line in lines)
    assert any(line.startswith("left out by listing: ") for line in lines)


def test_explain_in_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(_listing().encode())))
    assert main(["compress", "--json", "--explain"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compressor"] == "listing"
    trials = {t["compressor"]: t for t in report["explain"]["trials"]}
    assert trials["listing"]["outcome"] == "chosen"
    assert trials["listing"]["tokens"] == report["compressed_tokens"]
    assert trials["listing"]["dropped"]
    assert report["compressed"].startswith("[listing")


def test_explain_for_content_left_as_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a short note")))
    assert main(["compress", "--explain", "--stats-only"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[:2] == [
        "none: 3 tokens, stored as is",
        "why: under 512 characters: stored as is",
    ]


def test_a_dash_reads_stdin_and_a_missing_file_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(_listing().encode())))
    assert main(["compress", "--json", "-"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compressor"] == "listing"
    assert report["saved"] == round(1 - report["compressed_tokens"] / report["original_tokens"], 3)
    assert "compressed" in report
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(_listing().encode())))
    assert main(["compress", "--json", "--stats-only", "-"]) == 0
    assert "compressed" not in json.loads(capsys.readouterr().out)
    missing = tmp_path / "nope.txt"
    assert main(["compress", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"sharedctx: cannot read {missing}: No such file or directory"


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    # `sharedctx compress big.txt | head -1`: the pipe closes while the form is printed.
    path = tmp_path / "prose.txt"
    words = "the store keeps every entry whole and its form small for agents to read".split()
    rng = random.Random(5)
    text = "\n\n".join(" ".join(rng.choices(words, k=40)) + "." for _ in range(3000))
    path.write_text(text, encoding="utf-8")
    script = "import sys; from sharedctx.cli import main; sys.exit(main(sys.argv[1:]))"
    child = subprocess.Popen(
        [sys.executable, "-c", script, "compress", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141
    assert "Traceback" not in err and err == ""
    # Output smaller than the stream's buffer is written at the flush: the same.
    small = tmp_path / "small.txt"
    small.write_text("a few words of text\n" * 40, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that is already gone
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, "compress", str(small)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr


def test_an_input_over_the_default_content_limit_is_compressed_with_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = tmp_path / "big.log"
    big.write_text(_listing() * 300)  # about 2 MiB
    assert main(["compress", "--stats-only", str(big)]) == 0
    err = capsys.readouterr().err
    assert "is over max_content_bytes (1,048,576 by default)" in err
    assert "listing:" in err  # compressed all the same (a server may allow more)
