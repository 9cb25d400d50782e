"""Compression benchmark: real tool outputs made on this machine, compressed as Put would.

    python -m benchmarks.compression [--out benchmarks/results/compression.json]
        [--git-repo PATH] [--ls-bytes 1000000] [--encoding o200k_base]

The corpus is generated at run time in a temporary folder, by running real programs:
`pip list --format json`, `pip inspect`, `ls -lR` of this interpreter's site-packages (cut
at a line boundary after `--ls-bytes`), `git log --stat -n 200` of `--git-repo` (default:
the repository this file is in; skipped if there is no history), `python -m pytest -v` on a
generated test file with failing tests, a service log written by a script through `logging`,
`python -X importtime -c "import numpy"`, a Python traceback through a deep call chain with a
chained cause, and, when `node` / `java` are installed, a Node and a Java stack trace.

Per sample: tokens before and after (the `--encoding` tiktoken encoding), share saved, error
lines in the original (`line_has_error`; inside JSON, lines also end at `\\n` escapes) and how
many the compressed form keeps, plus the checks Put relies on: JSON still parses, compressing
the compressed form changes nothing. Targets: >= 60% fewer tokens over the whole corpus, 100%
of error lines kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TARGET_SAVED = 0.60
_REPO = Path(__file__).resolve().parent.parent

# Child processes: no colours, no pip self-check, no bytecode next to generated files.
_ENV = {
    **os.environ,
    "NO_COLOR": "1",
    "PY_COLORS": "0",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_COLOR": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


@dataclass(frozen=True)
class Sample:
    """One real tool output and how the store would label it."""

    name: str
    command: str
    text: str
    kind: str
    tool_name: str


def _run(cmd: list[str], cwd: Path | None = None, stream: str = "stdout") -> str:
    """Output of `cmd` (stdout, stderr or both); a failing exit status is expected for some."""
    done = subprocess.run(
        cmd, cwd=cwd, env=_ENV, capture_output=True, text=True, errors="replace", timeout=600
    )
    if stream == "stderr":
        return done.stderr
    if stream == "both":
        return done.stdout + done.stderr
    return done.stdout


_FAILING_TESTS = """
import json
import pytest


def parse_price(text):
    value = float(text.strip("$"))
    if value < 0:
        raise ValueError(f"negative price: {text}")
    return round(value, 2)


def load_order(raw):
    data = json.loads(raw)
    return {"id": data["id"], "total": sum(parse_price(p) for p in data["prices"])}


@pytest.mark.parametrize("n", range(40))
def test_prices_round_trip(n):
    assert parse_price(f"${n}.50") == n + 0.5


def test_total_of_order():
    assert load_order('{"id": 7, "prices": ["$1.25", "$2.50"]}')["total"] == 3.80


def test_negative_price_is_rejected_with_message():
    with pytest.raises(ValueError, match="below zero"):
        parse_price("$-3")


def test_order_without_id():
    assert load_order('{"prices": ["$1"]}')["id"] is None


def test_order_list_equality():
    assert [parse_price(p) for p in ["$1", "$2", "$3"]] == [1.0, 2.0, 4.0]


def test_bad_json_order():
    load_order("{'id': 1}")
"""

_SERVICE_LOG = """
import logging
import random
import sys

logging.basicConfig(
    stream=sys.stdout,
    level=logging.DEBUG,
    format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
)
rng = random.Random(4)
log = logging.getLogger("ingest.worker")
http = logging.getLogger("ingest.http")
db = logging.getLogger("ingest.db")
log.info("worker starting: queue=orders batch_size=50 concurrency=4")
for batch in range(1, 41):
    db.debug("connection pool: in_use=%d idle=%d", rng.randint(1, 4), rng.randint(0, 6))
    for item in range(25):
        order = batch * 1000 + item
        http.debug("GET /api/orders/%d -> 200 in %dms", order, rng.randint(3, 90))
        log.info("processed order %d (%d lines, %.2f EUR)", order, rng.randint(1, 9),
                 rng.uniform(5, 500))
    if batch % 10 == 0:
        log.warning("queue lag is %d messages (threshold 500)", 480 + batch * 3)
    if batch == 23:
        http.error("GET /api/orders/23017 -> 503 Service Unavailable after 3 retries")
        try:
            {"id": 23017}["customer"]
        except KeyError:
            log.exception("failed to enrich order 23017, skipping")
    if batch == 31:
        db.error("deadlock detected while committing batch 31; rolled back")
    log.info("batch %d committed (%d orders)", batch, 25)
