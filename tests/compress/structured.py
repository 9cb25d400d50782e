"""Hypothesis strategies for structured tool outputs: listings, tables, diffs, test reports,
sources and markup, each with error lines (and unicode noise) mixed in."""

from __future__ import annotations

from hypothesis import strategies as st

from .strategies import UNICODE, error_lines, noise_lines

_NAME = st.text("abcdefghij_-0123456789", min_size=1, max_size=12)
_EXT = st.sampled_from([".py", ".pyc", ".json", ".txt", ".so", ".cpython-311.pyc", ""])
_MODE = st.sampled_from(["-rw-r--r--", "-rw-r--r--", "-rwxr-xr-x", "-rw-------", "lrwxrwxrwx"])
_ERROR_NAMES = st.sampled_from(["errors.py", "failed.log", "exceptions.py", "crash.dump"])
_SIZE = st.integers(0, 50_000_000)


@st.composite
def file_names(draw: st.DrawFn) -> str:
    """A file name, sometimes one that reads as an error (`errors.py`)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(_ERROR_NAMES)
    return draw(_NAME) + draw(_EXT)


@st.composite
def ls_lr(draw: st.DrawFn) -> str:
    """`ls -lR` of a few folders, with tool messages and a stray line now and then."""
    out: list[str] = []
    for f in range(draw(st.integers(1, 6))):
        if f:
            out.append("")
        folder = "/srv/app" + "".join(f"/{draw(_NAME)}" for _ in range(f and 1))
        out += [f"{folder}:", f"total {draw(st.integers(0, 9999))}"]
        for _ in range(draw(st.integers(0, 40))):
            mode, name = draw(_MODE), draw(file_names())
            tail = f"{name} -> ../{name}" if mode.startswith("l") else name
            owner = draw(st.sampled_from(["root root", "root root", "alice staff"]))
            out.append(f"{mode} 1 {owner} {draw(_SIZE):>8} Dec  2 02:05 {tail}")
        if draw(st.integers(0, 5)) == 0:
            out.append(f"ls: cannot open directory '{folder}/private': Permission denied")
        if draw(st.integers(0, 7)) == 0:
            out.append(draw(st.one_of(error_lines, noise_lines)))
    return "\n".join(out) + "\n"


@st.composite
def find_paths(draw: st.DrawFn) -> str:
    """`find` output: paths under a few folders."""
    folders = [
        "./" + "/".join(draw(st.lists(_NAME, min_size=1, max_size=3)))
        for _ in range(draw(st.integers(1, 5)))
    ]
    lines = ["."]
    for _ in range(draw(st.integers(10, 200))):
        lines.append(f"{draw(st.sampled_from(folders))}/{draw(file_names())}")
    if draw(st.booleans()):
        lines.append("find: './secret': Permission denied")
    return "\n".join(lines)


@st.composite
def aligned_tables(draw: st.DrawFn) -> str:
    """A `kubectl get pods`-like table: statuses, restarts, ages; error statuses now and then."""
    rows = [("NAME", "READY", "STATUS", "RESTARTS", "AGE")]
    statuses = st.sampled_from(["Running"] * 12 + ["Pending", "Completed", "CrashLoopBackOff"])
    for i in range(draw(st.integers(4, 120))):
        status = draw(statuses)
        rows.append(
            (
                f"{draw(_NAME)}-{i}",
                "1/1" if status == "Running" else "0/1",
                status,
                str(draw(st.integers(0, 40))),
                f"{draw(st.integers(1, 30))}d",
            )
        )
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = ["   ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(1, len(lines))), draw(error_lines))
    return "\n".join(lines)


@st.composite
def csv_tables(draw: st.DrawFn) -> str:
    """A CSV with a header: names, numbers, a status column, messages that may be errors."""
    lines = ["id,name,size,status,message"]
    for i in range(draw(st.integers(4, 150))):
        message = draw(st.one_of(st.just("ok"), error_lines)).replace(",", ";").replace('"', "'")
        status = draw(st.sampled_from(["ok"] * 8 + ["failed", "retry"]))
        lines.append(f'{i},{draw(_NAME)},{draw(_SIZE)},{status},"{message}"')
    return "\n".join(lines) + "\n"


@st.composite
def git_logs(draw: st.DrawFn) -> str:
    """`git log --stat -p`: commits with bodies, stats and hunks; error lines here and there."""
    out: list[str] = []
    for c in range(draw(st.integers(1, 8))):
        out += [
            f"commit {c:07x}{'a' * 33}",
            "Author: Dev One <dev@example.com>",
            "Date:   Wed Dec 2 03:16:27 2026 +0000",
            "",
            f"    {draw(st.one_of(st.just('Fix the parser'), error_lines))}",
            "",
        ]
        out += [
            f"    {draw(st.one_of(noise_lines, error_lines))}"
            for _ in range(draw(st.integers(0, 4)))
        ]
        out.append("")
        path = f"src/{draw(file_names())}"
        out += [
            f" {path} | 12 ++++++------",
            " 1 file changed, 6 insertions(+), 6 deletions(-)",
            "",
            f"diff --git a/{path} b/{path}",
            "index 1234567..89abcde 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
        ]
        for h in range(draw(st.integers(1, 3))):
            out.append(f"@@ -{10 * h + 1},7 +{10 * h + 1},8 @@ def f{h}():")
            for _ in range(draw(st.integers(1, 30))):
                sign = draw(st.sampled_from(" +-"))
                out.append(sign + draw(st.one_of(noise_lines, error_lines, st.just("    x = 1"))))
        out.append("")
    return "\n".join(out)


@st.composite
def pytest_reports(draw: st.DrawFn) -> str:
    """`pytest -v`: passes, failures with their sections, the summary."""
    out = ["=" * 20 + " test session starts " + "=" * 20, "collected 90 items", ""]
    failed: list[str] = []
    for i in range(draw(st.integers(3, 90))):
        if draw(st.integers(0, 9)) == 0:
            failed.append(f"test_mod.py::test_{i}")
            out.append(f"test_mod.py::test_{i} FAILED [ {i}%]")
        else:
            out.append(f"test_mod.py::test_{i} PASSED [ {i}%]")
    if failed:
        out += ["", "=" * 20 + " FAILURES " + "=" * 20]
        for name in failed:
            out += [f"_____ {name} _____", "    def test():", ">       assert f() == 2"]
            out += [draw(error_lines), ""]
    out.append("=" * 10 + f" {len(failed)} failed, 3 passed in 0.12s " + "=" * 10)
    return "\n".join(out)


@st.composite
def python_sources(draw: st.DrawFn) -> str:
    """A Python module: docstrings, classes, functions whose bodies may raise."""
    out = ['"""A module.', "", "More words.", '"""', "", "import os", "from x import y", ""]
    for c in range(draw(st.integers(1, 4))):
        out += [f"class C{c}:", f'    """Class {c}."""', "", "    field: int = 3", ""]
        for f in range(draw(st.integers(1, 5))):
            out += [f"    def m{f}(self, a, b):", f'        """Method {f}."""']
            for _ in range(draw(st.integers(1, 12))):
                body = draw(st.one_of(st.just("x = a + b"), error_lines, noise_lines))
                out.append("        " + body.replace('"""', "").replace("'''", ""))
            out.append("")
    return "\n".join(out)


