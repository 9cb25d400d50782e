"""Realistic tool outputs of an agent's task, made deterministically for the excerpt tests:
a worker's service log (13 KB) with one failing job and its traceback, a pytest run, a pip
install, a `git log --stat` and a `git status` halfway through a refactor; and tables of
tools (`strace -c`)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

FAILING_LINE = "ConnectionError: HTTPSConnectionPool(host='s3.eu-west-1.amazonaws.com', port=443)"
_FILES = ["src/app.py", "src/jobs/resize.py", "src/storage/s3.py", "README.md", "setup.cfg"]
_JOBS = ("thumbnail-sync", "resize-images", "send-digest", "purge-cache", "index-search")


def service_log(lines: int = 160, fail_at: int = 97) -> str:
    """A job worker's log; the job resize-images fails once, at record `fail_at`."""
    rng = random.Random(7)
    t = datetime(2026, 11, 30, 9, 0, 0)
    out = []
    for i in range(lines):
        t += timedelta(seconds=rng.randint(1, 9))
        stamp = f"{t:%Y-%m-%d %H:%M:%S},{rng.randint(100, 999)}"
        worker = f"worker-{rng.randint(1, 4)}"
        job = rng.choice(_JOBS)
        roll = rng.random()
        if i == fail_at:
            out += [
                f"{stamp} ERROR {worker} scheduler.run: job resize-images (id=8812) failed "
                "after 3 attempts",
                "Traceback (most recent call last):",
                '  File "/srv/app/jobs/resize.py", line 88, in run',
                "    blob = self.storage.fetch(key)",
                '  File "/srv/app/storage/s3.py", line 41, in fetch',
                "    return self._client.get_object(Bucket=self.bucket, Key=key)",
                f"{FAILING_LINE}: Max retries exceeded with url: /media/originals/8812.jpg "
                "(Caused by NewConnectionError('Failed to establish a new connection: "
                "[Errno 111] Connection refused'))",
            ]
        elif roll < 0.5:
            out.append(f"{stamp} INFO {worker} scheduler.run: job {job} (id={8000 + i}) started")
        elif roll < 0.85:
            took = rng.randint(20, 4000)
            out.append(
                f"{stamp} INFO {worker} scheduler.run: job {job} (id={8000 + i}) finished in "
                f"{took} ms"
            )
        else:
            host = rng.choice(["db", "cache", "s3"])
            out.append(f"{stamp} DEBUG {worker} http.pool: reusing connection to {host}.internal")
    return "\n".join(out) + "\n"


def pytest_log() -> str:
    """A pytest run with one failure among 212 tests."""
    out = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0",
        "collected 212 items",
        "",
    ]
    out += [f"tests/test_module_{i:02d}.py {'.' * 17} [{(i + 1) * 8:3d}%]" for i in range(12)]
    out += [
        "",
        "=================================== FAILURES ===================================",
        "__________________________ test_thumbnail_crop_ratio ___________________________",
        "",
        "    def test_thumbnail_crop_ratio():",
        "        img = make_image(640, 480)",
        ">       assert crop_ratio(img) == pytest.approx(1.333, rel=1e-3)",
        "E       assert 1.5 == 1.333 ± 1.3e-03",
        "",
        "tests/test_thumbs.py:57: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_thumbs.py::test_thumbnail_crop_ratio - assert 1.5 == 1.333",
        "======================== 1 failed, 211 passed in 14.02s ========================",
    ]
    return "\n".join(out) + "\n"


def pip_log() -> str:
    """`pip install` of a handful of packages."""
    packages = (
        "boto3 botocore s3transfer jmespath urllib3 python-dateutil six pillow celery kombu "
        "billiard vine click redis amqp"
    ).split()
    out = []
    for name in packages:
        out += [
            f"Collecting {name}",
            f"  Downloading {name}-1.2.3-py3-none-any.whl (123 kB)",
            "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 123.4/123.4 kB 2.1 MB/s eta 0:00:00",
        ]
    out.append(f"Installing collected packages: {', '.join(packages)}")
    out.append("Successfully installed " + " ".join(f"{p}-1.2.3" for p in packages))
    return "\n".join(out) + "\n"


