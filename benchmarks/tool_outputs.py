"""Fit on real tool output: does the returned text answer an agent's question? Through the API.

    python -m benchmarks.tool_outputs --out tool_outputs.json
        [--budgets 300,800,2000] [--seed 13]
        [--target HOST:PORT]  (default: start a server on a private Valkey)
        [--plot tool_outputs.png]  (default: next to --out)

The outputs are produced on this machine when the benchmark runs, by the real programs: a
failing pytest run, a Python traceback, gcc on a broken C file, `ls -lR` of the grpc package,
`git log --stat` of this repository's first 60 commits, `git status` of a repository halfway
through a change, `grep -rn` over a standard library package, `curl -v` against a local file
server, `find` over the standard library, `pip list`, `ps aux`, the interpreter's build
configuration as one line of JSON (as an API answers) and a few thousand lines of a job
scheduler's log. An output whose program is missing is skipped, and the reason printed.
Everything is stored the way an agent stores it: one namespace, each output a `tool_output`
entry with its `tool_name`, beside four short chat messages.

Each output comes with the questions an agent would ask of it ("which test failed and why?",
"which commit changed <file>?", "what version of <package> is installed?"). Their answers are
never written here: they are read at run time from the output itself or from the machine
(`os.stat`, `git log -- <path>`, `importlib.metadata`), so the benchmark runs anywhere. A
question is answered when the text Fit returns (`include_content`) holds every part of one of
its answers (some must share a line: a file's name and its size). Fit runs in three modes: the
default (compressed forms and excerpts), `form: full` and `excerpts: false` (whole entries
only). Every returned text is counted again with the server's token encoding: the budget must
never be exceeded.

The figures are this machine's: other packages, another history or another compiler give other
outputs and other questions, so compare runs on one machine only.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import importlib.metadata
import importlib.util
import os
import random
import re
import shutil
import subprocess
import sysconfig
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sharedctx import AsyncClient, PutItem
from sharedctx_server.tokens import TokenCounter

from . import compression_inputs as inputs
from ._plot import budget_arguments, table_row, write_budget_report
from ._procs import target_or_own_server
from .compression_corpus import cap_lines, have, python, run, site_packages, worked_tree
from .quality import Progress

NAMESPACE = "bench/tool-outputs"
MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "full": {"form": "full"},
    "whole_entries": {"excerpts": False},
}
FIND_LINES = 3000  # the size of listing an agent's shell tool would typically show
LOG_ROUNDS = 60  # about 3,000 lines of scheduler log
TRACE_DEPTH = 24  # nested calls above the raise

# The conversation around the tool calls: it shares words with the questions, as a real one does.
MESSAGES = (
    ("user", "CI went red overnight and the job scheduler crashed. Can you look into it?"),
    ("assistant", "I'll run the tests, compile the C worker and read the scheduler log."),
    ("user", "Also check which packages and versions we have installed; we may need to pin one."),
    ("assistant", "Collected pip list, the git history and listings of grpc and the stdlib."),
)

# A C file with one real compile error (a struct member that does not exist), compiled after
# the compression corpus's sources so that the error comes after a screenful of warnings.
BROKEN_C = """
#include <stdio.h>

struct config { const char *host; int port; int retries; };

static int connect_with(const struct config *c) {
    return c->port + c->retries * c->timeout_ms;
}

int main(void) {
    struct config c = { "db.internal", 5432, 3 };
    printf("%d\\n", connect_with(&c));
    return 0;
}
"""

# A job scheduler's log: INFO noise from six recurring jobs, one run that fails with a real
# zlib error (logged with its traceback) and a one-off job at the end. The clock is fixed so
# that the log is the same on every run.
SCHEDULER_LOG = """
import logging
import random
import sys
import time
import zlib


class FixedClock(logging.Filter):
    def __init__(self):
        super().__init__()
        self.now = 1767261600.0

    def filter(self, record):
        self.now += 0.37
        record.created, record.msecs = self.now, (self.now % 1) * 1000
        return True


