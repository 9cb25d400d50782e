"""The samples of the compression corpus: which commands run, on what, labelled how."""

from __future__ import annotations

import sysconfig
from collections.abc import Callable
from pathlib import Path

from . import compression_inputs as inputs
from .compression_corpus import (
    Sample,
    cap_lines,
    docker_ps,
    have,
    kubectl_pods,
    python,
    run,
    site_packages,
    tree_listing,
    worked_tree,
)

__all__ = ["collect"]

_LISTING_LINES = 3000  # the size of listing the tracker's issue measured
_BIG_BYTES = 1 << 20  # one output of 1 MiB of each of the large repetitive kinds


class _Collector:
    def __init__(self, tmp: Path, repo: Path) -> None:
        self.tmp, self.repo = tmp, repo
        self.samples: list[Sample] = []
        self.notes: list[str] = []

    def add(
        self,
        name: str,
        kind: str,
        command: str,
        make: Callable[[], str],
        entry_kind: str = "tool_output",
        tool: str = "",
        *,
        needs: str = "",
        synthetic: bool = False,
    ) -> None:
        if needs and not have(needs):
            self.notes.append(f"{name}: {needs} not installed; skipped")
            return
        text = make()
        if text.strip():
            tool = tool or command.split()[0]
            self.samples.append(Sample(name, kind, command, text, entry_kind, tool, synthetic))
        else:
            self.notes.append(f"{name}: `{command}` printed nothing; skipped")

    def write(self, name: str, text: str) -> Path:
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


def _listings(c: _Collector) -> None:
    site = site_packages()
    lib = site.parent.parent  # the virtualenv's (or installation's) lib
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    n = _LISTING_LINES
    c.add(
        "ls -lR venv lib",
        "listing",
        f"ls -lR {lib} (first {n:,} lines)",
        lambda: cap_lines(run(["ls", "-lR", str(lib)]), lines=n),
        tool="ls",
    )
    c.add(
        "ls -lR stdlib",
        "listing",
        f"ls -lR {stdlib} (first {n:,} lines)",
        lambda: cap_lines(run(["ls", "-lR", str(stdlib)]), lines=n),
        tool="ls",
    )
    c.add(
        "ls -lR site-packages 1MB",
        "listing",
        f"ls -lR {site} (first 1 MB)",
        lambda: cap_lines(run(["ls", "-lR", str(site)]), chars=_BIG_BYTES),
        tool="ls",
    )
    c.add("ls -l /usr/bin", "listing", "ls -l /usr/bin", lambda: run(["ls", "-l", "/usr/bin"]))
    c.add("ls -la /etc", "listing", "ls -la /etc", lambda: run(["ls", "-la", "/etc"]))
    c.add(
        "ls -l /proc/1 (denied)",
        "listing",
        "ls -l /proc/1/ 2>&1",
        lambda: run(["ls", "-l", "/proc/1/"], stream="both"),
    )
    c.add(
        "find /usr/share/doc",
        "listing",
        "find /usr/share/doc -maxdepth 3 (first 3,000)",
        lambda: cap_lines(run(["find", "/usr/share/doc", "-maxdepth", "3"]), lines=n),
    )
    c.add(
        "find stdlib *.py",
        "listing",
        f"find {stdlib} -name '*.py' (first 3,000)",
        lambda: cap_lines(run(["find", str(stdlib), "-name", "*.py"]), lines=n),
    )
    c.add(
        "du -ah site-packages",
        "listing",
        f"du -ah {site} (first 3,000)",
        lambda: cap_lines(run(["du", "-ah", str(site)]), lines=n),
    )
    repo = c.repo
    if have("tree"):
        c.add(
            "tree repo",
            "listing",
            f"tree {repo}",
            lambda: cap_lines(run(["tree", "-I", ".git|.venv|*.egg-info", str(repo)]), lines=n),
        )
    else:
        target = stdlib / "email"
        c.add(
            "tree (formatted)",
            "listing",
            f"tree {target} (tree's format, by Python)",
            lambda: tree_listing(target, n),
            tool="tree",
            synthetic=True,
        )


