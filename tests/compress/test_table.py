"""Tables: header, first and last rows, notable rows, counts by status; logs are not tables."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.compress.table_parse import find_tables
from sharedctx_server.compress.table_rows import numeric_values
from sharedctx_server.tokens import TokenCounter

from tests.support.tool_outputs import STRACE_SUMMARY


def _pods(n: int = 200) -> tuple[str, list[str]]:
    rng = random.Random(3)
    rows = [("NAME", "READY", "STATUS", "RESTARTS", "AGE")]
    for i in range(n):
        status = "CrashLoopBackOff" if i in (37, 150) else "Running"
        restarts = "31 (2m ago)" if status != "Running" else str(rng.choice([0, 0, 1]))
        rows.append((f"web-{i:04x}", "1/1", status, restarts, f"{rng.randint(1, 30)}d"))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = ["   ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines), lines


def test_a_kubectl_table_keeps_header_rare_statuses_and_counts(token_counter: TokenCounter) -> None:
    text, lines = _pods()
    result = compress(text, count_tokens=token_counter.count, tool_name="kubectl")
    assert result.compressor == "table"
    assert result.compressed_tokens < 0.4 * result.original_tokens
    out = result.text.split("\n")
    assert out[0].startswith("[table (aligned, 5 columns): 200 rows; kept the header and ")
    assert out[1].split() == lines[0].split()
    crashing = [line for line in out if "CrashLoopBackOff" in line and "web-" in line]
    assert [line.split()[0] for line in crashing] == ["web-0025", "web-0096"]
    assert "STATUS: Running 198, CrashLoopBackOff 2" in out
    assert any(line.startswith("[... ") and line.endswith("rows omitted]") for line in out)


def test_stacked_tables_are_read_each_under_its_own_header(token_counter: TokenCounter) -> None:
    # `kubectl get all`: pods, services and deployments, each after a blank line. Read as one
    # table, the later headers passed for rows and the rare status was lost among them.
    _, pods = _pods(60)
    services = ["NAME           TYPE        CLUSTER-IP    PORT(S)    AGE"] + [
        f"service/svc-{i:<2}  ClusterIP   10.96.0.{i:<3}  {8000 + i}/TCP   {i + 1}d"
        for i in range(30)
    ]
    deployments = ["NAME               READY   UP-TO-DATE   AVAILABLE   AGE"] + [
        f"deployment/dep-{i:<2}  {'0/1' if i == 7 else '1/1'}     1            "
        f"{0 if i == 7 else 1}           3d"
        for i in range(30)
    ]
    text = "\n".join([*pods, "", *services, "", *deployments])
    result = compress(text, count_tokens=token_counter.count, tool_name="kubectl")
    assert result.compressor == "table"
    assert result.compressed_tokens < 0.5 * result.original_tokens
    out = result.text.split("\n")
    assert out[0].startswith("[3 tables (aligned): 120 rows; kept the headers and ")
    for header in (pods[0], services[0], deployments[0]):
        assert header.split() in [line.split() for line in out]
    assert [line.split()[0] for line in out if "CrashLoopBackOff" in line and "web-" in line] == [
        "web-0025"
    ]
    assert "STATUS: Running 59, CrashLoopBackOff 1" in out
    assert out.count("") == 2  # the tables stay apart as they were
    (table,) = [
        t for t in explain(text, count_tokens=token_counter.count).trials if t.name == "table"
    ]
    assert table.reason == "100% of the non-blank lines are 3 stacked tables under a header"


def test_a_second_header_straight_under_a_table_starts_another(
    token_counter: TokenCounter,
) -> None:
    # `df -h; df -i`: no blank line between, the second header begins like the first.
    sizes = ["Filesystem  Size  Used Avail Use% Mounted on"] + [
        f"/dev/sd{i:<3}  {i + 10}G   {i}G   10G  {i * 3}% /mnt/d{i}" for i in range(30)
    ]
    inodes = ["Filesystem   Inodes  IUsed  IFree IUse% Mounted on"] + [
        f"/dev/sd{i:<3}   655360  {i * 700:<5}  650000 {i}% /mnt/d{i}" for i in range(30)
    ]
    result = compress("\n".join(sizes + inodes), count_tokens=token_counter.count)
    out = result.text.split("\n")
    assert result.compressor == "table" and out[0].startswith("[2 tables (aligned)")
    assert inodes[0].split() in [line.split() for line in out]


def test_a_first_row_of_values_is_no_header(token_counter: TokenCounter) -> None:
    # openssl ciphers -v: key=value cells; lscpu: `Key:   value`; a table without a header
    # whose first row's cells recur as values below it. Read under such a "header", the
    # counts left that row out and named the columns after its values.
    ciphers = [
        f"CIPHER-{i:02d}  TLSv1.{2 + i % 2}  Kx={'ECDH' if i % 3 else 'any'}  Au=RSA  Mac=AEAD"
        for i in range(40)
    ]
    keys = [f"Setting number {i}:      value {i} of the machine" for i in range(40)]
    states = [f"{'Running' if i % 5 else 'Stopped'}  Ready  Healthy  Primary  Zone{'ABC'[i % 3]}"
              for i in range(40)]  # fmt: skip
    for lines in (ciphers, keys, states):
        result = compress("\n".join(lines), count_tokens=token_counter.count)
        assert result.compressor != "table", lines[0]


def test_ps_rows_split_on_whitespace_and_the_busiest_stay(token_counter: TokenCounter) -> None:
    lines = ["USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND"]
    for i in range(80):
        cpu = "97.5" if i == 41 else "0.0"
        lines.append(f"root {100 + i} {cpu} 0.1 12345 6789 ? S 02:03 0:00 /usr/bin/worker --id {i}")
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="ps")
    assert result.compressor == "table"
    assert "largest %CPU" in result.text.split("\n")[0]
    assert any("97.5" in line and "--id 41" in line for line in result.text.split("\n"))


def test_a_two_word_name_over_no_values_names_one_column(token_counter: TokenCounter) -> None:
    # `kubectl get events`: LAST SEEN's values sit under LAST; split on whitespace, the rows
    # would have had their values one column to the left of their names.
    reasons = [("Normal", "Pulled", "Container image already present")] * 3 + [
        ("Normal", "Started", "Started container api"),
        ("Normal", "Created", "Created container api"),
    ]
    lines = [f"{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<10}{'OBJECT':<22}MESSAGE"]
    for i in range(60):
        kind, reason, message = reasons[i % len(reasons)]
        lines.append(f"{f'{i + 1}m':<12}{kind:<10}{reason:<10}{f'pod/api-{i}':<22}{message}")
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="kubectl")
    assert result.compressor == "table"
    out = result.text.split("\n")
    assert out[1].split("  ")[0] == "LAST SEEN"
    assert "TYPE: Normal 60" in out and "REASON: Pulled 36, Started 12, Created 12" in out


def test_error_rows_are_kept_verbatim(token_counter: TokenCounter) -> None:
    lines = ["id,name,status,message"]
    lines += [f"{i},job-{i},ok,done in {i} ms" for i in range(100)]
    lines[60] = "59,job-59,failed,ERROR: disk quota exceeded"
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "table"
    assert "59,job-59,failed,ERROR: disk quota exceeded" in result.text.split("\n")
    assert missing_error_lines(text, result.text) == []


def test_a_narrow_table_names_the_rows_it_leaves_out(token_counter: TokenCounter) -> None:
    stems = ["any", "attr", "cert", "click", "num", "panda", "pytest", "redis"]
    packages = [f"{a}{b}" for a in stems for b in ("io", "py", "lib", "kit", "ext")]
    lines = ["Package    Version", "---------- -------"]
    lines += [p.ljust(10) + f" {i}.{i % 7}.0" for i, p in enumerate(packages)]
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="pip")
    assert result.compressor == "table"
    assert "rows omitted: Package: " in result.text
    assert "numkit" in result.text


def test_a_headerless_tsv_gets_numbered_columns(token_counter: TokenCounter) -> None:
    text = "\n".join(f"pkg-{i}\t1.{i}.0\t{100 + i * 13}" for i in range(120))
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "table"
    assert "(tsv, 3 columns, no header)" in result.text.split("\n")[0]
    assert "largest #3" in result.text.split("\n")[0]


def test_logs_and_prose_are_not_tables(token_counter: TokenCounter) -> None:
    log = "\n".join(
        f"2025-01-02 10:00:{i % 60:02d} INFO worker handled job {i}" for i in range(100)
    )
    prose = "\n".join(f"Line {i} of a letter, written, with commas, in it." for i in range(100))
    for text in (log, prose):
        names = {t.name for t in explain(text, count_tokens=token_counter.count).trials}
        assert "table" not in names


def _jobs(n: int = 120) -> list[tuple[str, ...]]:
    """A query's result: id, name, status (a few failed, with an error), duration."""
    rows = [("id", "name", "status", "duration_ms", "error")]
    for i in range(1, n + 1):
        failed = i in (17, 88)
        rows.append((
            str(i), f"build-{i:03d}", "failed" if failed else "succeeded", str(1000 + 37 * i % 900),
            "OOMKilled: exit 137" if failed else "",
        ))  # fmt: skip
    return rows


