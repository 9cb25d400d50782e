"""Tables, totals and PNG charts of the compression benchmark's rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .compression_corpus import REPETITIVE

__all__ = ["TARGET_KIND", "TARGET_TOTAL", "by_kind", "plots", "table", "totals"]

TARGET_KIND = 0.60  # fewer tokens on every kind that repeats itself
TARGET_TOTAL = 0.70  # fewer tokens over the whole corpus


def _saved(before: int, after: int) -> float:
    return 1 - after / before if before else 0.0


def totals(rows: Sequence[dict[str, Any]], key: str = "tokens_after") -> dict[str, Any]:
    """Token sums, share saved and the checks over `rows`."""
    before = sum(r["tokens_before"] for r in rows)
    after = sum(r[key] for r in rows if r.get(key) is not None)
    return {
        "samples": len(rows),
        "tokens_before": before,
        "tokens_after": after,
        "saved": round(_saved(before, after), 4),
        "error_lines": sum(r["error_lines"] for r in rows),
        "error_lines_kept": sum(r["error_lines_kept"] for r in rows),
        "all_json_valid": all(r["json_valid"] is not False for r in rows),
        "all_idempotent": all(r["idempotent"] for r in rows),
    }


def by_kind(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per kind of output, with its target (repetitive kinds only)."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        kinds.setdefault(row["kind"], []).append(row)
    out = []
    for kind, members in kinds.items():
        summary = {"kind": kind, **totals(members)}
        if all(r.get("baseline_tokens_after") is not None for r in members):
            summary["baseline_saved"] = totals(members, "baseline_tokens_after")["saved"]
        target = TARGET_KIND if kind in REPETITIVE else None
        summary["target_saved"] = target
        summary["meets_target"] = None if target is None else summary["saved"] >= target
        out.append(summary)
    return out


def _format(head: tuple[str, ...], lines: list[tuple[str, ...]], left: int) -> str:
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head))]

    def fmt(cells: tuple[str, ...]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in pairs)

    return "\n".join([fmt(head), fmt(tuple("-" * w for w in widths)), *map(fmt, lines)])


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def table(rows: Sequence[dict[str, Any]], kinds: Sequence[dict[str, Any]]) -> str:
    """The per-sample table, then the per-kind one."""
    baseline = any(r.get("baseline_tokens_after") is not None for r in rows)
    head = ("sample", "kind", "compressor", "tokens", "after", "saved")
    head += ("before: saved", "by") if baseline else ()
    head += ("errors kept", "s")
    lines = []
    for r in rows:
        cells = (
            r["sample"] + (" *" if r["synthetic"] else ""),
            r["kind"],
            r["compressor"],
            f"{r['tokens_before']:,}",
            f"{r['tokens_after']:,}",
            _pct(r["saved"]),
        )
        if baseline:
            cells += (_pct(r.get("baseline_saved")), r.get("baseline_compressor") or "")
        cells += (f"{r['error_lines_kept']}/{r['error_lines']}", f"{r['seconds']:.2f}")
        lines.append(cells)
    samples = _format(head, lines, 3)
    khead = ("kind", "samples", "tokens", "after", "saved")
    khead += ("before: saved",) if baseline else ()
    khead += ("target", "errors kept")
    klines = []
    everything = {"kind": "TOTAL", **totals(rows), "target_saved": TARGET_TOTAL}
    if baseline:
        everything["baseline_saved"] = totals(rows, "baseline_tokens_after")["saved"]
    for k in [*kinds, everything]:
        cells = (k["kind"], str(k["samples"]), f"{k['tokens_before']:,}", f"{k['tokens_after']:,}")
        cells += (_pct(k["saved"]),)
        if baseline:
            cells += (_pct(k.get("baseline_saved")),)
        target = k.get("target_saved")
        cells += ("" if target is None else f">= {target:.0%}",)
        cells += (f"{k['error_lines_kept']}/{k['error_lines']}",)
        klines.append(cells)
    note = "* synthetic sample (see benchmarks/compression_corpus.py)"
    return "\n\n".join([samples, note, _format(khead, klines, 1)])


def plots(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """A PNG per kind (tokens saved per sample, before and after) and one of all kinds."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    kinds = by_kind(rows)
    groups = {k["kind"]: [r for r in rows if r["kind"] == k["kind"]] for k in kinds}
    charts = [(kind, [r["sample"] for r in members], members) for kind, members in groups.items()]
    summary = [{"sample": k["kind"], **k} for k in kinds]
    for k, s in zip(kinds, summary, strict=True):
        s["baseline_saved"] = k.get("baseline_saved")
    charts.append(("all kinds", [k["kind"] for k in kinds], summary))
    for title, labels, members in charts:
        fig, ax = plt.subplots(figsize=(7.2, 0.45 * len(labels) + 1.6), dpi=110)
        ys = range(len(labels))
        after = [m["saved"] * 100 for m in members]
        if any(m.get("baseline_saved") is not None for m in members):
            before = [(m.get("baseline_saved") or 0.0) * 100 for m in members]
            ax.barh([y + 0.2 for y in ys], before, height=0.4, label="before", color="#bbbbbb")
            ax.barh([y - 0.2 for y in ys], after, height=0.4, label="after", color="#3572a5")
            ax.legend(loc="lower right")
        else:
            ax.barh(list(ys), after, height=0.6, color="#3572a5")
        if title in REPETITIVE or title == "all kinds":
            target = TARGET_TOTAL if title == "all kinds" else TARGET_KIND
            ax.axvline(target * 100, color="#c0392b", linestyle="--", linewidth=1)
        ax.set_yticks(list(ys), labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("tokens saved (%)")
        ax.set_title(f"compressed form: {title}")
        ax.grid(True, axis="x", alpha=0.3)
        fig.tight_layout()
        path = out_dir / f"compression-{title.replace(' ', '-')}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written
