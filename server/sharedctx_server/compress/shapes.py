"""Line shapes that more than one reader of tool output needs (the log compressor, the
segmenter, whitespace normalisation): the time a CI runner stamps every line with, a failed
assertion's values, and the gutter of source a compiler quotes."""

from __future__ import annotations

__all__ = ["ASSERTED_VALUE", "RUNNER_STAMP", "SOURCE_GUTTER"]

# An RFC 3339 time that CI runners and container logs put before every line (GitHub Actions,
# `docker logs -t`, `kubectl logs --timestamps`), with the space after it.
RUNNER_STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d) "
# A failed assertion's value, as test runners print it under the failure (xUnit and NUnit
# unindented): `Expected: 0`, `Actual:   4.99`, `But was:  4.99`, jest's `Received: 90.9`.
ASSERTED_VALUE = r"(?:Expected|Actual|But was|Received)\b[^:\n]{0,20}:\s"
# The gutter of source lines a compiler or linter quotes under a diagnostic: an optional line
# number and a bar (`12 |     sum`, `   |     ^^^ expected i64`).
SOURCE_GUTTER = r"(?:\d+[ \t]*)?\|"