def _bordered(rows: list[tuple[str, ...]], bar: str, rule: str, cross: str) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    line = cross + cross.join(rule * (w + 2) for w in widths) + cross
    cells = [
        bar + bar.join(f" {v.ljust(w)} " for v, w in zip(r, widths, strict=True)) + bar
        for r in rows
    ]
    return [line, cells[0], line, *cells[1:], line]


def test_bordered_tables_are_tables(token_counter: TokenCounter) -> None:
    # mysql's and `sqlite3 -table`'s borders, `-box`'s, and a Markdown table.
    rows = _jobs()
    markdown = _bordered(rows, "|", "-", "|")[1:-1]
    for lines in (_bordered(rows, "|", "-", "+"), _bordered(rows, "│", "─", "┼"), markdown):
        text = "\n".join(lines)
        result = compress(text, count_tokens=token_counter.count, kind="tool_output")
        assert result.compressor == "table", lines[:3]
        out = result.text.split("\n")
        assert out[0].startswith("[table (bordered, 5 columns): 120 rows;")
        bar = lines[1][0]
        assert out[1] == f"{bar} id {bar} name {bar} status {bar} duration_ms {bar} error {bar}"
        assert sum(1 for line in out if line.startswith(bar) and "OOMKilled" in line) == 2
        assert "status: succeeded 118, failed 2" in out
        assert missing_error_lines(text, result.text) == []


