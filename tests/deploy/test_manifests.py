"""The kustomize manifests: every target renders, validates strictly against the Kubernetes
schemas, and keeps the properties a production rollout relies on (probes, resources, security
context, disruption budget, autoscaling, network policy, secret references, Redis, metrics)."""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
SCHEMAS = Path(__file__).parent / "schemas"

BASE = "base"
DEV = "overlays/dev"
PRODUCTION = "overlays/production"
TARGETS = (BASE, DEV, PRODUCTION)
NAMESPACES = {DEV: "sharedctx-dev", PRODUCTION: "sharedctx"}
MIN_REPLICAS = {BASE: 2, DEV: 2, PRODUCTION: 3}

# The oldest Kubernetes the manifests target (native gRPC probes GA, PDB
# unhealthyPodEvictionPolicy on by default) and the newest kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.27.0", "1.37.0")
# CRD kinds kubernetes-validate has no schema for, validated against a strict schema shipped here.
CRD_SCHEMAS = {("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor-monitoring-v1.json"}

SERVER = "sharedctx"
GRPC_PORT = 50051
METRICS_PORT = 9090
REDIS_PORT = 6379
APP_HEALTH_SERVICE = "sharedctx.v1.SharedContext"
# What the production operator creates (documented in deploy/README.md).
REDIS_SECRET, REDIS_SECRET_KEY = "sharedctx-redis", "url"
AUTH_SECRET, AUTH_SECRET_KEY = "sharedctx-auth", "tokens.json"

Obj = dict[str, Any]


# --- rendering and lookup ----------------------------------------------------------------------


def _kustomize_command(target: Path) -> list[str] | None:
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize", str(target)]
    if shutil.which("kustomize"):
        return ["kustomize", "build", str(target)]
    return None


@functools.cache
def _render(target: str) -> tuple[Obj, ...]:
    command = _kustomize_command(DEPLOY / target)
    if command is None:
        pytest.skip("neither kubectl nor kustomize is on PATH: cannot render the overlays")
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, f"{' '.join(command)} failed:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


def render(target: str) -> list[Obj]:
    """The objects `kubectl kustomize deploy/<target>` produces (a fresh list; cached render)."""
    return list(_render(target))


def find(objs: list[Obj], kind: str, name: str | None = None) -> list[Obj]:
    return [
        o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


def one(objs: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = find(objs, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def pod_spec(workload: Obj) -> Obj:
    spec: Obj = workload["spec"]["template"]["spec"]
    return spec


def pod_labels(workload: Obj) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def container(workload: Obj, name: str) -> Obj:
    found: list[Obj] = [c for c in pod_spec(workload)["containers"] if c["name"] == name]
    assert len(found) == 1, f"expected one container {name!r}"
    return found[0]


def all_containers(workload: Obj) -> list[Obj]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


def workloads(objs: list[Obj]) -> list[Obj]:
    return [o for o in objs if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet")]


def selects(selector: Obj, labels: dict[str, str]) -> bool:
    """Whether a LabelSelector (matchLabels / matchExpressions) matches these labels."""
    assert selector, "an empty selector matches everything"
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        matched = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not matched:
            return False
    return True


def config_of(objs: list[Obj], workload: Obj, container_name: str) -> dict[str, str]:
    """The ConfigMap data a container imports with envFrom."""
    data: dict[str, str] = {}
    for source in container(workload, container_name).get("envFrom", []):
        if "configMapRef" in source:
            data.update(one(objs, "ConfigMap", source["configMapRef"]["name"])["data"])
    return data


def secret_data(secret: Obj) -> dict[str, str]:
    out = {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}
    out.update(secret.get("stringData", {}))
    return out


_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
_UNITS = {
    None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40,
}  # fmt: skip


def quantity(value: str | int | float) -> float:
    """A Kubernetes resource quantity ("500m", "1Gi", 2) as a number."""
    match = _QUANTITY.match(str(value))
    assert match, f"unparseable quantity {value!r}"
    return float(match[1]) * _UNITS[match[2]]


def port_number(workload: Obj, port: int | str) -> int:
    """A targetPort / probe port as a number, resolving container port names."""
    if isinstance(port, int):
        return port
    for c in all_containers(workload):
        for p in c.get("ports", []):
            if p.get("name") == port:
                return int(p["containerPort"])
    raise AssertionError(f"no container port named {port!r}")


def _server(objs: list[Obj]) -> Obj:
    return one(objs, "Deployment", SERVER)


# --- schema validation -------------------------------------------------------------------------


@functools.cache
def _crd_schema(filename: str) -> Obj:
    schema: Obj = json.loads((SCHEMAS / filename).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def validate_strictly(obj: Obj, version: str) -> None:
    """kubernetes-validate --strict for built-in kinds; a shipped strict schema for CRDs."""
    ident = f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
    crd_schema = CRD_SCHEMAS.get((obj.get("apiVersion", ""), obj.get("kind", "")))
    if crd_schema is not None:
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(_crd_schema(crd_schema)).iter_errors(obj)
        )
        if error is not None:
            pytest.fail(f"{ident}: {'.'.join(map(str, error.path))}: {error.message}")
        return
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path)
        pytest.fail(f"{ident} is invalid for Kubernetes {version} at {path}: {e.message}")
    except kubernetes_validate.SchemaNotFoundError as e:
        pytest.fail(f"{ident}: {e.message}; ship a schema for it in CRD_SCHEMAS")


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_rendered_manifests_validate_strictly(target: str, version: str) -> None:
    objs = render(target)
    assert objs
    for obj in objs:
        validate_strictly(obj, version)


RAW_MANIFESTS = sorted(
    p for p in DEPLOY.rglob("*.yaml") if p.name != "kustomization.yaml" and "patches" not in p.parts
)


@pytest.mark.parametrize("path", RAW_MANIFESTS, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_manifest_files_validate_strictly_even_without_kustomize(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs, f"{path} holds no objects"
    for obj in docs:
        validate_strictly(obj, KUBERNETES_VERSIONS[-1])


def test_the_shipped_servicemonitor_schema_rejects_unknown_fields() -> None:
    monitor = yaml.safe_load((DEPLOY / PRODUCTION / "servicemonitor.yaml").read_text())
    validate_strictly(monitor, KUBERNETES_VERSIONS[-1])
    monitor["spec"]["endpoints"][0]["intervall"] = "30s"
    schema = _crd_schema(CRD_SCHEMAS[("monitoring.coreos.com/v1", "ServiceMonitor")])
    with pytest.raises(jsonschema.ValidationError, match="intervall"):
        jsonschema.validate(monitor, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("target", list(NAMESPACES))
def test_overlays_put_every_namespaced_object_in_their_namespace(target: str) -> None:
    for obj in render(target):
        if obj["kind"] != "Namespace":
            assert obj["metadata"].get("namespace") == NAMESPACES[target], obj["metadata"]


@pytest.mark.parametrize("target", list(NAMESPACES))
def test_images_are_pinned_to_a_tag(target: str) -> None:
    for workload in workloads(render(target)):
        for c in all_containers(workload):
            image = c["image"]
            assert re.search(r"(:[\w][\w.-]*|@sha256:[0-9a-f]{64})$", image.split("/")[-1]), image
            assert not image.endswith(":latest"), image


# --- the server Deployment ---------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_replicas_and_autoscaler_keep_the_floor(target: str) -> None:
    objs = render(target)
    replicas = _server(objs)["spec"]["replicas"]
    hpa = one(objs, "HorizontalPodAutoscaler")["spec"]
    assert replicas >= MIN_REPLICAS[target]
    assert hpa["minReplicas"] >= MIN_REPLICAS[target]
    assert hpa["minReplicas"] <= replicas <= hpa["maxReplicas"]


@pytest.mark.parametrize("target", TARGETS)
def test_autoscaler_targets_the_deployment_on_cpu(target: str) -> None:
    objs = render(target)
    hpa = one(objs, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": _server(objs)["metadata"]["name"],
    }
    cpu = [
        m["resource"]["target"]
        for m in hpa["spec"]["metrics"]
        if m["type"] == "Resource" and m["resource"]["name"] == "cpu"
    ]
    assert cpu and cpu[0]["type"] == "Utilization" and 0 < cpu[0]["averageUtilization"] <= 100


@pytest.mark.parametrize("target", TARGETS)
def test_probes_are_native_grpc_on_the_health_port(target: str) -> None:
    deployment = _server(render(target))
    server = container(deployment, SERVER)
    assert port_number(deployment, "grpc") == GRPC_PORT
    for name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = server[name]
        handlers = {"grpc", "httpGet", "tcpSocket", "exec"} & set(probe)
        assert handlers == {"grpc"}, f"{name} must be a native gRPC probe, not {handlers}"
        assert probe["grpc"]["port"] == GRPC_PORT, name
    # Readiness asks for the application service (NOT_SERVING while draining / Redis down);
    # liveness and startup for the process as a whole, so a Redis outage restarts nothing.
    assert server["readinessProbe"]["grpc"]["service"] == APP_HEALTH_SERVICE
    assert server["livenessProbe"]["grpc"]["service"] == "liveness"
    assert server["startupProbe"]["grpc"]["service"] == "liveness"
    startup = server["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 60, "model load needs time"


@pytest.mark.parametrize("target", TARGETS)
def test_every_container_has_requests_and_limits(target: str) -> None:
    for workload in workloads(render(target)):
        for c in all_containers(workload):
            resources = c.get("resources", {})
            for resource in ("cpu", "memory"):
                request = resources.get("requests", {}).get(resource)
                limit = resources.get("limits", {}).get(resource)
                assert request is not None and limit is not None, f"{c['name']}: {resource}"
                assert quantity(request) <= quantity(limit), f"{c['name']}: {resource}"


@pytest.mark.parametrize("target", TARGETS)
def test_pods_run_non_root_read_only_without_privileges(target: str) -> None:
    objs = render(target)
    assert workloads(objs)
    for workload in workloads(objs):
        spec = pod_spec(workload)
        pod_sc = spec.get("securityContext", {})
        assert spec.get("automountServiceAccountToken") is False
        for host in ("hostNetwork", "hostPID", "hostIPC"):
            assert not spec.get(host)
        for c in all_containers(workload):
            sc = c.get("securityContext", {})
            effective = {**pod_sc, **sc}  # container settings override the pod's
            where = f"{workload['metadata']['name']}/{c['name']}"
            assert effective.get("runAsNonRoot") is True, where
            assert effective.get("runAsUser") not in (None, 0), where
            assert effective.get("seccompProfile") == {"type": "RuntimeDefault"}, where
            assert sc.get("readOnlyRootFilesystem") is True, where
            assert sc.get("allowPrivilegeEscalation") is False, where
            assert sc.get("privileged") is not True, where
            assert sc.get("capabilities", {}).get("drop") == ["ALL"], where
            assert not sc.get("capabilities", {}).get("add"), where


@pytest.mark.parametrize("target", TARGETS)
def test_server_writes_only_to_a_tmp_emptydir(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    mounts = {m["mountPath"]: m for m in container(deployment, SERVER)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    config = config_of(objs, deployment, SERVER)
    for key in ("HOME", "SHAREDCTX_CACHE_DIR"):
        assert PurePosixPath(config[key]).is_relative_to("/tmp"), key
    for path, mount in mounts.items():
        if path != "/tmp":
            assert mount.get("readOnly") is True, path


@pytest.mark.parametrize("target", TARGETS)
def test_termination_grace_covers_prestop_and_drain(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    server = container(deployment, SERVER)
    config = config_of(objs, deployment, SERVER)
    drain = float(config.get("SHAREDCTX_GRACE_SECONDS", "10"))
    command = server.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pre_stop = float(command[1]) if command[:1] == ["sleep"] else 0.0
    assert pod_spec(deployment)["terminationGracePeriodSeconds"] > pre_stop + drain


@pytest.mark.parametrize("target", TARGETS)
def test_server_pod_settings(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    spec = pod_spec(deployment)
    # Service links would inject SHAREDCTX_PORT=tcp://... into the server's own env namespace.
    assert spec.get("enableServiceLinks") is False
    account = one(objs, "ServiceAccount", spec["serviceAccountName"])
    assert account.get("automountServiceAccountToken") is False
    assert selects(deployment["spec"]["selector"], pod_labels(deployment))
    keys = {c["topologyKey"] for c in spec["topologySpreadConstraints"]}
    assert {"kubernetes.io/hostname", "topology.kubernetes.io/zone"} <= keys
    for constraint in spec["topologySpreadConstraints"]:
        assert selects(constraint["labelSelector"], pod_labels(deployment))


@pytest.mark.parametrize("target", TARGETS)
def test_config_is_non_secret_and_listens_on_all_interfaces(target: str) -> None:
    objs = render(target)
    config = config_of(objs, _server(objs), SERVER)
    assert config["SHAREDCTX_LISTEN"] == f"0.0.0.0:{GRPC_PORT}"
    assert config["SHAREDCTX_METRICS_LISTEN"] == f"0.0.0.0:{METRICS_PORT}"
    assert config["SHAREDCTX_REDIS_CLUSTER"] in ("true", "false")
    assert config["HF_HUB_OFFLINE"] == "1"
    assert "SHAREDCTX_REDIS_URL" not in config
    assert not any("redis://" in v or "rediss://" in v for v in config.values())
    if target == PRODUCTION:
        assert config["SHAREDCTX_LOG_FORMAT"] == "json"


# --- disruption budget, services, network policy ------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_disruption_budget_selects_the_pods_and_allows_one_eviction(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    pdb = one(objs, "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert selects(pdb["spec"]["selector"], pod_labels(deployment))
    floor = one(objs, "HorizontalPodAutoscaler")["spec"]["minReplicas"]
    if "maxUnavailable" in pdb["spec"]:
        assert 1 <= pdb["spec"]["maxUnavailable"] < floor
    else:
        assert 1 <= pdb["spec"]["minAvailable"] < floor


@pytest.mark.parametrize("target", TARGETS)
def test_services_expose_grpc_and_metrics(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    service = one(objs, "Service", "sharedctx")
    headless = one(objs, "Service", "sharedctx-headless")
    assert headless["spec"]["clusterIP"] == "None"
    for svc in (service, headless):
        assert svc["spec"]["selector"].items() <= pod_labels(deployment).items()
        ports = {p["name"]: p for p in svc["spec"]["ports"]}
        assert ports["grpc"]["port"] == GRPC_PORT
        assert ports["grpc"]["appProtocol"] == "grpc"
        assert port_number(deployment, ports["grpc"]["targetPort"]) == GRPC_PORT
    metrics = {p["name"]: p for p in service["spec"]["ports"]}["metrics"]
    assert port_number(deployment, metrics["targetPort"]) == METRICS_PORT
    # One scrape per pod: only the ClusterIP Service carries the metrics port.
    assert [p["name"] for p in headless["spec"]["ports"]] == ["grpc"]


def _ports(rule: Obj) -> set[tuple[str, int]]:
    return {(p.get("protocol", "TCP"), p["port"]) for p in rule.get("ports", [])}


@pytest.mark.parametrize("target", TARGETS)
def test_network_policy_admits_grpc_and_metrics_and_egresses_to_redis_and_dns(
    target: str,
) -> None:
    objs = render(target)
    deployment = _server(objs)
    policy = one(objs, "NetworkPolicy", "sharedctx")["spec"]
    assert selects(policy["podSelector"], pod_labels(deployment))
    assert sorted(policy["policyTypes"]) == ["Egress", "Ingress"]

    ingress = policy["ingress"]
    assert all(rule.get("ports") for rule in ingress), "an ingress rule without ports opens all"
    assert set().union(*map(_ports, ingress)) == {("TCP", GRPC_PORT), ("TCP", METRICS_PORT)}
    for rule in ingress:
        if ("TCP", METRICS_PORT) in _ports(rule):
            assert _ports(rule) == {("TCP", METRICS_PORT)}
            assert rule.get("from"), "metrics must be limited to the monitoring namespace"
            for peer in rule["from"]:
                assert peer.get("namespaceSelector", {}).get("matchLabels"), peer

    egress = policy["egress"]
    assert all(rule.get("ports") for rule in egress), "an egress rule without ports opens all"
    allowed = {("UDP", 53), ("TCP", 53), ("TCP", REDIS_PORT)}
    assert {("UDP", 53), ("TCP", REDIS_PORT)} <= set().union(*map(_ports, egress)) <= allowed


def test_dev_network_policy_sends_redis_traffic_to_the_redis_pod_only() -> None:
    objs = render(DEV)
    redis_labels = pod_labels(one(objs, "StatefulSet", "redis"))
    server_labels = pod_labels(_server(objs))
    egress = one(objs, "NetworkPolicy", "sharedctx")["spec"]["egress"]
    for rule in egress:
        if ("TCP", REDIS_PORT) in _ports(rule):
            assert rule.get("to") and all(
                selects(peer["podSelector"], redis_labels) for peer in rule["to"]
            )
    redis_policy = one(objs, "NetworkPolicy", "redis")["spec"]
    assert selects(redis_policy["podSelector"], redis_labels)
    assert redis_policy["egress"] == []
    (rule,) = redis_policy["ingress"]
    assert _ports(rule) == {("TCP", REDIS_PORT)}
    assert all(selects(peer["podSelector"], server_labels) for peer in rule["from"])


# --- secrets -----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_redis_url_and_auth_tokens_come_from_secrets(target: str) -> None:
    objs = render(target)
    deployment = _server(objs)
    server = container(deployment, SERVER)
    env = {e["name"]: e for e in server.get("env", [])}
    redis_ref = env["SHAREDCTX_REDIS_URL"]["valueFrom"]["secretKeyRef"]
    assert redis_ref["key"] == REDIS_SECRET_KEY
    assert not redis_ref.get("optional")

    tokens_path = PurePosixPath(config_of(objs, deployment, SERVER)["SHAREDCTX_AUTH_TOKENS"])
    (mount,) = [
        m
        for m in server["volumeMounts"]
        if tokens_path.is_relative_to(m["mountPath"]) and m["mountPath"] != "/"
    ]
    assert mount.get("readOnly") is True
    (volume,) = [v for v in pod_spec(deployment)["volumes"] if v["name"] == mount["name"]]
    secret_volume = volume["secret"]
    file_in_volume = str(tokens_path.relative_to(mount["mountPath"]))
    items = {i["path"]: i["key"] for i in secret_volume.get("items", [])}
    assert items.get(file_in_volume, file_in_volume) == AUTH_SECRET_KEY
    assert secret_volume["defaultMode"] & 0o007 == 0, "token file must not be world-readable"

    secrets = {s["metadata"]["name"]: s for s in find(objs, "Secret")}
    if target == DEV:
        # Generated with a hash suffix; kustomize rewrote the references to match.
        assert redis_ref["name"].startswith(REDIS_SECRET + "-")
        assert secret_volume["secretName"].startswith(AUTH_SECRET + "-")
        assert REDIS_SECRET_KEY in secret_data(secrets[redis_ref["name"]])
        assert AUTH_SECRET_KEY in secret_data(secrets[secret_volume["secretName"]])
    else:
        # Operator-created Secrets under fixed, documented names; nothing secret is committed.
        assert (redis_ref["name"], secret_volume["secretName"]) == (REDIS_SECRET, AUTH_SECRET)
        assert secrets == {}


def test_dev_secrets_are_marked_dev_only() -> None:
    secrets = find(render(DEV), "Secret")
    assert len(secrets) == 2
    for secret in secrets:
        assert secret["metadata"]["labels"]["sharedctx/dev-only"] == "true"
        assert "dev-only" in secret["metadata"]["annotations"]["sharedctx/warning"]


def test_dev_token_file_has_the_server_format() -> None:
    data = json.loads((DEPLOY / DEV / "dev-tokens.json").read_text())
    (token,) = data["tokens"]
    assert token["token"].startswith("dev-only-")
    assert token["principal"] and token["namespaces"]
    assert set(token["permissions"]) <= {"read", "write", "admin"}


def test_readme_documents_the_production_secrets() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for text in (REDIS_SECRET, AUTH_SECRET, AUTH_SECRET_KEY, "--from-literal=url="):
        assert text in readme, text


# --- the dev Redis -----------------------------------------------------------------------------


def test_dev_redis_is_a_persistent_append_only_statefulset() -> None:
    objs = render(DEV)
    redis = one(objs, "StatefulSet", "redis")
    assert redis["spec"]["replicas"] == 1
    server = container(redis, "redis")
    assert server["image"].startswith("redis:7")
    argv = [*server.get("command", []), *server.get("args", [])]
    assert argv[argv.index("--appendonly") + 1] == "yes"
    data_dir = argv[argv.index("--dir") + 1]

    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert quantity(claim["spec"]["resources"]["requests"]["storage"]) > 0
    mounts = {m["name"]: m["mountPath"] for m in server["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == data_dir

    service = one(objs, "Service", redis["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= pod_labels(redis).items()
    assert {p["port"] for p in service["spec"]["ports"]} == {REDIS_PORT}


def test_dev_redis_url_points_at_the_dev_redis_with_its_password() -> None:
    objs = render(DEV)
    redis = one(objs, "StatefulSet", "redis")
    server_env = {e["name"]: e for e in container(_server(objs), SERVER)["env"]}
    url_ref = server_env["SHAREDCTX_REDIS_URL"]["valueFrom"]["secretKeyRef"]
    secret = secret_data(one(objs, "Secret", url_ref["name"]))
    url = urlsplit(secret[url_ref["key"]])
    assert url.scheme == "redis"
    assert url.hostname == redis["spec"]["serviceName"] and url.port == REDIS_PORT

    redis_container = container(redis, "redis")
    argv = [*redis_container.get("command", []), *redis_container.get("args", [])]
    assert argv[argv.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    redis_env = {e["name"]: e for e in redis_container["env"]}
    password_ref = redis_env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password_ref["name"] == url_ref["name"], "one Secret, so URL and password agree"
    assert url.password == secret[password_ref["key"]]


# --- production ---------------------------------------------------------------------------------


def test_production_servicemonitor_scrapes_each_pod_once() -> None:
    objs = render(PRODUCTION)
    monitor = one(objs, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert "namespaceSelector" not in monitor["spec"], "same namespace as the Services"
    selected = [
        s
        for s in find(objs, "Service")
        if selects(monitor["spec"]["selector"], s["metadata"].get("labels", {}))
    ]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    with_port = [s for s in selected if endpoint["port"] in {p["name"] for p in s["spec"]["ports"]}]
    assert len(with_port) == 1, "exactly one selected Service may carry the metrics port"
    (port,) = [p for p in with_port[0]["spec"]["ports"] if p["name"] == endpoint["port"]]
    assert port_number(_server(objs), port["targetPort"]) == METRICS_PORT


def test_production_keeps_redis_external() -> None:
    objs = render(PRODUCTION)
    assert not find(objs, "StatefulSet")
    assert not find(objs, "Namespace"), "deleting the overlay must not delete the namespace"