def git_log(commits: int = 14) -> str:
    """`git log --stat` of a small project."""
    rng = random.Random(3)
    subjects = (
        "Add retry budget to the uploader",
        "Tidy the settings loader",
        "Document the cache layout",
        "Bump dependencies",
        "Fix flaky clock test",
        "Speed up thumbnail encoding",
        "Split the scheduler module",
    )
    out = []
    t = datetime(2026, 11, 20, 12, 0, 0)
    for i in range(commits):
        t += timedelta(hours=rng.randint(2, 30))
        out += [
            f"commit {rng.getrandbits(160):040x}",
            "Author: Dev Person <dev@example.org>",
            f"Date:   {t:%a %b %d %H:%M:%S %Y} +0000",
            "",
            f"    {rng.choice(subjects)} ({i})",
            "",
        ]
        files = rng.sample(_FILES, k=3)
        for name in files:
            added, removed = rng.randint(1, 40), rng.randint(0, 20)
            out.append(f" {name:<28} | {added + removed:3d} {'+' * added}{'-' * removed}")
        out.append(f" {len(files)} files changed, 57 insertions(+), 12 deletions(-)")
        out.append("")
    return "\n".join(out)


# pytest's failures section (default output) for two failures and one raised a call down:
# pytest repeats locations, `_ _ _` separators and arguments inside the block; its location
# and separator lines end in a space (written `\x20` here).
PYTEST_FAILURES = """\
=================================== FAILURES ===================================
____________________________ test_reserve_too_many _____________________________

warehouse = {'available': 5, 'sku': 'WIDGET-42'}

    def test_reserve_too_many(warehouse):
>       assert reserve(warehouse, 9)["available"] == 0
               ^^^^^^^^^^^^^^^^^^^^^

test_inventory.py:17:\x20
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\x20

stock = {'available': 5, 'sku': 'WIDGET-42'}, qty = 9

    def reserve(stock, qty):
        if qty > stock["available"]:
>           raise ValueError(f"insufficient stock: wanted {qty}, have {stock['available']}")
E           ValueError: insufficient stock: wanted 9, have 5

test_inventory.py:5: ValueError
_______________________________ test_sku_format ________________________________

warehouse = {'available': 5, 'sku': 'WIDGET-42'}

    def test_sku_format(warehouse):
>       assert warehouse["sku"].startswith("GADGET")
E       AssertionError: assert False
E        +  where False = <built-in method startswith of str object at 0x7f27a16c2930>('GADGET')
E        +    where <built-in method startswith of str object> = 'WIDGET-42'.startswith

test_inventory.py:20: AssertionError
_____________________________ test_price_rounding ______________________________

    def test_price_rounding():
>       assert round(2.675, 2) == 2.68
E       assert 2.67 == 2.68
E        +  where 2.67 = round(2.675, 2)

test_inventory.py:27: AssertionError
=========================== short test summary info ============================
FAILED test_inventory.py::test_reserve_too_many - ValueError: insufficient st...
FAILED test_inventory.py::test_sku_format - AssertionError: assert False
FAILED test_inventory.py::test_price_rounding - assert 2.67 == 2.68
3 failed, 13 passed in 0.92s
"""


# rustc's E0308 as cargo prints it: the message is on a gutter line under the quoted source.
RUSTC_E0308 = (
    "error[E0308]: mismatched types",
    " --> invoicer/src/money.rs:6:5",
    "  |",
    "3 | pub fn total_cents(inv: &Invoice) -> i64 {",
    "  |                                      --- expected `i64` because of return type",
    "...",
    "6 |     sum",
    "  |     ^^^ expected `i64`, found `u64`",
    "  |",
    "help: you can convert a `u64` to an `i64` and panic if the converted value doesn't fit",
    "  |",
    "6 |     sum.try_into().unwrap()",
    "  |        ++++++++++++++++++++",
    "",
)


