"""Compression benchmark: real tool outputs made on this machine, compressed as Put would.

    python -m benchmarks.compression [--out benchmarks/results/compression.json]
        [--plots benchmarks/results/compression] [--baseline REV] [--repo PATH]
        [--target HOST:PORT | --local] [--encoding o200k_base] [--kinds listing,table]
        [--save-corpus DIR]

The corpus (benchmarks/compression_samples.py) is generated at run time by running common
commands here: listings of several trees (`ls -l`, `ls -lR`, `find`, `du`, `tree`), tables
(`ps`, `pip list`, `df`, `dpkg -l`, a TSV, `ss`, `-X importtime`, and synthetic `kubectl get
pods` / `docker ps`), `git log` / `git show` / `git diff` of `--repo`, test runs (pytest on a
failing file and on numpy's tests, unittest on the standard library's JSON tests and on a
failing file, node --test, cargo test), logs (a service's logging, make with gcc warnings,
a verbose pip build), JSON (pip inspect, pip list, npm ls), stack traces (Python, Node, Java),
sources (argparse.py, jquery.js, stdio.h) and markup (a Markdown README, a rustdoc page).

Per sample and per kind: tokens before and after (the `--encoding` tiktoken encoding), share
saved, error lines in the original (`line_has_error`; inside JSON lines also end at `\\n`
escapes) and how many the compressed form keeps, plus the checks Put relies on: JSON still
parses, compressing the compressed form changes nothing. Through the API (a private Valkey
and server unless `--target`; `--local` skips it), every sample is Put and read back: Get
must return the same compressed form and, with full=true, the original byte for byte.
`--baseline REV` also compresses the corpus with the compressor as it was at git revision
REV, for the before/after columns. The 1 MiB outputs are timed apart (best of three runs of
compress(), token counting included, on this machine as loaded at the time).

Targets: >= 60% fewer tokens on every kind that repeats itself (listings, tables, logs,
JSON), >= 70% over the whole corpus, every error line kept, the full form byte-identical,
a 1 MiB output compressed in <= 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .compression_corpus import Sample, run
from .compression_report import TARGET_TOTAL, by_kind, plots, table, totals
from .compression_samples import collect

_REPO = Path(__file__).resolve().parent.parent
_MIB = 1 << 20
TARGET_SECONDS_PER_MIB = 0.5
_NAMESPACE = "bench/compression"
_API_TIMEOUT = 120.0  # seconds a Put may take on a loaded machine (it embeds, too)


def load_baseline(rev: str, repo: Path, tmp: Path) -> Callable[..., Any]:
    """`compress` of the server package as it was at git revision `rev` of `repo`.

    The whole package is taken (the compressors import the Fit library's helpers), renamed
    so that it imports itself rather than the package installed here."""
    folder = "server/sharedctx_server/"
    names = run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, folder]).split()
    if not any(n.startswith(folder + "compress/") for n in names):
        raise SystemExit(f"--baseline {rev}: no {folder}compress/ at that revision")
    root = tmp / _BASELINE
    for name in names:
        if not name.endswith(".py"):
            continue
        source = run(["git", "-C", str(repo), "show", f"{rev}:{name}"])
        target = root / Path(name).relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.replace("sharedctx_server", _BASELINE), encoding="utf-8")
    sys.path.insert(0, str(tmp))
    try:
        module = importlib.import_module(f"{_BASELINE}.compress")
    finally:
        sys.path.remove(str(tmp))
    return module.compress  # type: ignore[no-any-return]


# The baseline package's name, beside the installed sharedctx_server.
_BASELINE = "baseline_sharedctx_server"


def measure(
    samples: list[Sample], encoding: str, baseline: Callable[..., Any] | None
) -> list[dict[str, Any]]:
    """Compress each sample (and with the baseline) and check what Put relies on."""
    from sharedctx_server.compress import compress, line_has_error, missing_error_lines
    from sharedctx_server.compress.error_lines import split_units
    from sharedctx_server.compress.json_compress import looks_like_json
    from sharedctx_server.tokens import TokenCounter

    count = TokenCounter(encoding).count
    rows: list[dict[str, Any]] = []
    for s in samples:
        hints = {"kind": s.entry_kind, "tool_name": s.tool_name}
        t0 = time.perf_counter()
        result = compress(s.text, count_tokens=count, **hints)
        seconds = time.perf_counter() - t0
        is_json = looks_like_json(s.text)
        errors = sum(1 for u in split_units(s.text, escaped_newlines=is_json) if line_has_error(u))
        missing = missing_error_lines(s.text, result.text, escaped_newlines=is_json)
        again = compress(result.text, count_tokens=count, **hints)
        json_ok: bool | None = None
        if is_json:
            try:
                json.loads(result.text, strict=False)
                json_ok = True
            except ValueError:
                json_ok = False
        row: dict[str, Any] = {
            "sample": s.name,
            "kind": s.kind,
            "command": s.command,
            "synthetic": s.synthetic,
            "entry_kind": s.entry_kind,
            "tool_name": s.tool_name,
            "compressor": result.compressor,
            "chars_before": len(s.text),
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
        if baseline is not None:
            old = baseline(s.text, count_tokens=count, **hints)
            row["baseline_compressor"] = old.compressor
            row["baseline_tokens_after"] = old.compressed_tokens
            row["baseline_saved"] = round(
                1 - old.compressed_tokens / max(1, old.original_tokens), 4
            )
        rows.append(row)
    return rows


def timing(samples: list[Sample], encoding: str, runs: int = 5) -> list[dict[str, Any]]:
    """compress() on each output of about 1 MiB, token counting included: the best of `runs`
    in wall-clock time and in this process's CPU time (less disturbed by other work on a
    loaded machine)."""
    from sharedctx_server.compress import compress
    from sharedctx_server.tokens import TokenCounter

    count = TokenCounter(encoding).count
    out = []
    for s in samples:
        size = len(s.text.encode("utf-8"))
        if size < 0.8 * _MIB:
            continue
        wall, cpu, counting = [], [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            compress(s.text, count_tokens=count, kind=s.entry_kind, tool_name=s.tool_name)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            t0 = time.perf_counter()
            count(s.text)
            counting.append(time.perf_counter() - t0)
        per_mib = min(wall) * _MIB / size
        out.append(
            {
                "sample": s.name,
                "bytes": size,
                "best_seconds": round(min(wall), 3),
                "best_cpu_seconds": round(min(cpu), 3),
                "seconds_per_mib": round(per_mib, 3),
                "cpu_seconds_per_mib": round(min(cpu) * _MIB / size, 3),
                "token_count_seconds": round(min(counting), 3),
                "meets_target": per_mib <= TARGET_SECONDS_PER_MIB,
            }
        )
    return out


async def through_api(
    samples: list[Sample], rows: list[dict[str, Any]], target: str | None
) -> dict[str, Any]:
    """Put every sample through a server and read both forms back."""
    from sharedctx import AsyncClient

    from ._procs import redis_server, sharedctx_server

    async with contextlib.AsyncExitStack() as stack:
        if target is None:
            valkey = await stack.enter_async_context(redis_server())
            # The corpus holds outputs of about 1 MiB: allow 4 MiB a content here.
            limit = ("--max-content-bytes", str(4 * _MIB))
            port = await stack.enter_async_context(sharedctx_server(valkey.url, *limit))
            target = f"127.0.0.1:{port}"
        same_full = same_compressed = 0
        failures: list[str] = []
        async with AsyncClient(target) as client:
            await client.clear(_NAMESPACE)
            for i, (s, row) in enumerate(zip(samples, rows, strict=True)):
                key = f"sample/{i:03d}"
                try:
                    put = await client.put(
                        _NAMESPACE,
                        key,
                        s.text,
                        kind=s.entry_kind,
                        tool_name=s.tool_name,
                        timeout=_API_TIMEOUT,
                    )
                except Exception as exc:  # noqa: BLE001 - reported, not fatal
                    failures.append(f"{s.name}: Put failed: {exc}")
                    continue
                full = await client.get(_NAMESPACE, key, full=True, timeout=_API_TIMEOUT)
                short = await client.get(_NAMESPACE, key, timeout=_API_TIMEOUT)
                same_full += full.content.encode("utf-8") == s.text.encode("utf-8")
                same_compressed += (
                    put.compressor == row["compressor"]
                    and put.compressed_tokens == row["tokens_after"]
                    and short.compressor == row["compressor"]
                )
            await client.clear(_NAMESPACE)
    return {
        "samples": len(samples),
        "full_form_byte_identical": same_full,
        "compressed_form_as_local": same_compressed,
        "failures": failures,
    }


def main(argv: list[str] | None = None) -> int:
    """Build the corpus, compress it, print the tables and write the JSON results and PNGs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=_REPO / "benchmarks/results/compression.json")
    parser.add_argument("--plots", type=Path, default=_REPO / "benchmarks/results/compression")
    parser.add_argument("--baseline", help="git revision whose compressor gives 'before'")
    parser.add_argument("--repo", type=Path, default=_REPO, help="git repository for diffs")
    parser.add_argument("--target", help="server to Put through (default: a private one)")
    parser.add_argument("--local", action="store_true", help="skip the round trip via the API")
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--kinds", help="only these kinds, comma-separated")
    parser.add_argument("--save-corpus", type=Path, help="also write each sample's text here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sharedctx-compress-") as tmp:
        samples, notes = collect(Path(tmp), args.repo)
        if args.kinds:
            wanted = set(args.kinds.split(","))
            samples = [s for s in samples if s.kind in wanted]
        baseline = load_baseline(args.baseline, args.repo, Path(tmp)) if args.baseline else None
        rows = measure(samples, args.encoding, baseline)
    if args.save_corpus:
        args.save_corpus.mkdir(parents=True, exist_ok=True)
        for i, s in enumerate(samples):
            (args.save_corpus / f"{i:02d}-{s.kind}.txt").write_text(s.text, encoding="utf-8")
    kinds = by_kind(rows)
    total = {**totals(rows), "target_saved": TARGET_TOTAL}
    total["meets_target"] = total["saved"] >= TARGET_TOTAL
    if baseline is not None:
        total["baseline_saved"] = totals(rows, "baseline_tokens_after")["saved"]
    speed = timing(samples, args.encoding)
    api = None if args.local else asyncio.run(through_api(samples, rows, args.target))
    charts = plots(rows, args.plots)

    print(table(rows, kinds))
    print()
    load = os.getloadavg()[0]
    for t in speed:
        print(
            f"1 MiB timing: {t['sample']}: {t['best_seconds']:.3f} s for {t['bytes']:,} bytes "
            f"({t['seconds_per_mib']:.3f} s/MiB; CPU {t['cpu_seconds_per_mib']:.3f} s/MiB; "
            f"counting the original's tokens alone {t['token_count_seconds']:.3f} s; "
            f"load average {load:.1f} on {os.cpu_count()} CPUs)"
        )
    if api is not None:
        print(
            f"through the API: full form byte-identical {api['full_form_byte_identical']}/"
            f"{api['samples']}, compressed form as computed locally "
            f"{api['compressed_form_as_local']}/{api['samples']}"
        )
        for failure in api["failures"]:
            print(f"  {failure}")
    for note in notes:
        print(f"note: {note}")
    lost = total["error_lines"] - total["error_lines_kept"]
    checks = {
        "every repetitive kind >= 60%": all(k["meets_target"] is not False for k in kinds),
        f"total >= {TARGET_TOTAL:.0%}": total["meets_target"],
        "0 error lines lost": lost == 0,
        "JSON valid": total["all_json_valid"],
        "idempotent": total["all_idempotent"],
        "1 MiB <= 0.5 s": all(t["meets_target"] for t in speed),
    }
    if api is not None:
        checks["full form byte-identical"] = api["full_form_byte_identical"] == api["samples"]
    for name, ok in checks.items():
        print(f"{'meets' if ok else 'MISSES'}: {name}")
    results = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "encoding": args.encoding,
        "baseline": args.baseline,
        "samples": rows,
        "kinds": kinds,
        "total": total,
        "timing": speed,
        "api": api,
        "checks": checks,
        "plots": [str(p) for p in charts],
        "notes": notes,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {len(charts)} charts in {args.plots}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
