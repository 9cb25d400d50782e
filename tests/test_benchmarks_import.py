"""Every benchmark the README lists starts: its module imports and its command line parses.

The benchmarks run by hand, not in CI; an import that breaks when the server's modules move
would otherwise only show when someone follows the README."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import benchmarks

MODULES = sorted(
    m.name for m in pkgutil.iter_modules(benchmarks.__path__) if not m.name.startswith("_")
)


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_module_imports(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    assert module.__doc__, f"benchmarks.{name} says what it measures"


def test_the_readme_names_only_benchmarks_that_exist() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    named = set(re.findall(r"python -m benchmarks\.(\w+)", readme))
    assert named and named <= set(MODULES)