log.critical("worker stopping: 2 errors, 1 order skipped")
"""


def _chain_script(depth: int) -> str:
    """A script that fails at the bottom of `depth` distinct nested calls, with a cause."""
    names = [f"stage_{i:02d}" for i in range(depth)]
    parts = [
        f"def {a}(x):\n    y = x + 1\n    return {b}(y)\n"
        for a, b in zip(names, names[1:], strict=False)
    ]
    parts.append(
        f"def {names[-1]}(x):\n    settings = {{}}\n    try:\n"
        "        return settings['timeout'] * x\n"
        "    except KeyError as exc:\n"
        "        raise RuntimeError(f'stage {x}: settings lack a timeout') from exc\n"
    )
    parts.append(f"{names[0]}(0)\n")
    return "\n".join(parts)


_NODE_SCRIPT = """
function parseRecord(depth, line) {
  if (depth === 0) { return JSON.parse(line).user.name; }
  return parseRecord(depth - 1, line);
}
function handle(line) { return parseRecord(30, line); }
handle('{"id": 1}');
"""

_JAVA_SOURCE = """
public class Deep {
    static int level(int n, String raw) {
        if (n == 0) {
            try {
                return Integer.parseInt(raw);
            } catch (NumberFormatException e) {
                throw new IllegalStateException("could not parse retry count", e);
            }
        }
        return level(n - 1, raw) + 1;
    }
    public static void main(String[] args) { level(30, "x1"); }
}
"""


def _cap_lines(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1 if cut > 0 else limit]


def build_corpus(tmp: Path, git_repo: Path, ls_bytes: int) -> tuple[list[Sample], list[str]]:
    """Run the programs; return the samples and notes on what was skipped."""
    py = sys.executable
    samples: list[Sample] = []
    notes: list[str] = []

    def add(name: str, command: str, text: str, kind: str, tool: str) -> None:
        if text.strip():
            samples.append(Sample(name, command, text, kind, tool))
        else:
            notes.append(f"{name}: `{command}` printed nothing; skipped")

    add(
        "pip list json",
        "pip list --format json",
        _run([py, "-m", "pip", "list", "--format", "json"]),
        "tool_output",
        "pip",
    )
    add("pip inspect", "pip inspect", _run([py, "-m", "pip", "inspect"]), "tool_output", "pip")
    site = Path(sysconfig.get_paths()["purelib"])
    add(
        "ls -lR site-packages",
        f"ls -lR {site} (first {ls_bytes:,} bytes)",
        _cap_lines(_run(["ls", "-lR", str(site)]), ls_bytes),
        "tool_output",
        "ls",
    )
    git_log = ""
    if shutil.which("git"):
        git_log = _run(["git", "-C", str(git_repo), "log", "--stat", "-n", "200"])
    add("git log --stat", f"git log --stat -n 200 ({git_repo})", git_log, "tool_output", "git")

    test_file = tmp / "test_orders.py"
    test_file.write_text(_FAILING_TESTS, encoding="utf-8")
    pytest_out = _run(
        [py, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(test_file)], cwd=tmp, stream="both"
    )
    pytest_cmd = "python -m pytest -v test_orders.py"
    add("pytest (failing)", pytest_cmd, pytest_out, "tool_output", "pytest")

    log_script = tmp / "service.py"
    log_script.write_text(_SERVICE_LOG, encoding="utf-8")
    add("service log", "python service.py (logging)", _run([py, str(log_script)]), "log", "")
    add(
        "importtime log",
        'python -X importtime -c "import numpy"',
        _run([py, "-X", "importtime", "-c", "import numpy"], stream="stderr"),
        "log",
        "python",
    )

    chain = tmp / "chain.py"
    chain.write_text(_chain_script(30), encoding="utf-8")
    add(
        "python traceback",
        "python chain.py",
        _run([py, str(chain)], stream="stderr"),
        "tool_output",
        "python",
    )
    if shutil.which("node"):
        script = tmp / "parse.js"
        script.write_text(_NODE_SCRIPT, encoding="utf-8")
        node_err = _run(["node", "--stack-trace-limit=60", str(script)], stream="stderr")
        add("node stack", "node --stack-trace-limit=60 parse.js", node_err, "tool_output", "node")
    else:
        notes.append("node stack: node not installed; skipped")
    if shutil.which("java"):
        source = tmp / "Deep.java"
        source.write_text(_JAVA_SOURCE, encoding="utf-8")
        java_err = _run(["java", str(source)], cwd=tmp, stream="stderr")
        add("java stack", "java Deep.java", java_err, "tool_output", "java")
    else:
        notes.append("java stack: java not installed; skipped")
    return samples, notes


def measure(samples: list[Sample], encoding: str) -> list[dict[str, Any]]:
    """Compress each sample and check what Put relies on."""
    from sharedctx_server.compress import (
        compress,
        line_has_error,
        missing_error_lines,
    )
    from sharedctx_server.compress.error_lines import split_units
    from sharedctx_server.compress.json_compress import looks_like_json
    from sharedctx_server.tokens import TokenCounter

    count = TokenCounter(encoding).count
    rows: list[dict[str, Any]] = []
    for sample in samples:
        t0 = time.perf_counter()
        result = compress(
            sample.text, count_tokens=count, kind=sample.kind, tool_name=sample.tool_name
        )
        seconds = time.perf_counter() - t0
        is_json = looks_like_json(sample.text)
        units = split_units(sample.text, escaped_newlines=is_json)
        errors = sum(1 for u in units if line_has_error(u))
        missing = missing_error_lines(sample.text, result.text, escaped_newlines=is_json)
        again = compress(
            result.text, count_tokens=count, kind=sample.kind, tool_name=sample.tool_name
        )
        json_ok: bool | None = None
        if is_json:
            try:
                json.loads(result.text)
                json_ok = True
            except ValueError:
                json_ok = False
        rows.append(
            {
                "sample": sample.name,
                "command": sample.command,
                "kind": sample.kind,
                "tool_name": sample.tool_name,
                "compressor": result.compressor,
                "chars_before": len(sample.text),
                "chars_after": len(result.text),
                "tokens_before": result.original_tokens,
                "tokens_after": result.compressed_tokens,
                "saved": round(1 - result.compressed_tokens / max(1, result.original_tokens), 4),
                "error_lines": errors,
                "error_lines_kept": errors - len(missing),
                "json_valid": json_ok,
                "idempotent": again.text == result.text,
                "seconds": round(seconds, 3),
            }
        )
    return rows


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    before = sum(r["tokens_before"] for r in rows)
    after = sum(r["tokens_after"] for r in rows)
    errors = sum(r["error_lines"] for r in rows)
    kept = sum(r["error_lines_kept"] for r in rows)
    saved = 1 - after / max(1, before)
    return {
        "samples": len(rows),
        "tokens_before": before,
        "tokens_after": after,
        "saved": round(saved, 4),
        "error_lines": errors,
        "error_lines_kept": kept,
        "all_json_valid": all(r["json_valid"] is not False for r in rows),
        "all_idempotent": all(r["idempotent"] for r in rows),
        "target_saved": TARGET_SAVED,
        "meets_target": saved >= TARGET_SAVED and kept == errors,
    }


def _table(rows: list[dict[str, Any]], total: dict[str, Any]) -> str:
    head = ("sample", "compressor", "tokens before", "after", "saved", "error lines kept", "s")
    lines = [
        (
            r["sample"],
            r["compressor"],
            f"{r['tokens_before']:,}",
            f"{r['tokens_after']:,}",
            f"{r['saved']:.0%}",
            f"{r['error_lines_kept']}/{r['error_lines']}",
            f"{r['seconds']:.2f}",
        )
        for r in rows
    ]
    lines.append(
        (
            "TOTAL",
            "",
            f"{total['tokens_before']:,}",
            f"{total['tokens_after']:,}",
            f"{total['saved']:.0%}",
            f"{total['error_lines_kept']}/{total['error_lines']}",
            "",
        )
    )
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head))]

    def fmt(cells: tuple[str, ...]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs)

    return "\n".join([fmt(head), fmt(tuple("-" * w for w in widths)), *map(fmt, lines)])


def main(argv: list[str] | None = None) -> int:
    """Build the corpus, compress it, print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=_REPO / "benchmarks/results/compression.json")
    parser.add_argument("--git-repo", type=Path, default=_REPO)
    parser.add_argument("--ls-bytes", type=int, default=1_000_000)
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sharedctx-compress-") as tmp:
        samples, notes = build_corpus(Path(tmp), args.git_repo, args.ls_bytes)
    rows = measure(samples, args.encoding)
    total = _totals(rows)
    print(_table(rows, total))
    for note in notes:
        print(f"note: {note}")
    checks = "JSON valid: {}, idempotent: {}".format(
        "yes" if total["all_json_valid"] else "NO", "yes" if total["all_idempotent"] else "NO"
    )
    verdict = "meets" if total["meets_target"] else "MISSES"
    print(f"{checks}; {verdict} the target (>= {TARGET_SAVED:.0%} saved, all error lines kept)")

    results = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "encoding": args.encoding,
        "samples": rows,
        "total": total,
        "notes": notes,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if total["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