def test_a_lower_case_header_over_a_rule_is_a_header(token_counter: TokenCounter) -> None:
    # `sqlite3 -column`: names in lower case, underlined by dashes.
    rows = _jobs()
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    result = compress("\n".join(lines), count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "table"
    assert result.text.split("\n")[0].startswith("[table (aligned, 5 columns): 120 rows;")
    assert "status: succeeded 118, failed 2" in result.text.split("\n")


def _profile(functions: int = 120) -> list[str]:
    """cProfile's report: a preamble, then a header in lower case over columns of numbers
    (a recursive function's calls as `total/primitive`) and the functions' names."""
    rng = random.Random(5)
    rows = [
        ("ncalls", "tottime", "percall", "cumtime", "percall", "filename:lineno(function)"),
        ("6/1", "0.000", "0.000", "2.104", "2.104", "{built-in method builtins.exec}"),
        ("1", "1.377", "1.377", "1.377", "1.377", "job.py:41(slow_merge)"),
    ]
    for i in range(functions):
        calls, total = rng.randint(1, 90000), rng.random() / 50
        rows.append(
            (str(calls), f"{total:.3f}", f"{total / calls:.3f}", f"{total * 1.5:.3f}",
             f"{total * 1.5 / calls:.3f}", f"helpers.py:{i + 10}(step_{i})")
        )  # fmt: skip
    head = ["         908123 function calls (908001 primitive calls) in 2.104 seconds", "",
            "   Ordered by: cumulative time", ""]  # fmt: skip
    return head + ["{:>9} {:>8} {:>8} {:>8} {:>8} {}".format(*row) for row in rows]


def test_a_lower_case_header_over_columns_of_numbers_is_a_header(
    token_counter: TokenCounter,
) -> None:
    # cProfile's names are in lower case with no rule under them: read as no table, its
    # report went uncompressed, 7,313 tokens for 221 lines.
    lines = _profile()
    result = compress("\n".join(lines), count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "table"
    out = result.text.split("\n")
    assert out[0].startswith("[table (aligned, 6 columns): 122 rows;")
    assert out[3].split() == lines[4].split()
    # The function that takes the most time is among the rows kept.
    assert any("slow_merge" in line for line in out)
    assert result.compressed_tokens < 0.3 * result.original_tokens


def test_a_lower_case_line_over_prose_is_no_header(token_counter: TokenCounter) -> None:
    # In lower case a header must stand over columns of numbers: lines of words split into
    # as many words as a line above them proves nothing.
    rows = [f"then we {verb} the {noun} and it {state} again" for verb, noun, state in zip(
        ["moved", "read", "sent", "kept", "lost", "found"] * 5,
        ["box", "note", "file", "key", "map", "list"] * 5,
        ["broke", "held", "failed", "worked", "stopped", "ran"] * 5, strict=True,
    )]  # fmt: skip
    text = "\n".join(["notes from the week of the move", *rows])
    names = {t.name for t in explain(text, count_tokens=token_counter.count).trials}
    assert "table" not in names


# `strace -f -c`: forty lines of `Process attached` before its summary.
STRACE = [*(f"strace: Process {pid} attached" for pid in range(18016, 18056)), *STRACE_SUMMARY]


def test_a_header_over_a_rule_is_found_below_other_output() -> None:
    # `strace -f -c`: forty lines of `Process attached` before the table, whose column of
    # errors is empty in most rows.
    (section,) = find_tables(STRACE)
    table = section.table
    assert table is not None and table.header == 40 and table.rule == 41
    assert table.columns == ("% time", "seconds", "usecs/call", "calls", "errors", "syscall")
    assert table.values[1] == ("2.90", "0.003598", "2", "1379", "589", "openat")
    assert table.values[3][4:] == ("", "clone")


def test_counts_name_a_last_single_value_rather_than_one_other() -> None:
    from sharedctx_server.compress.wording import tally

    seven = ["Created"] * 5 + ["Pulled"] * 4 + ["Started", "Killing", "BackOff", "Evicted"]
    assert (
        tally(seven, limit=5) == "Created 5, Pulled 4, Started 1, Killing 1, BackOff 1, Evicted 1"
    )
    assert tally(seven + ["Pulling"], limit=5).endswith(", 2 other")


def test_numbers_are_read_with_their_units_and_ages_as_seconds() -> None:
    assert numeric_values(["850ms", "1.2s", "12ms"]) == [0.85, 1.2, 0.012]
    assert numeric_values(["250m", "1200m", "3"]) == [0.25, 1.2, 3.0]  # millicores
    assert numeric_values(["12Mi", "1.5Gi"]) == [12e6, 1.5e9]
    # In a column with hours, days or two units, `5m` is five minutes.
    assert numeric_values(["45s", "6m58s", "5m", "2d"]) == [45.0, 418.0, 300.0, 172800.0]
    assert numeric_values(["ok", "failed", "3"]) is None
    assert numeric_values(["12 MB", "3 KB"]) == [12e6, 3e3]  # a unit apart from its number


def test_two_numbers_in_one_cell_are_no_number() -> None:
    # Columns a header did not split (vmstat's `cache` over `2139108    0` before its names
    # were read as words): reading the cell had raised, and with it every Fit of the
    # namespace that held the output.
    assert numeric_values(["2139108 0", "23992", "1", "4", "5"]) == [None, 23992.0, 1.0, 4.0, 5.0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="0123456789 .,-:/%KMGTPimsdhB", max_size=12), max_size=8))
