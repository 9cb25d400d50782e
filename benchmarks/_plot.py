"""PNG line plots for benchmark reports (matplotlib, headless)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence


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
