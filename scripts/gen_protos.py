"""Generate the Python code for protos/ into client/sharedctx/ with the pinned grpcio-tools.

Run `python scripts/gen_protos.py` after editing a .proto; tests/test_generated_code.py fails
when the committed output drifts from what this script produces.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
OUT = ROOT / "client"
# Keep in step with the dev extra in pyproject.toml: generated code embeds this version.
PINNED_GRPCIO_TOOLS = "1.85.1"


def proto_files() -> list[Path]:
    """Every .proto under protos/, in a stable order."""
    return sorted(PROTO_ROOT.rglob("*.proto"))


def generate(out: Path = OUT) -> list[Path]:
    """Run protoc into `out`; return the files it wrote."""
    installed = version("grpcio-tools")
    if installed != PINNED_GRPCIO_TOOLS:
        raise SystemExit(
            f"grpcio-tools {installed} is installed; generated code is pinned to "
            f"{PINNED_GRPCIO_TOOLS}: pip install grpcio-tools=={PINNED_GRPCIO_TOOLS}"
        )
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    written = []
    for proto in proto_files():
        stem = out / proto.relative_to(PROTO_ROOT).with_suffix("")
        written += [
            stem.parent / f"{stem.name}{s}" for s in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
        ]
        init = stem.parent / "__init__.py"
        if not init.exists():
            init.write_text('"""Generated protocol code (scripts/gen_protos.py)."""\n')
    return written


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