handler = logging.StreamHandler(sys.stdout)
handler.addFilter(FixedClock())
formatter = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
formatter.converter = time.gmtime
handler.setFormatter(formatter)
logging.basicConfig(level=logging.INFO, handlers=[handler])

JOBS = ["export-invoices", "sync-crm-contacts", "purge-sessions", "send-digests",
        "rebuild-search-index", "rotate-api-keys"]
rng = random.Random(7)
rounds = int(sys.argv[1])
for r in range(1, rounds + 1):
    for job in JOBS:
        log = logging.getLogger(f"scheduler.{job}")
        log.info("job %s started (run %d)", job, r)
        rows = 0
        for batch in range(rng.randint(3, 8)):
            n = rng.randint(50, 500)
            rows += n
            log.info("%s: batch %d done (%d rows)", job, batch + 1, n)
        if job == "rebuild-search-index" and r == rounds * 2 // 3:
            try:
                zlib.decompress(b"segment-7f: " + bytes(range(32)))
            except zlib.error:
                log.exception("job %s failed after %d rows", job, rows)
            continue
        log.info("job %s finished: %d rows in %.1fs", job, rows, rng.uniform(0.5, 30))
log = logging.getLogger("scheduler.compact-db")
log.info("job compact-db started (run 1)")
log.info("job compact-db finished: %d rows in %.1fs", rng.randint(1000, 9000), rng.uniform(30, 90))
"""


@dataclass(frozen=True)
class Output:
    """One tool output as stored: its key, the program that printed it and what it printed."""

    key: str
    tool_name: str
    command: str
    text: str


@dataclass(frozen=True)
class Question:
    """A query and its answers: answered when every part of any one answer is in the text."""

    source: str  # the key of the output that holds the answer
    query: str
    answers: tuple[tuple[str, ...], ...]
    same_line: bool = False  # an answer's parts must share one line (a file name and its size)


class Skip(Exception):
    """An output that cannot be produced on this machine, and why."""


Produced = tuple[Output, list[Question]]


def normalise(text: str) -> str:
    """Whitespace runs as one space, ends trimmed (compressed forms may realign columns)."""
    return " ".join(text.split())


def answered(question: Question, text: str) -> bool:
    """Whether `text` holds every part of one of the question's answers."""
    if question.same_line:
        lines = [normalise(line) for line in text.splitlines()]
        return any(
            any(all(normalise(part) in line for part in answer) for line in lines)
            for answer in question.answers
        )
    haystack = normalise(text)
    return any(all(normalise(part) in haystack for part in answer) for answer in question.answers)


def pick(items: Sequence[str], k: int, seed: int, salt: str) -> list[str]:
    """`k` of `items` (sorted first), the same ones for the same seed and items."""
    pool = sorted(items)
    return sorted(random.Random(f"{seed}/{salt}").sample(pool, k=min(k, len(pool))))


