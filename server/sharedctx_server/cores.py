"""How many server processes `--workers` asks for, and how many CPUs this process may use."""

from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = ["cpu_limit", "worker_count"]


def cpu_limit() -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup CPU quota if any."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    quota = _cgroup_quota()
    # A quota of 1.5 CPUs is worth two workers: the second fills the first one's waits.
    return max(1, min(cores, math.ceil(quota))) if quota else cores


def _cgroup_quota() -> float | None:
    """CPUs allowed by the cgroup (v2 cpu.max, or v1 cfs quota/period); None when unlimited."""
    try:
        fields = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        return int(fields[0]) / int(fields[1]) if fields[0] != "max" else None
    except (OSError, ValueError, IndexError):
        pass
    try:
        quota = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
        return quota / period if quota > 0 and period > 0 else None
    except (OSError, ValueError):
        return None


def worker_count(value: str) -> int:
    """The number of workers a `--workers` value asks for ("auto": cpu_limit()); Settings has
    checked the value already (a number >= 1 or auto)."""
    if value.strip().lower() == "auto":
        return cpu_limit()
    return int(value)