# `cargo build` of a two-error program (rustc 1.8x): the quoted source lines and the `help:`
# fix say nothing like "error".
CARGO_BUILD_ERRORS = (
    "   Compiling calc v0.1.0 (/src/calc)",
    "error[E0277]: a value of type `i64` cannot be made by summing an iterator over elements of type `&u64`",  # noqa: E501 (as cargo prints it)
    " --> src/main.rs:4:14",
    "  |",
    "4 |     v.iter().sum()",
    "  |              ^^^ value of type `i64` cannot be made by summing a `std::iter::Iterator<Item=&u64>`",  # noqa: E501 (as cargo prints it)
    "  |",
    "  = help: the trait `Sum<&u64>` is not implemented for `i64`",
    "help: the following other types implement trait `Sum<A>`",
    " --> /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/traits/accum.rs:48:8",  # noqa: E501 (as cargo prints it)
    "  |",
    "  = note: `i64` implements `Sum`",
    " ::: /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/traits/accum.rs:70:8",  # noqa: E501 (as cargo prints it)
    "  |",
    "  = note: `i64` implements `Sum<&i64>`",
    " ::: /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/traits/accum.rs:204:0",  # noqa: E501 (as cargo prints it)
    "  |",
    "  = note: in this macro invocation",
    "note: the method call chain might not have had the expected associated types",
    " --> src/main.rs:4:7",
    "  |",
    "4 |     v.iter().sum()",
    "  |     - ^^^^^^ `Iterator::Item` is `&u64` here",
    "  |     |",
    "  |     this expression has type `&Vec<u64>`",
    "note: required by a bound in `std::iter::Iterator::sum`",
    " --> /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/traits/iterator.rs:3653:4",  # noqa: E501 (as cargo prints it)
    "  = note: this error originates in the macro `integer_sum_product` (in Nightly builds, run with -Z macro-backtrace for more info)",  # noqa: E501 (as cargo prints it)
    "",
    "error[E0308]: mismatched types",
    " --> src/main.rs:8:14",
    "  |",
    '8 |     m.insert("a", 1);',
    "  |       ------ ^^^ expected `String`, found `&str`",
    "  |       |",
    "  |       arguments to this method are incorrect",
    "  |",
    "note: method defined here",
    " --> /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/collections/hash/map.rs:1295:11",  # noqa: E501 (as cargo prints it)
    "help: try using a conversion method",
    "  |",
    '8 |     m.insert("a".to_string(), 1);',
    "  |                 ++++++++++++",
    "",
    "Some errors have detailed explanations: E0277, E0308.",
    "For more information about an error, try `rustc --explain E0277`.",
    'error: could not compile `calc` (bin "calc") due to 2 previous errors',
    "",
    "[exit status 101]",
)


def git_status(folders: int = 8, per_folder: int = 9) -> tuple[str, list[str]]:
    """A long `git status` (a refactor halfway: many edits, a few deletions) and the paths
    it says were deleted."""
    modified, deleted = [], []
    for f in range(folders):
        for k in range(per_folder):
            path = f"src/service_{f}/part_{f}_{k}.py"
            (deleted if (f * per_folder + k) % 7 == 3 else modified).append(path)
    changes = sorted([(p, "modified") for p in modified] + [(p, "deleted") for p in deleted])
    text = "\n".join(
        [
            "On branch refactor/services",
            "Changes not staged for commit:",
            '  (use "git add/rm <file>..." to update what will be committed)',
            '  (use "git restore <file>..." to discard changes in working directory)',
            *(f"\t{change}:   {path}" for path, change in changes),
            "",
            'no changes added to commit (use "git add" and/or "git commit -a")',
        ]
    )
    return text + "\n", deleted


# `strace -c`'s summary: a header in lower case over a rule, a column (errors) empty in most
# rows, and a row of totals under a closing rule.
STRACE_SUMMARY = [
    "% time     seconds  usecs/call     calls    errors syscall",
    "------ ----------- ----------- --------- --------- ----------------",
    " 80.62    0.100076        1250        80        40 wait4",
    "  2.90    0.003598           2      1379       589 openat",
    "  2.82    0.003503           1      1752       331 newfstatat",
    "  2.18    0.002705          67        40           clone",
    "  2.03    0.002523           2       949           mmap",
    "  1.19    0.001478           1       943           close",
    "  0.92    0.001142           2       388           read",
    "------ ----------- ----------- --------- --------- ----------------",
    "100.00    0.124131          13      9115      1364 total",
]
