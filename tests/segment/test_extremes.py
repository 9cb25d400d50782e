"""Mark terms on the segments that hold a table column's largest or smallest value."""

from __future__ import annotations

import json

from sharedctx_server.fit.superlatives import LEAST, MOST, column_words
from sharedctx_server.segment.extremes import MAX_TIES, extreme_terms

from tests.support.tool_outputs import STRACE_SUMMARY

_PROCESSES = [
    ("root", 1, 0.0, 0.1, 167740, 11392, "?", "Ss", "Dec01", "0:05", "/sbin/init"),
    ("root", 412, 0.0, 0.3, 48212, 30112, "?", "Ss", "Dec01", "0:01", "systemd-journald"),
    ("app", 2210, 12.5, 31.2, 9154340, 2562040, "?", "Sl", "09:12", "41:07", "python -m trainer"),
    ("app", 2301, 3.1, 4.0, 1254340, 328104, "?", "Sl", "09:13", "2:11", "redis-server *:6379"),
    ("root", 3120, 0.0, 0.0, 7060, 3200, "pts/0", "R+", "11:40", "0:00", "ps aux"),
    ("root", 88, 0.5, 0.2, 50000, 20000, "?", "S", "Dec01", "0:00", "kworker/0:1"),
]
_ROW = "{:<8} {:>7} {:>4} {:>4} {:>8} {:>8} {:<8} {:<4} {:<5} {:>6} {}"
# As `ps aux` prints it: numbers right-aligned under their column's name.
PS = [
    _ROW.format(
        "USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND"
    ),
    *(_ROW.format(*process) for process in _PROCESSES),
]


def marks_by_line(lines: list[str]) -> dict[int, list[str]]:
    """Marks per line: every line a segment of its own."""
    return extreme_terms(lines, list(range(len(lines))))


def test_the_rows_holding_a_columns_largest_and_smallest_carry_its_marks() -> None:
    marks = marks_by_line(PS)
    assert MOST + "mem" in marks[3] and MOST + "cpu" in marks[3] and MOST + "rss" in marks[3]
    assert LEAST + "rss" in marks[5] and LEAST + "vsz" in marks[5]
    # PID numbers its rows: its largest is no answer to anything.
    assert not any(term.endswith("pid") for terms in marks.values() for term in terms)
    # Nor is a row's number read as a log's, named by the word before it (`root 412`).
    assert not any(term.endswith("root") for terms in marks.values() for term in terms)


def test_a_value_shared_by_more_rows_than_max_ties_marks_none() -> None:
    marks = marks_by_line(PS)
    # %CPU is 0.0 in three rows; fewer than MAX_TIES + 1, so each carries the mark.
    assert MAX_TIES >= 3
    assert [line for line, terms in marks.items() if LEAST + "cpu" in terms] == [1, 2, 5]
    zeros = [PS[0], *[PS[5].replace("ps aux", f"sleep {i}") for i in range(MAX_TIES + 1)], PS[3]]
    tied = marks_by_line(zeros)
    assert not any(LEAST + "cpu" in terms for terms in tied.values())
    assert MOST + "cpu" in tied[len(zeros) - 1]


def test_marks_go_to_the_segment_holding_the_row() -> None:
    marks = extreme_terms(PS, [0, 2, 4])  # header and init; journald and trainer; redis and ps
    assert MOST + "mem" in marks[1] and LEAST + "rss" in marks[2]


def test_text_without_a_headed_table_has_no_marks() -> None:
    log = [
        f"2026-12-06 10:00:{i:02d} INFO worker processed batch {i} in {i * 7} ms" for i in range(30)
    ]
    assert extreme_terms(log, list(range(len(log)))) == {}
    headerless = ["12 a.txt", "400 b.txt", "7 c.txt", "90 d.txt", "33 e.txt"]
    assert extreme_terms(headerless, list(range(len(headerless)))) == {}


def test_a_csv_column_is_marked_by_its_name() -> None:
    rows = ["store,region,revenue,units"] + [
        f"store-{i},north,{1000 + 37 * i},{50 + (i * 13) % 41}" for i in range(20)
    ]
    marks = marks_by_line(rows)
    (revenue,) = column_words("revenue")
    assert MOST + revenue in marks[20]
    assert LEAST + revenue in marks[1]
    fewest = min(range(20), key=lambda i: 50 + (i * 13) % 41)
    assert LEAST + "unit" in marks[fewest + 1]


