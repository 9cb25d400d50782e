"""Markers of the deploy tests, and the image test's timings in the terminal summary."""

from __future__ import annotations

from collections.abc import Callable

import pytest

_TIMINGS = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes minutes, not seconds (deselect with -m 'not slow')"
    )
    config.addinivalue_line(
        "markers", "image: builds the container image with podman and starts it (needs root)"
    )
    config.stash[_TIMINGS] = []


@pytest.fixture
def report_timing(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Record a line for the terminal summary: captured output is only shown on failure, and
    the build and start times are wanted from every run (CI's log included)."""
    lines = request.config.stash[_TIMINGS]

    def report(line: str) -> None:
        lines.append(line)
        print(line)

    return report


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(_TIMINGS, [])
    if lines:
        terminalreporter.section("container image timings")
        for line in lines:
            terminalreporter.write_line(line)
