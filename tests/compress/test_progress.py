"""Progress bars redrawn with carriage returns: settled to their last state, errors kept whole."""

from __future__ import annotations

from sharedctx_server.compress import compress, explain, has_marker
from sharedctx_server.compress.error_lines import missing_error_lines
from sharedctx_server.compress.explanation import explanation_data, explanation_lines
from sharedctx_server.compress.progress import settle_progress
from sharedctx_server.tokens import TokenCounter


def never(line: str) -> bool:
    return False


def bar(label: str, steps: int) -> str:
    """One tqdm-style line: `steps + 1` states, each drawn over the last."""
    return "".join(
        f"\r{label}: {i * 100 // steps:3d}%|{'#' * (i * 10 // steps):<10}| {i}/{steps} [00:{i:02d}]"
        for i in range(steps + 1)
    )


def test_a_redrawn_line_keeps_its_last_state_and_counts_the_others() -> None:
    text = "start\n" + bar("epoch 1", 20) + "\ndone\n"
    settled, dropped = settle_progress(text, never)
    assert dropped == 20
    assert settled.split("\n") == [
        "start",
        "epoch 1: 100%|##########| 20/20 [00:20] [... 20 progress updates omitted]",
        "done",
        "",
    ]
    assert has_marker(settled)


def test_line_ends_and_texts_that_redraw_nothing_are_left_as_they_are() -> None:
    windows = "first line\r\nsecond line\r\n"
    assert settle_progress(windows, never) == (windows, 0)
    # Without any newline the carriage returns may be an old Mac file's line ends...
    mac = "first line\rsecond line\rthird line\r"
    assert settle_progress(mac, never) == (mac, 0)
    # ...as they are on a line whose every state ends in one, after a header line.
    rows = "name,qty,price\r" + "".join(f"item{i},{i},{i * 1.5}\r" for i in range(50))
    assert settle_progress(f"export:\n{rows}\n", never) == (f"export:\n{rows}\n", 0)
    blank_states = "\r   \rjust one state\r\n"
    assert settle_progress(blank_states, never) == (blank_states, 0)
    # A spinner's one-character states: the marker would be longer than they are.
    spinner = "waiting |\r/\r-\r\\\ndone\n"
    assert settle_progress(spinner, never) == (spinner, 0)


def test_a_terminal_capture_with_windows_line_ends_is_settled_too() -> None:
    # Through a pty every line ends in "\r\n", and a bar's first state may not start with a
    # carriage return: the last one is the line end, the ones before separate states.
    text = "start\r\n" + bar("epoch 1", 20).lstrip("\r") + "\r\ndone\r\n"
    settled, dropped = settle_progress(text, never)
    assert dropped == 20
    assert settled.split("\n")[1] == (
        "epoch 1: 100%|##########| 20/20 [00:20] [... 20 progress updates omitted]\r"
    )


def test_a_redrawn_line_that_reports_a_problem_in_any_state_stays_whole() -> None:
    def is_error(line: str) -> bool:
        return line.startswith(("ERROR", "E "))  # anchored, as error rules often are

    for problem in ("ERROR: connection reset by peer", "E   assert 3 == 4"):
        failing = "".join(f"\rdownloading {p}%" for p in range(0, 100, 10))
        failing += f"\r{problem}\rretrying 0%"
        text = "fetch model\n" + failing + "\n" + bar("upload", 5) + "\n"
        settled, dropped = settle_progress(text, is_error)
        assert failing in settled.split("\n")
        assert dropped == 5


def test_compressing_progress_output_keeps_every_final_state_and_error(
    token_counter: TokenCounter,
) -> None:
    lines = ["Collecting numpy", "  Downloading numpy-2.1.0.whl (16.3 MB)"]
    lines += [bar(f"epoch {e}", 40) for e in range(3)]
    lines += ["\rretry 1\rERROR: epoch 2 diverged: loss=nan", "Saved checkpoint to ./ckpt"]
    content = "\n".join(lines) + "\n"
    result = compress(content, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressed_tokens < result.original_tokens // 5
    assert "epoch 2: 100%|##########| 40/40 [00:40]" in result.text
    assert " 39/40 " not in result.text
    assert missing_error_lines(content, result.text) == []
    assert compress(result.text, count_tokens=token_counter.count).text == result.text
    choice = explain(content, count_tokens=token_counter.count, kind="tool_output")
    assert "progress bar updates (counted)" in explanation_data(choice)["unseen"]
    assert any(line.startswith("read as a terminal") for line in explanation_lines(choice))


def test_a_short_progress_capture_is_settled_even_when_no_compressor_runs(
    token_counter: TokenCounter,
) -> None:
    content = "Reading package lists..." + bar("Reading package lists", 60) + "\n"
    result = compress(content, count_tokens=token_counter.count)
    assert result.compressed_tokens < result.original_tokens // 5
    assert result.text.startswith("Reading package lists: 100%|##########| 60/60")