LS = """\
total 2104
drwxr-xr-x 2 dev dev    4096 Dec  2 02:05 cache
-rw-r--r-- 1 dev dev     512 Dec  2 02:05 notes.txt
-rw-r--r-- 1 dev dev 1843200 Dec  2 02:05 model.onnx
-rw-r--r-- 1 dev dev   20480 Dec  2 02:05 vocab.txt
-rw-r--r-- 1 dev dev      64 Dec  2 02:05 .env
""".splitlines()


def test_a_listings_largest_and_smallest_files_are_marked_as_sizes_only_when_it_is_one() -> None:
    marks = extreme_terms(LS, list(range(len(LS))), listing=True)
    (size,) = column_words("size")
    assert marks == {3: [MOST, MOST + size], 5: [LEAST, LEAST + size]}
    # Reading a listing is too slow to try on every text: only when its compressor said so.
    unread = extreme_terms(LS, list(range(len(LS))))
    assert not any(size in term for terms in unread.values() for term in terms)


def test_a_listings_oldest_and_newest_files_are_marked_by_age() -> None:
    # `ls -l` dates a file of the last six months by its time of day, an older one by its
    # year; listed in January, December's times are of the year before. Folders are no file.
    listing = [
        "total 48",
        "drwxr-xr-x 2 dev dev 4096 Jan  9 10:00 cache",
        "-rw-r--r-- 1 dev dev  512 Dec 30 23:10 notes.txt",
        "-rw-r--r-- 1 dev dev 2048 Jan  8 09:15 model.onnx",
        "-rw-r--r-- 1 dev dev 1024 Mar  3  2021 LICENSE",
        "-rw-r--r-- 1 dev dev  900 Jul 14  2023 setup.cfg",
        "-rw-r--r-- 1 dev dev  700 Jan  2 08:00 vocab.txt",
    ]
    marks = extreme_terms(listing, list(range(len(listing))), listing=True)
    (age,) = column_words("age")
    assert MOST + age in marks[4] and LEAST + age in marks[3]
    assert not any(age in term for k in (1, 2, 5, 6) for term in marks.get(k, []))
    iso = [
        "-rw-r--r-- 1 dev dev 10 2024-05-01 10:00 a",
        "-rw-r--r-- 1 dev dev 20 2023-11-30 08:00 b",
        "-rw-r--r-- 1 dev dev 30 2024-05-01 10:05 c",
    ]
    marks = extreme_terms(iso, [0, 1, 2], listing=True)
    assert MOST + age in marks[1] and LEAST + age in marks[2]


def test_in_du_a_folder_whose_contents_are_listed_is_their_total_not_an_answer() -> None:
    du = ["8\tsite/jsonpointer", "324\tsite/hf_xet", "93104\tsite/playwright", "93436\tsite"]
    marks = extreme_terms(du, list(range(len(du))), listing=True)
    assert MOST in marks[2] and LEAST in marks[0] and 3 not in marks


def test_a_numeric_json_field_shared_by_records_is_a_column_named_by_its_key() -> None:
    records = [{"sku": f"SKU-{i}", "price": [19.5, 7.25, 410.0, 88.0, 12.0][i], "id": i}
               for i in range(5)]  # fmt: skip
    lines = json.dumps({"items": records}, indent=2).splitlines()
    marks = marks_by_line(lines)
    (price,) = column_words("price")
    assert [lines[k] for k, terms in marks.items() if MOST + price in terms] == [
        '      "price": 410.0,'
    ]
    assert [lines[k] for k, terms in marks.items() if LEAST + price in terms] == [
        '      "price": 7.25,'
    ]
    assert not any(term.endswith("id") for terms in marks.values() for term in terms)
    # JSON Lines: each record on a line of its own.
    jsonl = [json.dumps(record) for record in records]
    assert MOST + price in marks_by_line(jsonl)[2]


def test_a_json_key_on_fewer_lines_than_records_make_is_no_column() -> None:
    config = json.dumps({"workers": 4, "timeout": 30, "retries": 3}, indent=2).splitlines()
    assert marks_by_line(config) == {}