def write(path: Path, text: str) -> Path:
    """`text` written to `path` (folders made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- The outputs and their questions. Each takes a scratch folder and the seed. ---


def pytest_failures(tmp: Path, seed: int) -> Produced:
    """pytest -v -rf on a small project with five failing tests (of 45)."""
    if importlib.util.find_spec("pytest") is None:
        raise Skip("pytest is not installed")
    test = write(tmp / "orders" / "test_orders.py", inputs.FAILING_PYTEST)
    command = "python -m pytest -v -rf test_orders.py"
    text = run(
        [python(), "-m", "pytest", "-v", "-rf", "-p", "no:cacheprovider", test.name],
        cwd=test.parent,
        stream="both",
    )
    out = Output("tool/pytest-orders", "pytest", command, text)
    # `FAILED path::name - Type: message`, cut at the terminal's width with "...".
    failures = [
        (m[1], m[2].strip())
        for m in re.finditer(r"^FAILED \S+::(\S+) - ([\w.]+: .*)$", text, re.MULTILINE)
    ]
    if not failures:
        raise Skip("pytest reported no failure with an exception type")
    kinds = tuple((name, message.split(":", 1)[0]) for name, message in failures)
    questions = [Question(out.key, "which test failed and why?", kinds)]
    # "Why did X fail?" of a failure whose summary is whole, so the answer is its message.
    whole = [f for f in failures if not f[1].endswith("...")]
    name, message = (whole or failures)[-1]
    answer = message.removesuffix("...")
    questions.append(Question(out.key, f"why did {name} fail?", ((answer,),)))
    totals = re.findall(r"^=+ (.*?) in [\d.]+s", text, re.MULTILINE)
    failed = re.search(r"\d+ failed", totals[-1]) if totals else None
    if failed:
        questions.append(
            Question(out.key, "how many tests failed in the pytest run?", ((failed[0],),))
        )
    return out, questions


def python_traceback(tmp: Path, seed: int) -> Produced:
    """A script that fails at the bottom of 24 nested calls, with a chained cause."""
    source = inputs.chain_script(TRACE_DEPTH)
    script = write(tmp / "trace" / "pipeline.py", source)
    text = run([python(), str(script)], stream="stderr")
    out = Output("tool/python-pipeline", "python", "python pipeline.py", text)
    printed = [line for line in text.splitlines() if line.strip()]
    if not printed:
        raise Skip("python printed no traceback")
    last = printed[-1]
    # We wrote the script, so we know the line that raises (collect checks the trace has it).
    raise_line = 1 + next(i for i, line in enumerate(source.splitlines()) if "raise " in line)
    where = f'File "{script}", line {raise_line}'
    kind = last.split(":", 1)[0]
    return out, [
        Question(out.key, "what error did pipeline.py crash with?", ((last,),)),
        Question(out.key, f"which file and line raised the {kind}?", ((where,),)),
    ]


def gcc_errors(tmp: Path, seed: int) -> Produced:
    """gcc -Wall -Wextra -c over 28 files: warnings, then an error in worker.c (gcc 14 and
    later also reject main.c's implicit declaration; the first error is the answer)."""
    if not have("gcc"):
        raise Skip("gcc is not installed")
    folder = tmp / "cbuild"
    for name, source in inputs.C_SOURCES.items():
        write(folder / name, source)
    write(folder / "worker.c", BROKEN_C)
    names = sorted(p.name for p in folder.glob("*.c"))
    # worker.c sorts last, so its error comes after the other files' warnings.
    text = run(["gcc", "-Wall", "-Wextra", "-c", *names], cwd=folder, stream="both")
    out = Output("tool/gcc-build", "gcc", "gcc -Wall -Wextra -c *.c", text)
    error = re.search(r"^(\S+?:\d+:\d+): (?:fatal )?error: (.+)$", text, re.MULTILINE)
    if error is None:
        raise Skip("gcc reported no error")
    return out, [
        Question(out.key, "what error did gcc report?", ((error[2],),)),
        Question(out.key, "which file and line does the gcc error point to?", ((error[1],),)),
    ]


def _files(root: Path) -> list[Path]:
    """The regular files under `root` (no symlinks), sorted."""
    return sorted(
        Path(folder) / name
        for folder, _, names in os.walk(root)
        for name in names
        if (Path(folder) / name).is_file() and not (Path(folder) / name).is_symlink()
    )


def ls_package(tmp: Path, seed: int) -> Produced:
    """ls -lR of the grpc package in site-packages."""
    package = site_packages() / "grpc"
    if not package.is_dir():
        raise Skip(f"no grpc package in {site_packages()}")
    text = run(["ls", "-lR", str(package)])
    out = Output("tool/ls-grpc", "ls", f"ls -lR {package}", text)
    files = _files(package)
    # Only files whose name is unique in the tree: "how big is X?" must have one answer.
    once = Counter(f.name for f in files)
    by_size = sorted(
        (f for f in files if once[f.name] == 1), key=lambda f: (-f.stat().st_size, f.name)
    )
    # The largest file, and the largest Python module (another folder, another kind of line).
    chosen = by_size[:1] + [f for f in by_size[1:] if f.suffix == ".py"][:1]
    questions = [
        Question(out.key, f"how big is {f.name}?", ((f.name, str(f.stat().st_size)),), True)
        for f in chosen
    ]
    # The subfolder with the most files: its listing is the longest block of the output.
    subs = [p for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"]
    if subs:
        sub = min(subs, key=lambda p: (-sum(1 for c in p.iterdir() if c.is_file()), p.name))
        # Two of its own names: `__init__.py` is in every folder, so it would prove nothing.
        names = sorted(
            n for n in os.listdir(sub) if (sub / n).is_file() and not n.startswith("__")
        )[:2]
        if len(names) == 2:
            query = f"what files are in the {package.name}/{sub.name} directory?"
            questions.append(Question(out.key, query, (tuple(names),)))
    # Asked without its name: the answer is whichever file the sizes say is the largest.
    largest = max(f.stat().st_size for f in files)
    answers = tuple((f.name,) for f in files if f.stat().st_size == largest)
    questions.append(
        Question(out.key, f"which is the largest file in the {package.name} package?", answers)
    )
    return out, questions


def git_history(tmp: Path, seed: int) -> Produced:
    """git log --stat of the first 60 commits of the repository this benchmark is in: fixed
    text, where the newest 60 changed with every commit and came to quote this benchmark's
    own questions ("which file and line does the gcc error point to?")."""
    if not have("git"):
        raise Skip("git is not installed")
    here = Path(__file__).resolve().parent
    top = subprocess.run(
        ["git", "-C", str(here), "rev-parse", "--show-toplevel"], capture_output=True, text=True
    )
    if top.returncode != 0:
        raise Skip(f"{here} is not in a git repository")
    repo = Path(top.stdout.strip())
    oldest = run(["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"]).split()
    end = oldest[min(len(oldest), 60) - 1]
    text = run(["git", "-C", str(repo), "log", "--stat", "-n", "60", end])
    out = Output("tool/git-log", "git", f"git log --stat -n 60 {end[:12]}", text)
    touched = Counter(
        line
        for line in run(
            ["git", "-C", str(repo), "log", "-n", "60", "--format=", "--name-only", end]
        ).splitlines()
        if line
    )
    basenames = Counter(Path(p).name for p in touched)
    # A path one commit of the 60 touched, named unambiguously by its file name, which --stat
    # shows even when it shortens a long path to ".../name".
    candidates = [
        p
        for p, n in touched.items()
        if n == 1 and basenames[Path(p).name] == 1 and not Path(p).name.startswith("__")
        and re.search(rf"(?:^ |/){re.escape(Path(p).name)} +\|", text, re.MULTILINE)
    ]  # fmt: skip
    if not candidates:
        raise Skip("no file changed by exactly one of the first 60 commits")
    questions = []
    for path in pick(candidates, 3, seed, "git"):
        sha = run(["git", "-C", str(repo), "log", "-n1", "--format=%H", end, "--", path]).strip()
        questions.append(Question(out.key, f"which commit changed {Path(path).name}?", ((sha,),)))
    return out, questions


def git_status(tmp: Path, seed: int) -> Produced:
    """git status of a repository halfway through a change to copies of some standard library
    packages (compression_corpus.worked_tree): edits, deletions, new files staged."""
    if not have("git"):
        raise Skip("git is not installed")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    packages = ("asyncio", "email", "http", "importlib", "json", "logging", "unittest", "xml")
    files = [
        f"src/{path.relative_to(stdlib)}"
        for package in packages
        for path in sorted((stdlib / package).rglob("*.py"))
    ]
    if not files:
        raise Skip(f"no standard library packages under {stdlib}")
    tree = worked_tree(tmp / "status-tree", files, "src/email/parts")
    text = run(["git", "-C", str(tree.root), "status"])
    out = Output("tool/git-status", "git", "git status", text)
    # Asked of every path of one change, named by file name: `__init__.py` would name none.
    once = Counter(Path(p).name for p in files + tree.staged)
    questions = []
    for query, paths in (
        ("which files were deleted?", tree.deleted),
        ("which new files are staged for commit?", tree.staged),
    ):
        names = tuple(Path(p).name for p in paths if once[Path(p).name] == 1)
        if names:
            questions.append(Question(out.key, query, (names,)))
    return out, questions


def grep_definitions(tmp: Path, seed: int) -> Produced:
    """grep -rn 'def ' over the standard library's email package: where each function is."""
    if not have("grep"):
        raise Skip("grep is not installed")
    package = Path(sysconfig.get_paths()["stdlib"]) / "email"
    text = run(["grep", "-rn", "def ", str(package)])
    out = Output("tool/grep-email", "grep", f"grep -rn 'def ' {package}", text)
    found = [
        (match["path"], match["name"])
        for match in re.finditer(r"^(?P<path>[^:\n]+):\d+:\s*def (?P<name>\w+)\(", text, re.M)
    ]
    defined = Counter(name for _, name in found)
    # Functions defined once, not dunders (every class has an `__init__`).
    where = {name: path for path, name in found if defined[name] == 1 and "__" not in name}
    return out, [
        Question(
            out.key,
            f"where is {name} defined?",
            ((f"email/{Path(where[name]).relative_to(package)}", f"def {name}("),),
        )
        for name in pick(list(where), 3, seed, "grep")
    ]


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    """A static file server that keeps its request log to itself."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def curl_verbose(tmp: Path, seed: int) -> Produced:
    """curl -v of three requests to a local static file server: two files it serves and one
    it does not have (what an agent sees debugging an HTTP endpoint)."""
    if not have("curl"):
        raise Skip("curl is not installed")
    site = tmp / "site"
    write(site / "health.json", '{"status": "ok"}\n')
    write(
        site / "reports" / "daily.csv",
        "day,orders\n" + "".join(f"{d},{d * 7}\n" for d in range(30)),
    )
    handler = functools.partial(_QuietFiles, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    paths = ["/health.json", "/reports/weekly.csv", "/reports/daily.csv"]
    try:
        # In one stream, as a terminal shows it: each body after its response's headers.
        text = "".join(run(f"curl -sv {base}{path} 2>&1") for path in paths)
    finally:
        server.shutdown()
        server.server_close()
    out = Output("tool/curl", "curl", " && ".join(f"curl -sv {base}{p}" for p in paths), text)
    status = re.search(r"^< (HTTP/\S+ 404 .*)$", text, re.MULTILINE)
    if status is None:
        raise Skip("curl printed no 404 response")
    return out, [
        Question(out.key, "what does the server return for /reports/weekly.csv?", ((status[1],),))
    ]


def find_stdlib(tmp: Path, seed: int) -> Produced:
    """find <stdlib> -name '*.py' (without site-packages), its first 3,000 lines."""
    if not have("find"):
        raise Skip("find is not installed")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    # Installed packages can live inside the stdlib folder (a system or pyenv Python); pruned,
    # so that the questions are about the standard library's modules.
    prune = ["-path", str(stdlib / "site-packages"), "-prune", "-o"]
    text = cap_lines(run(["find", str(stdlib), *prune, "-name", "*.py", "-print"]), FIND_LINES)
    command = f"find {stdlib} {' '.join(prune)} -name '*.py' -print | head -{FIND_LINES}"
    out = Output("tool/find-stdlib", "find", command, text)
    paths = text.splitlines()
    once = Counter(Path(p).name for p in paths)
    candidates = [p for p in paths if once[Path(p).name] == 1]
    if not candidates:
        raise Skip(f"find printed no uniquely named module under {stdlib}")
    return out, [
        Question(out.key, f"where is {Path(p).name} located?", ((p,),))
        for p in pick(candidates, 3, seed, "find")
    ]


def pip_list(tmp: Path, seed: int) -> Produced:
    """pip list --format=columns of this interpreter's environment."""
    text = run([python(), "-m", "pip", "list", "--format=columns"])
    out = Output("tool/pip-list", "pip", "pip list --format=columns", text)
    rows = text.splitlines()
    start = next((i + 1 for i, row in enumerate(rows) if row.startswith("---")), len(rows))
    versions: dict[str, str] = {}
    for fields in (row.split() for row in rows[start:]):
        try:
            versions[fields[0]] = importlib.metadata.version(fields[0])
        except (IndexError, importlib.metadata.PackageNotFoundError):
            continue
    if not versions:
        raise Skip("pip list printed no installed package (is pip installed?)")
    return out, [
        Question(out.key, f"what version of {name} is installed?", ((name, versions[name]),), True)
        for name in pick(list(versions), 3, seed, "pip")
    ]


def ps_processes(tmp: Path, seed: int) -> Produced:
    """ps aux: this machine's processes, asked which uses the most of a resource."""
    if not have("ps"):
        raise Skip("ps is not installed")
    text = run(["ps", "aux"])
    out = Output("tool/ps-aux", "ps", "ps aux", text)
    lines = text.splitlines()
    header = lines[0].split() if lines else []
    rows = [line.split(None, len(header) - 1) for line in lines[1:]]
    rows = [row for row in rows if len(row) == len(header)]
    questions = []
    for column, query in (
        ("%MEM", "which process uses the most memory?"),
        ("%CPU", "which process is using the most CPU?"),
    ):
        if column not in header or "PID" not in header:
            raise Skip(f"ps aux printed no {column} or PID column")
        at, pid = header.index(column), header.index("PID")
        top = max((float(row[at]) for row in rows), default=None)
        tops = [row for row in rows if float(row[at]) == top]
        # An extreme that many rows share (every %CPU 0.0) points at no one process.
        if top is not None and len(tops) <= 3:
            answers = tuple((row[pid], row[-1][:20]) for row in tops)
            questions.append(Question(out.key, query, answers, True))
    return out, questions


# Prints Python's build configuration the way an API or a function-calling tool answers: JSON
# on one line.
CONFIG_JSON = "import json, sysconfig; print(json.dumps(sysconfig.get_config_vars(), default=str))"


def python_config_json(tmp: Path, seed: int) -> Produced:
    """This interpreter's build configuration (sysconfig) as one line of JSON."""
    text = run([python(), "-c", CONFIG_JSON])
    out = Output("tool/python-config", "python", "python -c '<sysconfig as JSON>'", text)
    values = {
        name: value
        for name, value in sysconfig.get_config_vars().items()
        if re.fullmatch(r"[A-Z][A-Z_]{3,}", name)
        and isinstance(value, str)
        and re.fullmatch(r"\S{4,60}", value)
    }
    if not values:
        raise Skip("sysconfig has no variable with a short value")
    return out, [
        Question(
            out.key,
            f"what is {name} in this Python's build configuration?",
            ((f'"{name}"', values[name]),),
            True,
        )  # fmt: skip
        for name in pick(list(values), 3, seed, "config")
    ]


def scheduler_log(tmp: Path, seed: int) -> Produced:
    """About 3,000 lines of a job scheduler's log with one failed run."""
    script = write(tmp / "scheduler" / "scheduler.py", SCHEDULER_LOG)
    text = run([python(), str(script), str(LOG_ROUNDS)])
    out = Output("tool/scheduler-log", "python", f"python scheduler.py {LOG_ROUNDS}", text)
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if " ERROR " in line), None)
    failed = re.search(r" job (\S+) failed", lines[at]) if at is not None else None
    if at is None or failed is None:
        raise Skip("the scheduler logged no failed job")
    # The traceback's last line: the first unindented "type: message" after the ERROR line.
    reason = next((line for line in lines[at + 1 :] if re.match(r"[\w.]+: ", line)), None)
    if reason is None:
        raise Skip("the scheduler's failed job has no exception line")
    job = failed[1]
    questions = [
        Question(out.key, f"why did the {job} job fail?", ((reason,),)),
        Question(out.key, f"when did the {job} job fail?", ((lines[at][:23],),)),
        # Asked by the minute alone: the minute's lines are the failure's, a few of them.
        Question(out.key, f"what happened at {lines[at][11:16]}?", ((lines[at][:23],),)),
    ]
    started = [line for line in lines if re.search(r" job \S+ started ", line)]
    if started:
        # Every job starts many times; which start came last only the order says.
        last = re.search(r" job (\S+ started \(run \d+\))", started[-1])
        if last is not None:
            questions.append(Question(out.key, "which job started last?", ((last[1],),)))
    finished = re.findall(r" job (\S+) finished: .* in ([\d.]+s)$", text, re.MULTILINE)
    runs = Counter(name for name, _ in finished)
    if finished and runs[finished[-1][0]] == 1:  # a job that ran once: "how long" has one answer
        name, took = finished[-1]
        query = f"how long did the {name} job take?"
        questions.append(Question(out.key, query, ((name, took),), True))
    if finished:
        # Asked without a name or a number: the log's durations say which run it was.
        longest = max(float(took[:-1]) for _, took in finished)
        runs_longest = {(name, took) for name, took in finished if float(took[:-1]) == longest}
        query = "which job run took the longest?"
        questions.append(Question(out.key, query, tuple(sorted(runs_longest)), True))
    return out, questions


