"""Line shapes that more than one reader of tool output needs (the log compressor, the
segmenter, whitespace normalisation, block heads): the time a CI runner or dbt stamps every
line with, a failed assertion's values, the gutter of source a compiler quotes, and what a
terraform plan will do to a resource."""

from __future__ import annotations

__all__ = [
    "ASSERTED_VALUE",
    "CLOCK_STAMP",
    "LINE_NUMBER",
    "PLANNED_ACTION",
    "RUNNER_STAMP",
    "SOURCE_GUTTER",
]

# An RFC 3339 time that CI runners and container logs put before every line (GitHub Actions,
# `docker logs -t`, `kubectl logs --timestamps`), with the space after it.
RUNNER_STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d) "
# A time of day alone before every line (dbt's `09:47:16  Database Error in model x`), with
# the space after it.
CLOCK_STAMP = r"\d\d:\d\d:\d\d(?:[.,]\d+)? "
# A failed assertion's value, as test runners print it under the failure (xUnit and NUnit
# unindented): `Expected: 0`, `Actual:   4.99`, `But was:  4.99`, jest's `Received: 90.9`.
ASSERTED_VALUE = r"(?:Expected|Actual|But was|Received)\b[^:\n]{0,20}:\s"
# The gutter of source lines a compiler or linter quotes under a diagnostic: an optional line
# number and a bar (`12 |     sum`, `   |     ^^^ expected i64`).
SOURCE_GUTTER = r"(?:\d+[ \t]*)?\|"
# The number `cat -n`, `nl` or a coding agent's file reader puts before each line of a file: a
# right-aligned number and a tab (or an arrow), `    12\tdef f():`, `    12→def f():`.
LINE_NUMBER = r" *(\d+)(?:\t|→)"
# What a terraform plan will do to a resource, one line each (`  # aws_instance.web will be
# created`, `  # aws_db_instance.main must be replaced`).
PLANNED_ACTION = r"^\s*# \S+ (?:will be|must be) "
