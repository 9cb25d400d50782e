"""The compression benchmark's corpus: outputs of common commands, produced on this machine.

Every sample is what a real program printed here, run at benchmark time (the trees listed,
the packages installed and the repository's history are this machine's). Three are written
by a script instead and say so (`synthetic`): `kubectl get pods` and `docker ps` (no cluster
or daemon here; realistic rows from a fixed seed) and, when `tree` is not installed, a
`tree`-format listing of a real folder written by a few lines of Python.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

# Child processes: no colours, no pip self-check, no bytecode next to generated files.
_ENV = {
    **os.environ,
    "NO_COLOR": "1",
    "PY_COLORS": "0",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_COLOR": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "CARGO_TERM_COLOR": "never",
}

__all__ = [
    "REPETITIVE",
    "Sample",
    "WorkedTree",
    "aligned",
    "cap_lines",
    "docker_ps",
    "have",
    "kubectl_pods",
    "python",
    "run",
    "site_packages",
    "tree_listing",
    "worked_tree",
]

#: Kinds whose outputs repeat themselves; the benchmark holds each to the 60% target.
REPETITIVE = ("listing", "table", "log", "json")


@dataclass(frozen=True)
class Sample:
    """One tool output, the kind of output it is, and how the store would label it."""

    name: str
    kind: str  # listing, table, diff, search, tests, log, json, trace, source, markup
    command: str
    text: str
    entry_kind: str  # the Put's kind hint
    tool_name: str  # the Put's tool hint
    synthetic: bool = False


def run(
    cmd: list[str] | str, cwd: Path | None = None, stream: str = "stdout", raw: bool = False
) -> str:
    """Output of `cmd` (stdout, stderr or both); a failing exit status is expected for some.

    `raw` keeps carriage returns as the program wrote them (a progress bar's redraws), as a
    caller that decodes the bytes itself gets them; otherwise they read as line ends.
    """
    done = subprocess.run(
        cmd,
        cwd=cwd,
        env=_ENV,
        capture_output=True,
        timeout=900,
        shell=isinstance(cmd, str),
    )
    out, err = (
        b.decode("utf-8", errors="replace") if raw else _newlines(b)
        for b in (done.stdout, done.stderr)
    )
    if stream == "stderr":
        return err
    if stream == "both":
        return out + err
    return out


def _newlines(data: bytes) -> str:
    """`data` decoded as text mode reads it: `\r\n` and a lone `\r` end lines."""
    text = data.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def cap_lines(text: str, lines: int = 0, chars: int = 0) -> str:
    """`text` cut at a line boundary after `lines` lines or `chars` characters."""
    if lines:
        text = "".join(text.splitlines(keepends=True)[:lines])
    if chars and len(text) > chars:
        cut = text.rfind("\n", 0, chars)
        text = text[: cut + 1 if cut > 0 else chars]
    return text


def tree_listing(root: Path, limit: int) -> str:
    """What `tree` prints for `root` (folders first as tree sorts them by name)."""
    out = [str(root)]
    dirs = files = 0

    def walk(folder: Path, prefix: str) -> None:
        nonlocal dirs, files
        try:
            children = sorted(folder.iterdir(), key=lambda p: p.name)
        except OSError:
            return
        for k, child in enumerate(children):
            if len(out) >= limit:
                return
            last = k == len(children) - 1
            out.append(f"{prefix}{'└── ' if last else '├── '}{child.name}")
            if child.is_dir() and not child.is_symlink():
                dirs += 1
                walk(child, prefix + ("    " if last else "│   "))
            else:
                files += 1

    walk(root, "")
    return "\n".join([*out, "", f"{dirs} directories, {files} files"]) + "\n"


def kubectl_pods(seed: int = 7, n: int = 240) -> str:
    """`kubectl get pods -A` as a cluster would print it (synthetic: no cluster here)."""
    rng = random.Random(seed)
    rows = [("NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE")]
    apps = ["api", "web", "worker", "scheduler", "cache", "ingest", "billing", "search"]
    for _ in range(n):
        app = rng.choice(apps)
        ns = rng.choice(["prod", "prod", "prod", "staging", "kube-system"])
        pod = f"{app}-{rng.randrange(16**9):09x}-{rng.randrange(36**5):05x}"
        status, ready, restarts = "Running", "1/1", str(rng.choice([0, 0, 0, 0, 1, 2]))
        roll = rng.random()
        if roll < 0.02:
            status, ready, restarts = "CrashLoopBackOff", "0/1", f"{rng.randint(5, 40)} (2m ago)"
        elif roll < 0.04:
            status, ready = "Pending", "0/1"
        elif roll < 0.07:
            status, ready = "Completed", "0/1"
        elif roll < 0.08:
            status, ready = "Error", "0/1"
        age = f"{rng.randint(1, 30)}d" if rng.random() < 0.7 else f"{rng.randint(1, 23)}h"
        rows.append((ns, pod, ready, status, restarts, age))
    return aligned(rows, gap=3)


def docker_ps(seed: int = 11, n: int = 80) -> str:
    """`docker ps -a` as a daemon would print it (synthetic: no daemon here)."""
    rng = random.Random(seed)
    rows = [("CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES")]
    images = ["postgres:16", "redis:7", "nginx:1.27", "app/api:2.3.1", "app/worker:2.3.1"]
    for i in range(n):
        image = rng.choice(images)
        created = f"{rng.randint(2, 50)} hours ago"
        if rng.random() < 0.1:
            status, ports = f"Exited ({rng.choice([1, 137, 0])}) {rng.randint(1, 9)} hours ago", ""
        else:
            status = f"Up {rng.randint(1, 50)} hours"
            ports = f"0.0.0.0:{8000 + i}->80/tcp" if "nginx" in image or "api" in image else ""
        name = f"{image.split(':')[0].split('/')[-1]}_{i}"
        command = '"docker-entrypoint.s…"'
        rows.append((f"{rng.randrange(16**12):012x}", image, command, created, status, ports, name))
    return aligned(rows, gap=3)


def aligned(rows: list[tuple[str, ...]], gap: int) -> str:
    """Rows padded into columns `gap` spaces apart, as kubectl and docker print tables."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return (
        "\n".join(
            (" " * gap).join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        + "\n"
    )


def python() -> str:
    """This interpreter."""
    return sys.executable


@dataclass(frozen=True)
class WorkedTree:
    """A repository in the middle of a change, and what changed in it (relative paths)."""

    root: Path
    edited: list[str]
    deleted: list[str]
    staged: list[str]  # new files, added to the index
    untracked: list[str]


def worked_tree(root: Path, files: list[str], new_folder: str) -> WorkedTree:
    """A repository at `root` in the middle of a change: `files` (relative paths) committed,
    then a third of them edited, about one in eleven deleted, twelve new files staged in
    `new_folder` and six notes left untracked in `scratch/` (what `git status` shows an agent
    halfway through a refactor). Needs git."""
    for i, name in enumerate(files):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {i}\n", encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    run([*git, "init", "-q"])
    run([*git, "add", "-A"])
    run([*git, "commit", "-q", "-m", "base"])
    edited = [name for i, name in enumerate(files) if i % 3 == 0]
    deleted = [name for i, name in enumerate(files) if i % 3 != 0 and i % 11 == 1]
    for name in edited:
        (root / name).write_text(f"# {files.index(name)} edited\n", encoding="utf-8")
    for name in deleted:
        (root / name).unlink()
    staged = [f"{new_folder}/new_part_{i}.py" for i in range(12)]
    untracked = [f"scratch/notes_{i}.md" for i in range(6)]
    for name, text in [*((n, "# new\n") for n in staged), *((n, "notes\n") for n in untracked)]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    run([*git, "add", new_folder])
    return WorkedTree(root, edited, deleted, staged, untracked)


def site_packages() -> Path:
    """This interpreter's site-packages."""
    return Path(sysconfig.get_paths()["purelib"])


def have(program: str) -> bool:
    """Whether `program` is installed."""
    return shutil.which(program) is not None