def _tables(c: _Collector) -> None:
    c.add("ps aux", "table", "ps aux", lambda: run(["ps", "aux"]))
    c.add(
        "ps -eo",
        "table",
        "ps -eo pid,ppid,user,stat,etime,rss,cmd",
        lambda: run(["ps", "-eo", "pid,ppid,user,stat,etime,rss,cmd"]),
    )
    c.add("pip list", "table", "pip list", lambda: run([python(), "-m", "pip", "list"]), tool="pip")
    c.add("df -h", "table", "df -h", lambda: run(["df", "-h"]))
    c.add("dpkg -l", "table", "dpkg -l", lambda: run(["dpkg", "-l"]), needs="dpkg")
    tsv = (
        "printf 'Package\\tVersion\\tSize\\tStatus\\n'; "
        "dpkg-query -W -f='${Package}\\t${Version}\\t${Installed-Size}\\t${Status}\\n'"
    )
    c.add(
        "dpkg-query TSV",
        "table",
        "dpkg-query -W -f (TSV with a header)",
        lambda: run(tsv),
        tool="dpkg-query",
        needs="dpkg-query",
    )
    c.add("ss -tan", "table", "ss -tan", lambda: run(["ss", "-tan"]), needs="ss")
    c.add(
        "importtime",
        "table",
        'python -X importtime -c "import numpy"',
        lambda: run([python(), "-X", "importtime", "-c", "import numpy"], stream="stderr"),
        entry_kind="log",
        tool="python",
    )
    c.add(
        "kubectl get pods",
        "table",
        "kubectl get pods -A",
        kubectl_pods,
        tool="kubectl",
        synthetic=True,
    )
    c.add("docker ps -a", "table", "docker ps -a", docker_ps, tool="docker", synthetic=True)


def _git(c: _Collector, what: str) -> list[str] | None:
    """The git command on the repository, or None (noted) when there is none."""
    if not have("git") or not (c.repo / ".git").exists():
        c.notes.append(f"{what}: no git repository; skipped")
        return None
    return ["git", "-C", str(c.repo)]


def _diffs(c: _Collector) -> None:
    git = _git(c, "diffs")
    if git is None:
        return
    c.add(
        "git log --stat",
        "diff",
        "git log --stat -n 200",
        lambda: run([*git, "log", "--stat", "-n", "200"]),
    )
    c.add("git log -p", "diff", "git log -p -n 30", lambda: run([*git, "log", "-p", "-n", "30"]))
    c.add("git log", "diff", "git log -n 300", lambda: run([*git, "log", "-n", "300"]))
    c.add("git show", "diff", "git show HEAD~3", lambda: run([*git, "show", "HEAD~3"]))
    c.add(
        "git diff",
        "diff",
        "git diff HEAD~12 HEAD -- server",
        lambda: run([*git, "diff", "HEAD~12", "HEAD", "--", "server"]),
    )
    blamed = "server/sharedctx_server/fit/selection.py"
    c.add(
        "git blame",
        "diff",
        f"git blame {blamed}",
        lambda: run([*git, "blame", blamed]),
        tool="git",
    )


def _worked_tree(c: _Collector) -> Path | None:
    """A copy of this package's sources in the middle of a refactor (worked_tree)."""
    if not have("git"):
        c.notes.append("git status: git not installed; skipped")
        return None
    sources = sorted((c.repo / "server" / "sharedctx_server").rglob("*.py"))
    files = [str(path.relative_to(c.repo)) for path in sources]
    return worked_tree(c.tmp / "worktree", files, "server/sharedctx_server/fit").root


def _statuses(c: _Collector) -> None:
    root = _worked_tree(c)
    if root is None:
        return
    c.add(
        "git status",
        "status",
        "git status (a refactor halfway: edits, deletions, new and untracked files)",
        lambda: run(["git", "-C", str(root), "status"]),
        tool="git",
    )
    c.add(
        "git status --short",
        "status",
        "git status --short (the same tree)",
        lambda: run(["git", "-C", str(root), "status", "--short"]),
        tool="git",
    )


def _searches(c: _Collector) -> None:
    git = _git(c, "searches")
    if git is None:
        return
    c.add(
        "git grep defs",
        "search",
        "git grep -n 'def ' -- server/sharedctx_server/fit",
        lambda: run([*git, "grep", "-n", "def ", "--", "server/sharedctx_server/fit"]),
        tool="grep",
    )
    c.add(
        "git grep -C2",
        "search",
        "git grep -n -C2 'raise ' -- server/sharedctx_server/edge",
        lambda: run([*git, "grep", "-n", "-C2", "raise ", "--", "server/sharedctx_server/edge"]),
        tool="grep",
    )