@st.composite
def html_pages(draw: st.DrawFn) -> str:
    """An HTML page: head, script, navigation, paragraphs (some with error words)."""
    paragraphs = draw(st.lists(st.one_of(error_lines, st.text(UNICODE, max_size=60)), max_size=12))
    body = "\n".join(
        f"<p class='x'>{p.replace('<', ' ').replace('>', ' ')}</p>" for p in paragraphs
    )
    return (
        "<!doctype html>\n<html><head><title>Page</title><style>p{color:red}</style>"
        "<script>var x = 1; function f() { return x; }</script></head>\n<body>"
        "<nav><a href='/a'>A</a> <a href='/b'>B</a></nav>\n<h1>Title</h1>\n"
        f"{body}\n<ul><li>one</li><li>two</li></ul></body></html>\n"
    )


_RULES = st.sampled_from(["F401 [*]", "E501", "D100", "B904", "SIM102", "UP006"])
_SEVERITIES = st.sampled_from(["warning", "warning", "error", "error[E0308]", "warning"])


@st.composite
def diagnostics(draw: st.DrawFn) -> str:
    """Compiler and linter findings with code frames (rustc, ruff, gcc), notes, suggested
    fixes, lines between them, error lines in their frames and elsewhere."""
    out: list[str] = []
    for _ in range(draw(st.integers(3, 25))):
        path = f"src/{draw(_NAME)}.{draw(st.sampled_from(['rs', 'py', 'c']))}"
        row, col = draw(st.integers(1, 400)), draw(st.integers(1, 80))
        name = draw(_NAME)
        style = draw(st.integers(0, 2))
        if style == 0:
            out.append(f"{draw(_SEVERITIES)}: unused variable: `{name}`")
            out.append(f"  --> {path}:{row}:{col}")
        elif style == 1:
            out.append(f"{draw(_RULES)} `{name}` imported but unused ({row} > 100)")
            out.append(f"--> {path}:{row}:{col}")
        else:
            severity = draw(st.sampled_from(["warning", "error", "note"]))
            out.append(f"{path}:{row}:{col}: {severity}: unused variable ‘{name}’")
        quoted = draw(st.one_of(st.just(f"let {name} = {row};"), error_lines))
        out += ["   |", f"{row} |     {quoted}", f"   |     {'^' * len(name)} label"]
        if draw(st.booleans()):
            out += ["   |", f"   = note: `{name}` is never read"]
        if draw(st.booleans()):
            out += [f"help: remove `{name}`", f"{row} - {quoted}", f"{row} + _{name}"]
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(st.one_of(error_lines, noise_lines)))
        out.append("")
    return "\n".join(out)


_CHANGES = st.sampled_from(["modified", "new file", "deleted", "renamed", "both modified"])


@st.composite
def git_statuses(draw: st.DrawFn) -> str:
    """`git status`, long or short, with hints, untracked folders and now and then an error
    line (a folder git could not read)."""
    out = ["On branch main"]
    if draw(st.booleans()):
        for code in draw(st.lists(st.sampled_from([" M", "A ", "??", "D ", "MM"]), min_size=8)):
            out.append(f"{code} src/{draw(_NAME)}/{draw(file_names())}")
        return "\n".join(out[1:])
    for heading in (
        "Changes to be committed:",
        "Changes not staged for commit:",
        "Untracked files:",
    ):
        out += ["", heading, '  (use "git add <file>..." to update what will be committed)']
        for _ in range(draw(st.integers(0, 30))):
            path = f"src/{draw(_NAME)}/{draw(file_names())}"
            out.append(f"\t{path}" if heading[0] == "U" else f"\t{draw(_CHANGES)}:   {path}")
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(st.one_of(error_lines, noise_lines)))
    return "\n".join(out)


STRUCTURED = st.one_of(
    ls_lr(),
    find_paths(),
    aligned_tables(),
    csv_tables(),
    git_logs(),
    pytest_reports(),
    python_sources(),
    html_pages(),
    diagnostics(),
    git_statuses(),
)
