"""Which compressor suits a content: JSON, stack trace, line-oriented log, or plain text.

Content decides first; the entry's kind and tool name are hints that break ties:
- a JSON array or object is "json" whatever the hints say;
- enough stack frames make it "stacktrace" when the trace is most of the text or the entry is
  prose (a message quoting a traceback keeps every line of its own), else "log";
- output counts as line-oriented ("log") when the kind is "log", the tool is known to print
  lines, or most lines look like records rather than sentences or code (a short file of
  settings too, `key = value`, `KEY=value`, `[section]`, which the generic compressor then
  keeps as text, `is_settings`);
- everything else is "text".

Binary-looking content: gRPC already rejects invalid UTF-8 in string fields, so what reaches
the server is valid text, but text can still be binary in disguise (NUL bytes, control
characters). `looks_binary` says so; the server rejects such content at Put with
INVALID_ARGUMENT rather than storing something no model can read. `compress` leaves it alone.
"""

from __future__ import annotations

import re
from typing import Literal

from ..fit.terminal import strip_ansi
from .config import DEFAULT_CONFIG, CompressConfig
from .frames import Frame, find_frames
from .json_compress import looks_like_json
from .whitespace import normalise_lines

__all__ = ["PROSE_KINDS", "Detected", "detect", "detect_lines", "is_settings", "looks_binary"]

Detected = Literal["json", "log", "stacktrace", "text"]

PROSE_KINDS = frozenset({"message", "note", "document"})

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# Lines that open a trace or name its exception (besides the frames themselves).
_TRACE_LINE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|During handling of the above exception"
    r"|The above exception was the direct cause|Caused by:|Exception in thread|panic:"
    r"|goroutine \d+ \[|stack backtrace:|thread '[^']*' panicked|\.\.\. \d+ more"
    r"|[\w.$]*(?:Error|Exception)\b)"
)
# A line that starts like a log record: a date or time, a [tag], a level, glog's `I0102`, or
# the source location a logger or compiler puts first (Go's `client.go:479: [debug] ...`,
# `worker.c:7:36: error: ...`, `app/x.py:12: error: ...`).
_RECORD = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{1,2}:\d{2}:\d{2}|\[[^\]\n]{1,40}\]"
    r"|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b|[IWEF]\d{4} "
    r"|[\w./-]+\.[A-Za-z]\w{0,5}:\d+:(?:\d+:)?\s)"
)
_CODE = re.compile(
    r"^\s*(?:def |class |import [\w.]+(?: as \w+)?(?:, [\w.]+)*$|from \S+ import |return\b"
    r"|elif |else:|try:|except\b|finally:|function\b|const |let |var |public |private "
    r"|protected |#include|package |func |fn |impl |struct |[}\])]+[;,]?$)|[{;:]$"
)
_LETTERS = re.compile(r"[^\W\d_]")
# A settings file: `key = value` (INI, sysctl.conf, .properties), `KEY=value` (.env, with or
# without `export`), `[section]`, comments and bare flags (`[mysqldump]`'s `quick`).
_SETTING = re.compile(r"^\s*(?:\[[^\]\n]+\]|[;#].*|(?:export\s+)?[\w.-]+\s*=.*|[\w.-]+)$")
_ASSIGNED = re.compile(r"^\s*(?:export\s+)?[\w.-]+\s*=")
_PAIR = re.compile(r"(?:^|\s)[\w.-]+=")
# A file of settings no longer than this is read as text, every value kept; longer dumps
# (`sysctl -a`) stay line output, whose runs of alike lines fold.
_SETTINGS_MAX_LINES = 300


def looks_binary(text: str, config: CompressConfig | None = None) -> bool:
    """Whether `text` is binary in disguise: a NUL byte, or too many other control characters."""
    if "\x00" in text:
        return True
    if not text:
        return False
    share = (config or DEFAULT_CONFIG).binary_control_share
    return len(_CONTROL.findall(strip_ansi(text))) > share * len(text)


def _is_prose(line: str) -> bool:
    words = line.split()
    if len(words) < 6:
        return False
    visible = sum(len(w) for w in words)
    return len(_LETTERS.findall(line)) >= 0.8 * visible


def is_settings(lines: list[str], kind: str | None) -> bool:
    """Whether `lines` are a (short) settings file, line output that the generic compressor
    keeps as text: the log compressor would fold values that differ (my.cnf's
    `innodb_buffer_pool_size = 128M` went into `[... 6 similar lines]`), and each value is
    what such a file is read for. (`detect` still calls it line output: excerpts cut it
    line by line.)"""
    # Normalised lines hold no two blank lines in a row: a long text is no settings file,
    # known without reading its lines (this runs on every Put of line output).
    if kind == "log" or len(lines) > 2 * _SETTINGS_MAX_LINES + 1:
        return False
    nonblank = [line for line in lines if line.strip()]
    if not nonblank or len(nonblank) > _SETTINGS_MAX_LINES:
        return False
    # A tool's name says little here: a shell tool prints the file it was asked to `cat`
    # (`cat config/app.ini` through a `bash` tool had its [db] section folded away). What a
    # log's lines look like does: logfmt (`level=info msg=...`) holds pairs, not a setting.
    settings = assigned = pairs = 0
    for line in nonblank:
        settings += _SETTING.match(line) is not None
        if _ASSIGNED.match(line):
            assigned += 1
            pairs += len(_PAIR.findall(line)) > 1
    return (
        settings >= 0.95 * len(nonblank)
        and assigned >= 0.5 * len(nonblank)
        and pairs <= 0.2 * assigned
    )


def _line_oriented(
    nonblank: list[str], kind: str | None, tool_name: str | None, config: CompressConfig
) -> bool:
    if len(nonblank) < config.min_lines:
        return False
    if kind == "log" or config.is_line_tool(tool_name):
        return True
    records = sum(1 for line in nonblank if _RECORD.match(line))
    if kind in PROSE_KINDS:
        return records >= 0.5 * len(nonblank)
    if records >= 0.3 * len(nonblank):
        return True
    # Weighted by characters, so a README's long paragraphs outweigh its short headings.
    chars = sum(len(line) for line in nonblank)
    prose = sum(len(line) for line in nonblank if _is_prose(line))
    code = sum(1 for line in nonblank if _CODE.search(line))
    return prose < 0.5 * chars and code < 0.4 * len(nonblank)


def detect_lines(
    lines: list[str],
    kind: str | None,
    tool_name: str | None,
    config: CompressConfig,
    frames: list[Frame] | None = None,
) -> Literal["log", "stacktrace", "text"]:
    """The compressor for whitespace-normalised `lines` that are not JSON (`frames`: their
    stack frames, when the caller has found them already)."""
    nonblank = [line for line in lines if line.strip()]
    if frames is None:
        frames = find_frames(lines)
    if len(frames) >= config.min_frames:
        in_trace = sum(f.end - f.start for f in frames)
        in_trace += sum(1 for line in nonblank if _TRACE_LINE.match(line))
        if kind in PROSE_KINDS or in_trace >= 0.5 * len(nonblank):
            return "stacktrace"
    if _line_oriented(nonblank, kind, tool_name, config):
        return "log"
    return "stacktrace" if len(frames) >= config.min_frames else "text"


def detect(
    content: str,
    kind: str | None = None,
    tool_name: str | None = None,
    config: CompressConfig | None = None,
) -> Detected:
    """Which compressor `compress` would run on `content`: json, stacktrace, log or text."""
    if looks_like_json(content):
        return "json"
    lines = normalise_lines(content.split("\n"))
    return detect_lines(lines, kind, tool_name, config or DEFAULT_CONFIG)