def test_reading_a_column_never_raises(values: list[str]) -> None:
    numbers = numeric_values(values)
    assert numbers is None or len(numbers) == len(values)


def test_vmstat_reads_one_column_per_name(token_counter: TokenCounter) -> None:
    # Lower-case names over numbers that overflow their width and shift the rest right.
    text = """procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 4  0      0 21984640  23992 2139108    0    0   789  1260  504 1258 34  5 60  0  0
 4  0      0 21984640  23992 2139108    0    0     0   320 2560 9594 69  5 26  0  0
 3  0      0 21984640  23992 2139108    0    0    96    40 1541 4982 54  5 42  0  0
 2  1      0 21981200  23992 2139300    0    0  1024 15000 1890 7020 40  9 38 13  0"""
    (section,) = find_tables(text.split("\n"))
    assert section.table is not None
    assert section.table.columns[5:8] == ("cache", "si", "so")
    assert section.table.values[3][8:10] == ("1024", "15000")
    compress(text, count_tokens=token_counter.count, kind="tool_output")  # reads, never raises


def test_a_label_every_line_repeats_is_no_part_of_the_first_column(
    token_counter: TokenCounter,
) -> None:
    # `python -X importtime`: every line opens with `import time:`, the header too. The first
    # column is `self [us]` and holds numbers, so its largest row is kept and marked.
    rows = [(126, 126, "_io"), (26, 26, "marshal"), (7240, 9570, "numpy._core._multiarray_umath")]
    rows += [(40 + i, 90 + i, f"mod{i}") for i in range(20)]
    text = "import time: self [us] | cumulative | imported package\n" + "".join(
        f"import time: {a:>9} | {b:>10} | {name}\n" for a, b, name in rows
    )
    (section,) = find_tables(text.split("\n"))
    assert section.table is not None
    assert section.table.columns == ("self [us]", "cumulative", "imported package")
    assert section.table.values[2] == ("7240", "9570", "numpy._core._multiarray_umath")
    assert "largest self [us]" in compress(text, count_tokens=token_counter.count).text
    # A URL's scheme is no label.
    links = "link | hits\n" + "".join(f"https://example.org/p{i} | {i}\n" for i in range(6))
    (section,) = find_tables(links.split("\n"))
    assert section.table is not None and section.table.values[0][0] == "https://example.org/p0"
