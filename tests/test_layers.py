"""The server's modules import only downwards, with no import cycles (each unit may use the
units listed before it in LAYERS, never one after), the client package never imports the
server package, and no module grows past one job's length."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server" / "sharedctx_server"

# Lowest first. A module belongs to the unit named by its first part under sharedctx_server.
LAYERS = (
    "errors",
    "model",
    "settings",
    "tokens",
    "cores",
    "offload",
    "fit",
    "compress",
    "segment",
    "embedding",
    "state",
    "security",
    "services",
    "edge",
    "server",
    "workers",
    "cli",
)


def unit_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "sharedctx_server" or len(parts) < 2:
        return None
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under `if TYPE_CHECKING:` (imports for annotations only)."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def imports(path: Path, module: str) -> set[str]:
    """The modules (or module.name) `module` imports at run time."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def server_modules() -> dict[str, Path]:
    out = {}
    for path in SERVER.rglob("*.py"):
        parts = list(path.relative_to(SERVER.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def test_server_modules_import_only_downwards() -> None:
    upward = []
    for module, path in server_modules().items():
        mine = unit_of(module)
        if mine is None:
            continue
        for target in imports(path, module):
            theirs = unit_of(target)
            if theirs is not None and theirs > mine:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_server_modules_form_no_import_cycle() -> None:
    modules = server_modules()
    graph = {
        m: {t for t in imports(p, m) if t in modules and t != m and not m.startswith(t + ".")}
        for m, p in modules.items()
    }
    # A package's __init__ importing its own submodules is how packages export; not a cycle.
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_client_package_never_imports_the_server_package() -> None:
    client = ROOT / "client" / "sharedctx"
    offenders = []
    for path in client.rglob("*.py"):
        module = ".".join(path.relative_to(client.parent).with_suffix("").parts)
        if any(t.split(".")[0] == "sharedctx_server" for t in imports(path, module)):
            offenders.append(module)
    assert offenders == []


# A module holds one job; past this many lines it usually holds two. The settings module is
# the one exception: a declarative table of every setting (its flag, variable, default, rule
# and help), which reads best whole.
MAX_MODULE_LINES = 450
LONG_BY_DESIGN = {"server/sharedctx_server/settings.py"}


def test_no_module_outgrows_one_job() -> None:
    sources = [*SERVER.rglob("*.py"), *(ROOT / "client" / "sharedctx").rglob("*.py")]
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sources
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py", "_pb2.pyi"))
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= LONG_BY_DESIGN, f"split these by job: {long}"