def test_kubernetes_quantities_and_ages_read_as_numbers() -> None:
    # `kubectl top pods`: millicores and mebibytes; `kubectl get pods`: ages.
    top = ["NAME                    CPU(cores)   MEMORY(bytes)   AGE"]
    for name, cpu, memory, age in (
        ("api-7f9c-x1", "250m", "310Mi", "6m58s"),
        ("api-7f9c-x2", "1200m", "1Gi", "3h12m"),
        ("worker-5d8-k3", "3", "512Mi", "45s"),
        ("cron-77b-q9", "15m", "64Mi", "2d"),
    ):
        top.append(f"{name:<24}{cpu:<13}{memory:<16}{age}")
    marks = marks_by_line(top)
    (cpu,) = [w for w in column_words("CPU(cores)") if w.startswith("cpu")]
    (age,) = column_words("AGE")
    assert MOST + cpu in marks[3] and LEAST + cpu in marks[4]  # 3 cores > 1200m
    assert MOST + "memory" in marks[2]  # 1Gi > 512Mi
    assert MOST + age in marks[4] and LEAST + age in marks[3]  # 2d oldest, 45s newest


def test_a_logs_named_numbers_of_one_statement_are_columns() -> None:
    rows = [(37 * i) % 90 + 100 for i in range(12)]
    took = [(11 * i) % 13 + 5 for i in range(12)]
    log = []
    for i in range(12):
        log.append(f"10:00:{i:02d} INFO job job-{i} finished in {[3.5, 1.25][i % 2] + i}s")
        log.append(f"10:00:{i:02d} DEBUG processed batch {i} rows={rows[i]} in {took[i]} ms")
    log[6] = "10:00:03 INFO job job-3 finished in 2.5 min"
    marks = marks_by_line(log)
    (time,) = column_words("time")
    (row,) = column_words("rows")
    # 2.5 min (150 s) is the longest of job-0's 3.5s, job-1's 2.25s, ..., job-11's 12.25s.
    assert MOST + time in marks[6] and LEAST + time in marks[2]

    # `in` of a batch line is another statement, with its own longest and shortest.
    def line_of(values: list[int], pick: int) -> int:
        return 2 * values.index(pick) + 1

    assert MOST + time in marks[line_of(took, max(took))]
    assert LEAST + time in marks[line_of(took, min(took))]
    assert MOST + row in marks[line_of(rows, max(rows))]
    # A batch number grows on every line: it counts, it measures nothing.
    assert not any(term.endswith("batch") for terms in marks.values() for term in terms)


def test_a_profile_marks_the_function_that_takes_the_most_time() -> None:
    # cProfile's columns: a name in lower case, joined words (`tottime`), ratios (`6/1`).
    lines = [
        "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)",
        "      6/1    0.000    0.000    0.649    0.649 {built-in method builtins.exec}",
        "        1    0.008    0.008    0.643    0.643 prof.py:10(main)",
        "        1    0.323    0.323    0.323    0.323 prof.py:5(slow_sort)",
        "    20001    0.073    0.000    0.073    0.000 {method 'findall' of 're.Pattern'}",
        "   160000    0.062    0.000    0.062    0.000 {method 'hexdigest' of 'HASH'}",
    ]
    marks = marks_by_line(lines)
    (time,) = column_words("time")
    assert MOST + time in marks[3] and MOST + column_words("tottime")[0] in marks[3]
    assert MOST + time in marks[1]  # the largest cumulative time: "most time" asks both
    (calls,) = column_words("calls")
    assert MOST + calls in marks[5]


def test_a_row_of_totals_is_no_rows_largest() -> None:
    lines = STRACE_SUMMARY
    marks = marks_by_line(lines)
    (errors,) = column_words("errors")
    assert MOST + errors in marks[3]  # openat's 589, not the total's 1364
    (time,) = column_words("time")
    assert MOST + time in marks[2]
    total = len(lines) - 1
    assert total not in marks or not any(term.startswith(MOST) for term in marks[total])


def test_an_access_logs_rt_is_a_time() -> None:
    # nginx's `rt=` (request time) is too short a name for a question to ask by: it is read
    # as a time, so "what was the slowest request?" finds the largest.
    lines = [
        f'10.0.3.{i} - - [07/Dec/2026:10:00:{i:02d} +0000] "GET /api/x/{i} HTTP/1.1" 200 512 '
        f'"-" "curl/8.4.0" rt={t}'
        for i, t in enumerate(["0.012", "0.400", "0.031", "0.008", "0.020"])
    ]
    marks = marks_by_line(lines)
    (time,) = column_words("time")
    assert MOST + time in marks[1] and LEAST + time in marks[3]
