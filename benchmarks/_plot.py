"""PNG line plots for benchmark reports (matplotlib, headless), and what the benchmarks that
plot against the budget (logs, tool_outputs) share: their common arguments and report."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def line_plot_png(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    x_label: str,
    y_label: str,
    title: str = "",
) -> bytes:
    """One line per series (name -> [(x, y), ...]) as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for name, points in series.items():
        xs, ys = zip(*points, strict=True) if points else ((), ())
        ax.plot(xs, ys, marker="o", label=name)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_ylim(0, 1)
    ax.set_xscale("log", base=2)
    ticks = sorted({x for points in series.values() for x, _ in points})
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    ax.legend()
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _int_list(text: str) -> list[int]:
    return [int(b) for b in text.split(",")]


def budget_arguments(budgets: str, plotted: str) -> argparse.ArgumentParser:
    """The parser of a budget benchmark (its module's docstring for help) with the arguments
    every one takes; `budgets` is the default list, `plotted` what its PNG shows."""
    parser = argparse.ArgumentParser(formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    # A string default goes through `type` too: args.budgets is always a list of ints.
    parser.add_argument("--budgets", default=budgets, type=_int_list, help="comma-separated")
    parser.add_argument("--token-encoding", default="o200k_base", help="the server's encoding")
    parser.add_argument("--target", help="HOST:PORT of a running server (default: start one)")
    parser.add_argument("--plot", help=f"PNG of {plotted} against budget (default: next to --out)")
    return parser


def write_budget_report(
    report: Mapping[str, Any],
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    out: str,
    plot: str | None,
    y_label: str,
) -> tuple[Path, Path]:
    """A budget benchmark's report as JSON at `out` and its series against the budget as a PNG
    at `plot` (default: next to `out`); the two paths written."""
    json_path = Path(out)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2))
    png_path = Path(plot) if plot else json_path.with_suffix(".png")
    png_path.write_bytes(line_plot_png(series, x_label="budget (tokens)", y_label=y_label))
    return json_path, png_path


def table_row(
    label: str, cells: Sequence[str], spent: Mapping[str, float], budgets: Sequence[int]
) -> str:
    """One row of a budget benchmark's table: its label, a cell per budget, mean tokens spent."""
    return label + "".join(cells) + "   " + " / ".join(f"{spent[str(b)]:.0f}" for b in budgets)
