"""`git status`: every path kept, said once per change and folder; git's hints left out."""

from __future__ import annotations

from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.tokens import TokenCounter

_LONG = "\n".join(
    [
        "warning: could not open directory 'private/': Permission denied",
        "On branch feature/refunds",
        "Your branch is ahead of 'origin/feature/refunds' by 2 commits.",
        '  (use "git push" to publish your local commits)',
        "",
        "Changes to be committed:",
        '  (use "git restore --staged <file>..." to unstage)',
        *(f"\tnew file:   src/app/refunds/step_{i}.py" for i in range(6)),
        "\trenamed:    docs/old.md -> docs/refunds.md",
        "",
        "Changes not staged for commit:",
        '  (use "git add <file>..." to update what will be committed)',
        '  (use "git restore <file>..." to discard changes in working directory)',
        *(f"\tmodified:   src/app/{name}.py" for name in ("orders", "payments", "ledger")),
        "\tdeleted:    tests/test_legacy.py",
        "",
        "Untracked files:",
        '  (use "git add <file>..." to include in what will be committed)',
        "\tbuild/",
        "\tmeeting notes.txt",
        "\tsrc/app/refunds/fixtures/",
        "",
        'no changes added to commit (use "git add" and/or "git commit -a")',
    ]
)


def test_a_long_status_keeps_every_path_once_per_change_and_folder(
    token_counter: TokenCounter,
) -> None:
    result = compress(_LONG, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "status"
    out = result.text.split("\n")
    assert out[0].startswith("[git status: 14 paths in 3 sections;")
    steps = " ".join(f"step_{i}.py" for i in range(6))
    assert out[1:] == [
        "warning: could not open directory 'private/': Permission denied",
        "On branch feature/refunds",
        "Your branch is ahead of 'origin/feature/refunds' by 2 commits.",
        "Changes to be committed:",
        f"  new file: src/app/refunds/ {steps}",
        "  renamed: docs/old.md -> docs/refunds.md",
        "Changes not staged for commit:",
        "  modified: src/app/ orders.py payments.py ledger.py",
        "  deleted: tests/ test_legacy.py",
        "Untracked files:",
        '  build/ "meeting notes.txt"',
        "  src/app/refunds/ fixtures/",
        'no changes added to commit (use "git add" and/or "git commit -a")',
    ]
    assert missing_error_lines(_LONG, result.text) == []
    assert result.compressed_tokens < result.original_tokens


def test_a_short_status_groups_paths_under_their_two_letters(token_counter: TokenCounter) -> None:
    lines = [f" M src/app/services/module_{i}.py" for i in range(20)]
    lines += [f"A  src/lib/new_{i}.py" for i in range(3)] + ["?? build/", "?? notes.txt"]
    result = compress("\n".join(lines), count_tokens=token_counter.count)
    assert result.compressor == "status"
    mods = " ".join(f"module_{i}.py" for i in range(20))
    assert result.text.split("\n")[1:] == [
        f" M src/app/services/ {mods}",
        "A  src/lib/ new_0.py new_1.py new_2.py",
        "?? build/ notes.txt",
    ]


def test_a_few_paths_or_indented_text_are_no_status(token_counter: TokenCounter) -> None:
    small = "\n".join(_LONG.split("\n")[:12])  # a status of a few paths: stored as it is
    assert all(t.name != "status" for t in explain(small, count_tokens=token_counter.count).trials)
    indented = "\n".join(f"   step {i} of the job finished in {i * 7} ms" for i in range(40))
    trials = explain(indented, count_tokens=token_counter.count).trials
    assert all(t.name != "status" for t in trials)
