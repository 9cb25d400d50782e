"""The generated log dataset: the layout benchmarks.logs reads, and the same bytes every time."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import pytest

from benchmarks.logs import questions_for, read_log
from benchmarks.synthetic_logs import SEED, SYSTEMS, write_dataset

# sha256 of the default-seed dataset (every file, by path): results of benchmarks.logs on it
# compare only on these bytes, so a change must be on purpose (and the results measured again).
DEFAULT_DIGEST = "c8c35548f23f14ed43da105520c91635315e52d4e75beaa3877707774714d4ea"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default-seed dataset, generated once for the module."""
    out = tmp_path_factory.mktemp("synthetic_logs")
    write_dataset(out)
    return out


def digest(folder: Path) -> str:
    """sha256 over every file under `folder`: its relative path, then its bytes."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def structured(folder: Path) -> list[dict[str, str]]:
    """The system's CSV rows."""
    with (folder / f"{folder.name}_2k.log_structured.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_regex(template: str) -> re.Pattern[str]:
    """`template` with `<*>` read as any text."""
    return re.compile(".*".join(re.escape(part) for part in template.split("<*>")), re.DOTALL)


def test_eight_systems_of_2000_lines(dataset: Path) -> None:
    assert sorted(p.name for p in dataset.iterdir()) == sorted(s.name for s in SYSTEMS)
    for system in SYSTEMS:
        folder = dataset / system.name
        rows = structured(folder)
        assert len(read_log(folder)) == 2000
        assert len(rows) == 2000
        assert [int(r["LineId"]) for r in rows] == list(range(1, 2001))
        assert set(rows[0]) >= {"LineId", "Content", "EventId", "EventTemplate"}


def test_content_is_in_its_line_and_matches_its_template(dataset: Path) -> None:
    for system in SYSTEMS:
        folder = dataset / system.name
        for line, row in zip(read_log(folder), structured(folder), strict=True):
            assert row["Content"] in line
            assert as_regex(row["EventTemplate"]).fullmatch(row["Content"]), row


def test_every_system_has_twelve_rare_questions(dataset: Path) -> None:
    """The benchmark's rule: templates seen 1-3 times with 3+ words of 3+ letters."""
    for system in SYSTEMS:
        questions = questions_for(dataset / system.name, per_system=12, seed=13)
        assert len(questions) == 12, system.name
        assert all(1 <= len(q.lines) <= 3 for q in questions)


def test_same_seed_same_bytes(dataset: Path, tmp_path: Path) -> None:
    write_dataset(tmp_path / "again", seed=SEED)
    assert digest(tmp_path / "again") == digest(dataset) == DEFAULT_DIGEST
    write_dataset(tmp_path / "other", seed=SEED + 1)
    assert digest(tmp_path / "other") != digest(dataset)