def _tests(c: _Collector) -> None:
    py = python()
    path = c.write("pytest/test_orders.py", inputs.FAILING_PYTEST)
    c.add(
        "pytest failing",
        "tests",
        "python -m pytest -v test_orders.py",
        lambda: run(
            [py, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(path)],
            cwd=path.parent,
            stream="both",
        ),
        tool="pytest",
    )
    c.add(
        "pytest numpy",
        "tests",
        "pytest -v --pyargs numpy.lib.tests.test_arraypad",
        lambda: run(
            [
                py,
                "-m",
                "pytest",
                "-v",
                "-p",
                "no:cacheprovider",
                "--pyargs",
                "numpy.lib.tests.test_arraypad",
            ],
            cwd=c.tmp,
            stream="both",
        ),
        tool="pytest",
    )
    c.add(
        "unittest stdlib",
        "tests",
        "python -m unittest -v test.test_json",
        lambda: run([py, "-m", "unittest", "-v", "test.test_json"], cwd=c.tmp, stream="both"),
        tool="python",
    )
    slug = c.write("unit/test_slug.py", inputs.FAILING_UNITTEST)
    c.add(
        "unittest failing",
        "tests",
        "python test_slug.py (unittest -v)",
        lambda: run([py, str(slug)], cwd=slug.parent, stream="both"),
        tool="python",
    )
    node = c.write("node/median.test.js", inputs.FAILING_NODE_TEST)
    c.add(
        "node --test",
        "tests",
        "node --test median.test.js",
        lambda: run(["node", "--test", str(node)], cwd=node.parent, stream="both"),
        needs="node",
    )
    crate = c.tmp / "ringbuf"
    c.write("ringbuf/Cargo.toml", inputs.CARGO_TOML)
    c.write("ringbuf/src/lib.rs", inputs.CARGO_LIB)
    c.add(
        "cargo test",
        "tests",
        "cargo test --offline (a small crate)",
        lambda: run(
            ["cargo", "test", "--offline", "-q", "--", "--test-threads=1"], cwd=crate, stream="both"
        ),
        needs="cargo",
    )


def _logs(c: _Collector) -> None:
    py = python()
    service = c.write("service.py", inputs.SERVICE_LOG)
    c.add(
        "service log",
        "log",
        "python service.py 40 (logging)",
        lambda: run([py, str(service), "40"]),
        entry_kind="log",
        tool="python",
    )
    c.add(
        "service log 1MB",
        "log",
        "python service.py 240 (first 1 MB)",
        lambda: cap_lines(run([py, str(service), "240"]), chars=_BIG_BYTES),
        entry_kind="log",
        tool="python",
    )
    train = c.write("train.py", inputs.TRAIN_LOOP)
    c.add(
        "tqdm training loop",
        "log",
        "python train.py 300 (tqdm bars, read with their carriage returns)",
        lambda: run([py, str(train), "300"], stream="both", raw=True),
        entry_kind="log",
        tool="python",
    )
    for name, source in inputs.C_SOURCES.items():
        c.write(f"cbuild/{name}", source)
    c.write("cbuild/Makefile", inputs.MAKEFILE)
    c.add(
        "make (gcc warnings)",
        "log",
        "make -k (gcc -Wall -Wextra, 27 files, one error)",
        lambda: run(["make", "-k"], cwd=c.tmp / "cbuild", stream="both"),
        needs="make",
    )
    c.add(
        "pip wheel -v",
        "log",
        "pip wheel --no-deps -v (this repository)",
        lambda: run(
            [
                py,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-v",
                "-w",
                str(c.tmp / "wheels"),
                str(c.repo),
            ],
            stream="both",
        ),
        tool="pip",
    )


