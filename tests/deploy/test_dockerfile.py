"""The container image: static checks of the Dockerfile everywhere, a real build and an offline
start only where a Docker engine answers."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
BASE_DEPLOYMENT = REPO / "deploy" / "base" / "deployment.yaml"

HEALTH_CHECK = (
    "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; "
    "r = g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')).Check("
    "h.HealthCheckRequest(), timeout=3); sys.exit(r.status != h.HealthCheckResponse.SERVING)"
)


@dataclass
class Stage:
    """One FROM ... section: its base image, alias and (instruction, arguments) pairs."""

    image: str
    alias: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, instruction: str) -> list[str]:
        return [a for i, a in self.instructions if i == instruction]


def parse_dockerfile(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the stages, with line continuations joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "Dockerfile ends inside a line continuation"

    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        instruction, _, rest = line.partition(" ")
        instruction, rest = instruction.upper(), rest.strip()
        if instruction == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: global_args[m[1] or m[2]], words[0])
            alias = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(image, alias))
        elif not stages:
            assert instruction == "ARG", f"{instruction} before the first FROM"
            name, _, default = rest.partition("=")
            global_args[name] = default
        else:
            stages[-1].instructions.append((instruction, rest))
    return global_args, stages


def env_of(stage: Stage) -> dict[str, str]:
    env: dict[str, str] = {}
    for args in stage.args("ENV"):
        for word in shlex.split(args):
            key, _, value = word.partition("=")
            env[key] = value
    return env


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text())[1]


def test_dockerfile_is_multi_stage_on_python_slim(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    builder, final = stages[0], stages[-1]
    assert builder.alias == "builder"
    assert final.image == "python:3.11-slim"
    assert any(
        "pip install" in run and "'.[server]'" in run and " -e " not in run
        for run in builder.args("RUN")
    ), "the builder installs the project with its server extra (not editable)"
    copies = final.args("COPY")
    assert any(c.startswith("--from=builder ") for c in copies)
    assert not any("pip install" in run for run in final.args("RUN")), "install in the builder"
    assert copies == ["--from=builder /opt/venv /opt/venv"], "only the virtualenv ships"


def test_image_runs_as_a_numeric_non_root_user_matching_the_manifests(
    stages: list[Stage],
) -> None:
    (user,) = stages[-1].args("USER")
    match = re.fullmatch(r"(\d+)(?::(\d+))?", user)
    assert match, f"USER must be numeric so runAsNonRoot can verify it, got {user!r}"
    uid = int(match[1])
    assert uid != 0
    pod = yaml.safe_load(BASE_DEPLOYMENT.read_text())["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == uid
    if match[2] is not None:
        assert pod["securityContext"]["runAsGroup"] == int(match[2])


def test_entrypoint_is_sharedctx_serve_on_all_interfaces(stages: list[Stage]) -> None:
    final = stages[-1]
    (entrypoint,) = final.args("ENTRYPOINT")
    assert json.loads(entrypoint) == ["sharedctx", "serve"], "exec form, server as PID 1"
    cmd = " ".join(" ".join(json.loads(c)) if c.startswith("[") else c for c in final.args("CMD"))
    env = env_of(final)
    listens_everywhere = env.get("SHAREDCTX_LISTEN") == "0.0.0.0:50051"
    assert listens_everywhere or "--listen 0.0.0.0:50051" in cmd, "listen beyond loopback"
    exposed = {p.split("/")[0] for args in final.args("EXPOSE") for p in args.split()}
    assert {"50051", "9090"} <= exposed
    assert env.get("SHAREDCTX_METRICS_LISTEN", "").endswith(":9090")


def test_image_needs_no_network_at_start(stages: list[Stage]) -> None:
    env = env_of(stages[-1])
    assert env.get("HF_HUB_OFFLINE") == "1"
    # The model comes in a wheel; nothing may fetch it at runtime or at final-stage build time.
    assert not any(
        re.search(r"\b(curl|wget|huggingface-cli|hf download)\b", run)
        for stage in stages
        for run in stage.args("RUN")
    )


def test_dockerignore_keeps_local_state_out_of_the_context() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needed in (".venv", ".git", "tests", "**/__pycache__", "**/.pytest_cache"):
        assert needed in patterns, needed
    # An allowlist: everything is excluded, then only what the build needs comes back.
    assert patterns[0] == "*"
    readmitted = {p[1:] for p in patterns if p.startswith("!")}
    assert {"pyproject.toml", "client", "server", "protos"} <= readmitted


def _docker_unavailable() -> str | None:
    if shutil.which("docker") is None:
        return "no docker CLI"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return "`docker info` timed out"
    if info.returncode != 0:
        return "no Docker engine answers `docker info`"
    return None


@pytest.mark.timeout(1800)
def test_image_builds_and_serves_health_with_no_network() -> None:
    reason = _docker_unavailable()
    if reason:
        pytest.skip(f"{reason}: the Dockerfile is only checked statically on this machine")
    tag = f"sharedctx-test:{uuid.uuid4().hex[:12]}"
    subprocess.run(["docker", "build", "-t", tag, str(REPO)], check=True, timeout=1500)
    container = None
    try:
        user = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Config.User}}", tag],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        assert user.split(":")[0] not in ("", "0", "root")
        # No network at all: the model, tokenizer and embedded Redis must all be in the image.
        container = subprocess.run(
            ["docker", "run", "-d", "--network", "none", "-e", "SHAREDCTX_INSECURE=true", tag],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        deadline = time.monotonic() + 180
        while True:
            probe = subprocess.run(
                ["docker", "exec", container, "python", "-c", HEALTH_CHECK],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if probe.returncode == 0:
                break
            if time.monotonic() > deadline:
                logs = subprocess.run(
                    ["docker", "logs", container], capture_output=True, text=True, check=False
                )
                pytest.fail(f"never SERVING:\n{probe.stderr}\n{logs.stdout}\n{logs.stderr}")
            time.sleep(2)
    finally:
        if container:
            subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
