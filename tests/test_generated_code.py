"""The committed generated code is exactly what scripts/gen_protos.py produces from protos/."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_committed_generated_code_matches_the_protos(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    written = gen.generate(tmp_path)
    assert written
    for fresh in written:
        committed = ROOT / "client" / fresh.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is missing: run python scripts/gen_protos.py"
        assert committed.read_text() == fresh.read_text(), (
            f"{committed.relative_to(ROOT)} drifted from protos/: run python scripts/gen_protos.py"
        )