BUILDERS: tuple[Callable[[Path, int], Produced], ...] = (
    pytest_failures,
    python_traceback,
    gcc_errors,
    ls_package,
    git_history,
    git_status,
    grep_definitions,
    curl_verbose,
    find_stdlib,
    pip_list,
    ps_processes,
    python_config_json,
    scheduler_log,
)


def collect(tmp: Path, seed: int) -> tuple[list[Output], list[Question], list[str]]:
    """Every output this machine can produce, its questions, and why any was skipped."""
    outputs, questions, skipped = [], [], []
    for build in BUILDERS:
        try:
            out, asked = build(tmp, seed)
        except Skip as reason:
            skipped.append(f"{build.__name__}: {reason}")
            print(f"skipped {build.__name__}: {reason}")
            continue
        if not out.text.strip():
            skipped.append(f"{build.__name__}: `{out.command}` printed nothing")
            print(f"skipped {build.__name__}: `{out.command}` printed nothing")
            continue
        outputs.append(out)
        for q in asked:
            # A question whose answer its own output lacks would measure our parsing, not Fit.
            if answered(q, out.text):
                questions.append(q)
            else:
                skipped.append(f"{build.__name__}: {q.query!r} dropped, answer not in the output")
                print(f"dropped {q.query!r}: its answer {q.answers} is not in {out.key}")
    return outputs, questions, skipped