def _documents(c: _Collector) -> None:
    py = python()
    c.add(
        "pip inspect", "json", "pip inspect", lambda: run([py, "-m", "pip", "inspect"]), tool="pip"
    )
    c.add(
        "pip list json",
        "json",
        "pip list --format json",
        lambda: run([py, "-m", "pip", "list", "--format", "json"]),
        tool="pip",
    )
    c.add(
        "npm ls -g --json",
        "json",
        "npm ls -g --json --long",
        lambda: run(["npm", "ls", "-g", "--json", "--long"]),
        needs="npm",
    )
    chain = c.write("chain.py", inputs.chain_script(30))
    c.add(
        "python traceback",
        "trace",
        "python chain.py",
        lambda: run([py, str(chain)], stream="stderr"),
        tool="python",
    )
    js = c.write("parse.js", inputs.NODE_TRACE)
    c.add(
        "node stack",
        "trace",
        "node --stack-trace-limit=60 parse.js",
        lambda: run(["node", "--stack-trace-limit=60", str(js)], stream="stderr"),
        needs="node",
    )
    java = c.write("java/Deep.java", inputs.JAVA_TRACE)
    c.add(
        "java stack",
        "trace",
        "java Deep.java",
        lambda: run(["java", str(java)], cwd=java.parent, stream="stderr"),
        needs="java",
    )
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    c.add(
        "argparse.py",
        "source",
        f"cat {stdlib / 'argparse.py'}",
        lambda: (stdlib / "argparse.py").read_text(encoding="utf-8"),
        entry_kind="document",
    )
    # As `cat -n` and coding agents' file readers show a file: numbered lines.
    c.add(
        "cat -n json/decoder.py",
        "source",
        f"cat -n {stdlib / 'json' / 'decoder.py'}",
        lambda: run(["cat", "-n", str(stdlib / "json" / "decoder.py")]),
        tool="cat",
    )
    jquery = Path("/usr/share/javascript/jquery/jquery.js")
    if jquery.exists():
        c.add(
            "jquery.js",
            "source",
            f"cat {jquery} (first 3,000 lines)",
            lambda: cap_lines(jquery.read_text(encoding="utf-8"), lines=3000),
            entry_kind="document",
            tool="cat",
        )
    stdio = Path("/usr/include/stdio.h")
    if stdio.exists():
        c.add(
            "stdio.h",
            "source",
            f"cat {stdio}",
            lambda: stdio.read_text(encoding="utf-8"),
            entry_kind="document",
            tool="cat",
        )
    metadata = sorted(site_packages().glob("*.dist-info/METADATA"), key=lambda p: -p.stat().st_size)
    markdown = [m for m in metadata if "text/markdown" in m.read_text(errors="replace")[:5000]]
    for meta in markdown[:1]:
        c.add(
            "README (METADATA)",
            "markup",
            f"cat {meta}",
            lambda m=meta: m.read_text(encoding="utf-8", errors="replace"),
            entry_kind="document",
            tool="cat",
        )
    html = sorted(Path.home().glob(".rustup/toolchains/*/share/doc/rust/html/rustdoc/*.html"))
    for page in html[:1]:
        c.add(
            "rustdoc page",
            "markup",
            f"cat {page}",
            lambda p=page: p.read_text(encoding="utf-8", errors="replace"),
            entry_kind="document",
            tool="cat",
        )


def _diagnostics(c: _Collector) -> None:
    crate = c.tmp / "inventory"
    c.write("inventory/Cargo.toml", inputs.CARGO_TOML.replace("ringbuf", "inventory"))
    c.write("inventory/src/main.rs", inputs.cargo_warnings_main())
    c.add(
        "cargo build (errors)",
        "diagnostics",
        "cargo build --offline (warnings and type errors)",
        lambda: run(["cargo", "build", "--offline"], cwd=crate, stream="both"),
        needs="cargo",
    )
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    c.add(
        "ruff check (full)",
        "diagnostics",
        "ruff check --select E,F,W,B,UP,SIM email (the standard library's, full format)",
        lambda: run(
            ["ruff", "check", "--no-cache", "--select", "E,F,W,B,UP,SIM", "email"], cwd=stdlib
        ),
        needs="ruff",
    )


def collect(tmp: Path, repo: Path) -> tuple[list[Sample], list[str]]:
    """Run every program; return the samples and notes on what was skipped."""
    c = _Collector(tmp, repo)
    groups = (
        _listings,
        _tables,
        _diffs,
        _statuses,
        _searches,
        _tests,
        _logs,
        _diagnostics,
        _documents,
    )
    for group in groups:
        group(c)
    return c.samples, c.notes
