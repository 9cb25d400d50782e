"""Diffs and git history: commit subjects, files and hunk headers; bodies and context out."""

from __future__ import annotations

from sharedctx_server.compress import compress, missing_error_lines
from sharedctx_server.tokens import TokenCounter


def _commit(n: int, subject: str, body: list[str], files: list[str]) -> list[str]:
    out = [
        f"commit {n:07x}{'0123456789abcdef' * 2}{'9' * 1}",
        "Author: Dev One <dev@example.com>",
        "Date:   Wed Dec 2 03:16:27 2026 +0000",
        "",
        f"    {subject}",
    ]
    if body:
        out += ["", *(f"    {line}" for line in body)]
    out.append("")
    out += [f" {path} | {3 + i} ++-" for i, path in enumerate(files)]
    out += [f" {len(files)} files changed, 30 insertions(+), 9 deletions(-)", ""]
    return out


def test_git_log_stat_keeps_subjects_and_files(token_counter: TokenCounter) -> None:
    body = ["A longer explanation of why this was done,", "over a few lines of prose."]
    lines: list[str] = []
    for n in range(30):
        files = [f"src/app/mod_{n}_{k}.py" for k in range(3)] + [f"docs/page_{n}.md"]
        lines += _commit(n, f"Change number {n}", body, files)
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "diff"
    out = result.text.split("\n")
    assert out[0].startswith("[git log: 30 commits, by Dev One unless named; kept subjects")
    assert "60 message lines after the subjects" in out[0]
    assert any(line.endswith("2026 Dec 2 Change number 7") for line in out)
    assert " src/app/: mod_7_0.py 3, mod_7_1.py 4, mod_7_2.py 5" in out
    assert " docs/page_7.md | 6" in out
    assert " 4 files changed, +30, -9" in out
    assert "over a few lines of prose." not in result.text


def test_one_commit_with_its_files_listed_is_a_git_log_too(token_counter: TokenCounter) -> None:
    # `git show --stat` of one commit: no hunks, one commit, and its files.
    files = [f"src/app/pricing/module_{k}.py" for k in range(8)] + ["docs/guide.md"]
    text = "\n".join(_commit(3, "Split the pricing module", ["Why it was done."], files))
    result = compress(text, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "diff"
    out = result.text.split("\n")
    assert out[0].startswith("[git log: 1 commit,")
    assert any(line.startswith(" src/app/pricing/: module_0.py 3,") for line in out)
    assert " 9 files changed, +30, -9" in out


def test_git_log_name_status_keeps_every_commit_and_its_files(token_counter: TokenCounter) -> None:
    lines: list[str] = []
    for n in range(40):
        commit = _commit(n, f"Change number {n}", ["Why it was done."], [])[:-2]
        files = [f"M\tsrc/app/mod_{n}.py", f"A\tsrc/app/new_{n}.py", f"D\tdocs/old_{n}.md"]
        lines += [*commit, *files, ""]
    lines[-2] = "R087\tsrc/app/old_name.py\tsrc/app/new_name.py"
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "diff"
    out = result.text.split("\n")
    assert sum(1 for line in out if line.startswith("commit ")) == 40
    assert " src/app/: mod_7.py M, new_7.py A" in out
    assert " docs/old_7.md | D" in out
    assert " src/app/: mod_39.py M, new_39.py A, new_name.py R087" in out  # a rename: its new name


def test_error_lines_in_messages_and_file_names_stay(token_counter: TokenCounter) -> None:
    lines: list[str] = []
    for n in range(10):
        body = ["Fixes the crash: ValueError: bad header"] if n == 4 else ["Routine work."]
        lines += _commit(n, f"Work item {n}", body, [f"src/errors_{n}.py", f"src/ok_{n}.py"])
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "diff"
    assert missing_error_lines(text, result.text) == []


def test_a_diff_keeps_headers_and_the_ends_of_each_hunk(token_counter: TokenCounter) -> None:
    lines = ["diff --git a/app.py b/app.py", "index 1111111..2222222 100644"]
    lines += ["--- a/app.py", "+++ b/app.py"]
    for h in range(4):
        lines.append(f"@@ -{h * 40 + 1},30 +{h * 40 + 1},32 @@ def handler_{h}(request):")
        lines += [f"     context line {k}" for k in range(3)]
        lines += [f"-    old_value_{h}_{k} = compute({k})" for k in range(10)]
        lines += [f"+    new_value_{h}_{k} = compute({k}, cache=True)" for k in range(12)]
        lines += [f"     trailing context {k}" for k in range(3)]
    lines[30] = "+    raise ValueError('negative size')"
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "diff"
    out = result.text.split("\n")
    assert "diff a/app.py b/app.py" in out
    assert "@@ -41,30 +41,32 @@ def handler_1(request):" in out
    assert "-    old_value_1_0 = compute(0)" in out
    assert "+    new_value_1_11 = compute(11, cache=True)" in out
    assert "     context line 0" not in out
    assert "+    raise ValueError('negative size')" in out
    assert any(line.startswith("[... ") and "changed lines omitted: +" in line for line in out)
    assert result.compressed_tokens < 0.6 * result.original_tokens


def test_a_file_header_that_reads_as_an_error_stays_a_line_of_its_own(
    token_counter: TokenCounter,
) -> None:
    # "error.html" makes the header an error line, kept verbatim; its notes ("new file mode")
    # once went onto the same line, which the safety check then refused for the whole diff.
    lines: list[str] = []
    for n in range(12):
        path = "templates/error.html" if n == 3 else f"src/mod_{n}.py"
        lines += [
            f"diff --git a/{path} b/{path}",
            "new file mode 100644",
            f"index 0000000..{n:07x}",
            "--- /dev/null",
            f"+++ b/{path}",
            "@@ -0,0 +1,6 @@",
            *(f"+line {k} of file {n}" for k in range(6)),
        ]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "diff"
    assert missing_error_lines(text, result.text) == []