def items_for(outputs: Sequence[Output], start: datetime) -> list[PutItem]:
    """The conversation as an agent stores it: two messages, the outputs, two more messages,
    a minute apart."""

    def message(i: int, role: str, text: str) -> PutItem:
        return PutItem(key=f"chat/{i:02d}", content=text, kind="message", role=role)

    before = [message(i, r, t) for i, (r, t) in enumerate(MESSAGES[:2])]
    after = [message(i + 2, r, t) for i, (r, t) in enumerate(MESSAGES[2:])]
    tools = [
        PutItem(key=o.key, content=o.text, kind="tool_output", tool_name=o.tool_name)
        for o in outputs
    ]
    ordered = [*before, *tools, *after]
    return [
        replace(item, event_time=start + timedelta(minutes=i)) for i, item in enumerate(ordered)
    ]


async def load(client: AsyncClient, items: Sequence[PutItem]) -> None:
    """Store the items in the (cleared) namespace, one Put each as the agent made them."""
    await client.clear(NAMESPACE)
    progress = Progress(len(items), "storing outputs")
    for item in items:
        await client.put_many(NAMESPACE, [item], timeout=300)
        progress.step()


async def evaluate(
    client: AsyncClient,
    questions: Sequence[Question],
    budgets: Sequence[int],
    tokens: TokenCounter,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Answered questions, tokens and misses per mode and budget, plus budget violations."""
    hits = {m: dict.fromkeys(budgets, 0) for m in MODES}
    used = {m: dict.fromkeys(budgets, 0) for m in MODES}
    missed: dict[str, dict[int, list[str]]] = {m: {b: [] for b in budgets} for m in MODES}
    violations: list[dict[str, Any]] = []
    progress = Progress(len(questions) * len(budgets) * len(MODES), "asking Fit")
    gate = asyncio.Semaphore(concurrency)

    async def ask(q: Question) -> None:
        async with gate:
            for budget in budgets:
                for mode, options in MODES.items():
                    result = await client.fit(
                        NAMESPACE, q.query, budget, include_content=True, timeout=120, **options
                    )
                    text = "\n".join(e.content for e in result.entries)
                    counted = sum(tokens.count(e.content) for e in result.entries)
                    if result.total_tokens > budget or counted > budget:
                        violations.append(
                            {"mode": mode, "query": q.query, "budget": budget,
                             "total_tokens": result.total_tokens, "counted": counted}
                        )  # fmt: skip
                    used[mode][budget] += result.total_tokens
                    if answered(q, text):
                        hits[mode][budget] += 1
                    else:
                        missed[mode][budget].append(q.query)
                    progress.step()

    await asyncio.gather(*(ask(q) for q in questions))
    n = len(questions)
    order = {q.query: i for i, q in enumerate(questions)}  # misses in question order, not finish
    return {
        "questions": n,
        "answered": {m: {str(b): hits[m][b] for b in budgets} for m in MODES},
        "share": {m: {str(b): round(hits[m][b] / max(n, 1), 4) for b in budgets} for m in MODES},
        "mean_tokens": {
            m: {str(b): round(used[m][b] / max(n, 1), 1) for b in budgets} for m in MODES
        },
        "missed": {
            m: {str(b): sorted(missed[m][b], key=order.__getitem__) for b in budgets} for m in MODES
        },
        "budget_violations": violations,
    }


async def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command line asks for."""
    budgets = args.budgets
    tokens = TokenCounter(args.token_encoding)
    # A fixed scratch folder: its path shows in the outputs, so a fixed one keeps them equal
    # from run to run.
    tmp = Path(tempfile.gettempdir()) / "sharedctx-bench-tool-outputs"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        outputs, questions, skipped = collect(tmp, args.seed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    items = items_for(outputs, datetime.now(UTC) - timedelta(hours=1))
    async with AsyncExitStack() as stack:
        target = await target_or_own_server(stack, args.target)
        client = await stack.enter_async_context(AsyncClient(target, timeout=300))
        await load(client, items)
        report = await evaluate(client, questions, budgets, tokens)
    report["namespace"] = NAMESPACE
    report["budgets"] = budgets
    report["modes"] = MODES
    report["outputs"] = [
        {"key": o.key, "tool_name": o.tool_name, "command": o.command,
         "lines": len(o.text.splitlines()), "tokens": tokens.count(o.text)}
        for o in outputs
    ]  # fmt: skip
    report["messages"] = len(MESSAGES)
    report["skipped"] = skipped
    report["question_list"] = [asdict(q) for q in questions]
    return report


def print_table(report: dict[str, Any], budgets: Sequence[int]) -> None:
    """Answered questions (count and share) and mean tokens per mode and budget."""
    n = report["questions"]
    print(
        f"{n} questions over {len(report['outputs'])} tool outputs and "
        f"{report['messages']} messages"
    )
    for note in report["skipped"]:
        print(f"  skipped {note}")
    print(f"{'mode':14}" + "".join(f"{b:>14}" for b in budgets) + "   mean tokens")
    for mode, counts in report["answered"].items():
        shares, spent = report["share"][mode], report["mean_tokens"][mode]
        cells = [f"{f'{counts[str(b)]}/{n} {shares[str(b)]:.2f}':>14}" for b in budgets]
        print(table_row(f"{mode:14}", cells, spent, budgets))
    print(f"budget violations: {len(report['budget_violations'])}")


def main() -> None:
    """Entry point."""
    parser = budget_arguments("300,800,2000", "answered share")
    parser.description = __doc__
    parser.add_argument("--seed", type=int, default=13, help="which files, commits, packages")
    args = parser.parse_args()
    budgets = args.budgets
    started = time.monotonic()
    report = asyncio.run(run_benchmark(args))
    report["seconds"] = round(time.monotonic() - started, 1)
    series = {
        mode: [(b, shares[str(b)]) for b in budgets] for mode, shares in report["share"].items()
    }
    out, plot = write_budget_report(
        report, series, out=args.out, plot=args.plot, y_label="questions answered"
    )
    print_table(report, budgets)
    print(f"wrote {out} and {plot} in {report['seconds']:.0f} s")


if __name__ == "__main__":
    main()
