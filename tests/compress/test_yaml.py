"""YAML documents: every value kept, the API server's bookkeeping blocks left out."""

from __future__ import annotations

import json

from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.compress.config import DEFAULT_CONFIG
from sharedctx_server.compress.source import Source
from sharedctx_server.compress.yaml_doc import plan_yaml
from sharedctx_server.tokens import TokenCounter


def _managed_fields(containers: int) -> list[str]:
    lines = ["  managedFields:"]
    for manager in ("kube-controller-manager", "kubelet"):
        lines += ["  - apiVersion: v1", "    fieldsType: FieldsV1", "    fieldsV1:"]
        lines += ["      f:spec:", "        f:containers:"]
        for i in range(containers):
            lines += [f'          k:{{"name":"c{i}"}}:', "            .: {}"]
            lines += ["            f:image: {}", "            f:name: {}"]
        lines += [f"    manager: {manager}", "    operation: Update"]
    return lines


def pod_yaml(containers: int = 6, applied: str = "inline") -> str:
    """`kubectl get pod -o yaml` of a crash-looping pod, as an older kubectl prints it."""
    spec = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "checkout-api"}}
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", "  annotations:"]
    if applied == "inline":
        lines.append(f"    kubectl.kubernetes.io/last-applied-configuration: '{json.dumps(spec)}'")
    else:
        lines.append("    kubectl.kubernetes.io/last-applied-configuration: |")
        lines += [f"      {line}" for line in json.dumps(spec, indent=2).split("\n")]
    lines += ["  labels:", "    app: checkout-api", *_managed_fields(containers)]
    lines += ["  name: checkout-api-7d9f8b6c4-x2kqp", "  namespace: shop", "spec:", "  containers:"]
    for i in range(containers):
        lines += [f"  - image: registry.example.com/shop/c{i}:2.4.0", f"    name: c{i}"]
        lines += ["    ports:", f"    - containerPort: {8080 + i}", "      protocol: TCP"]
    lines += ["status:", "  containerStatuses:", "  - name: c0", "    restartCount: 14"]
    lines += ["    lastState:", "      terminated:", "        exitCode: 137"]
    lines += ["        reason: OOMKilled", "    state:", "      waiting:"]
    lines += ["        reason: CrashLoopBackOff", "  phase: Running"]
    return "\n".join(lines) + "\n"


def test_bookkeeping_blocks_become_markers_and_every_value_stays(
    token_counter: TokenCounter,
) -> None:
    text = pod_yaml()
    result = compress(
        text, count_tokens=token_counter.count, kind="tool_output", tool_name="kubectl"
    )
    assert result.compressor == "yaml"
    assert result.compressed_tokens < result.original_tokens * 0.75
    form = result.text.split("\n")
    assert form[0].startswith("[YAML: every value as written but 2 bookkeeping blocks")
    assert "  managedFields: [... 62 lines omitted]" in form
    applied = [line for line in form[1:] if "last-applied-configuration" in line]
    assert len(applied) == 1 and applied[0].endswith(" chars omitted]")
    # Every other line is there, as written and in order.
    lines = text.split("\n")
    block = lines.index("  managedFields:")
    kept = [line for line in lines[:block] + lines[block + 63 :] if "last-applied" not in line]
    assert [line for line in form[1:] if "omitted]" not in line] == kept
    # A compressed form is not compressed again.
    assert compress(result.text, count_tokens=token_counter.count).text == result.text


def test_a_block_scalar_copy_is_one_marker(token_counter: TokenCounter) -> None:
    result = compress(pod_yaml(applied="block"), count_tokens=token_counter.count)
    assert result.compressor == "yaml"
    assert "    kubectl.kubernetes.io/last-applied-configuration: [... 7 lines omitted]" in (
        result.text.split("\n")
    )
    assert '"kind": "Pod",' not in result.text


def test_a_block_with_an_error_line_stays_whole(token_counter: TokenCounter) -> None:
    text = pod_yaml().replace("    operation: Update", "    message: Error: quota exceeded", 1)
    result = compress(text, count_tokens=token_counter.count)
    # Only the short last-applied copy could go: under the saving worth a marker.
    assert result.compressor == "none"
    assert "managedFields: [..." not in result.text
    assert missing_error_lines(text, result.text) == []


def manifests(services: int = 8) -> str:
    """Several manifests one after another, with comments, as `cat k8s/*.yaml` shows them:
    lines alike but for their values."""
    docs = []
    for i in range(services):
        docs.append(
            f"# Service {i}: the API of team {i} (see the runbook)\n"
            f"apiVersion: v1\nkind: Service\nmetadata:\n  name: api-{i}\n  labels:\n"
            f"    app.kubernetes.io/name: api-{i}\n    app.kubernetes.io/component: server\n"
            f"spec:\n  selector:\n    app.kubernetes.io/name: api-{i}\n  ports:\n"
            f"    - name: grpc\n      port: {50051 + i}\n      targetPort: grpc\n"
            f"    - name: metrics\n      port: {9090 + i}\n      protocol: TCP\n"
        )
    return "---\n".join(docs)


def test_manifests_keep_every_value(token_counter: TokenCounter) -> None:
    text = manifests()
    choice = explain(text, count_tokens=token_counter.count, kind="tool_output")
    # Nothing to leave out, and neither the log compressor (which folded `port: 53` and
    # `port: 6379` of a NetworkPolicy into a marker) nor markup (`# ...` as headings) runs.
    assert choice.result.compressor == "none"
    assert choice.result.text == text
    outcomes = {trial.name: trial.outcome for trial in choice.trials}
    assert outcomes["yaml"] == "unchanged"
    assert outcomes["log"] == "not run"
    assert outcomes.get("markup", "not run") == "not run"


def _plan(text: str) -> object:
    return plan_yaml(Source(text, "tool_output", None, DEFAULT_CONFIG))


def test_flat_key_value_listings_are_not_yaml_documents() -> None:
    stat = "".join(
        f"  File: /usr/bin/tool{i}\n  Size: {1000 + i}\tBlocks: 8\tIO Block: 4096\tregular file\n"
        f"Device: 8,1\tInode: {i}\tLinks: 1\nAccess: 2026-12-01 10:00:0{i % 10}\n"
        for i in range(20)
    )
    pip_show = (
        "Name: requests\nVersion: 2.32.3\nSummary: HTTP\nLocation: /usr/lib\nRequires: idna\n"
    )
    assert _plan(stat) is None
    assert _plan(pip_show * 3) is None
    assert _plan(pod_yaml()) is not None


def test_a_log_before_its_manifests_is_not_a_yaml_document() -> None:
    # `helm upgrade --debug`: a logger's `client.go:617: [debug] ...` lines, then YAML.
    debug = "".join(
        f'client.go:{600 + i}: [debug] Looks like there are no changes for Service "s{i}"\n'
        for i in range(12)
    )
    assert _plan(manifests(3)) is not None
    assert _plan(debug + "Error: UPGRADE FAILED: cannot patch\n" + manifests(3)) is None


def test_kubectl_describe_is_not_read_as_yaml() -> None:
    describe = (
        "Name:             checkout-api-7d9f8b6c4-x2kqp\nNamespace:        shop\n"
        "Containers:\n  api:\n    Container ID:   containerd://4f1e\n"
        "    Image:          registry.example.com/shop/checkout-api:2.4.0\n"
        "    State:          Waiting\n      Reason:       CrashLoopBackOff\n"
        "    Last State:     Terminated\n      Reason:       OOMKilled\n"
        "    Restart Count:  14\nEvents:\n  Type     Reason   Age   From     Message\n"
        "  ----     ------   ----  ----     -------\n"
        "  Warning  BackOff  2m    kubelet  Back-off restarting failed container\n"
    )
    assert _plan(describe) is None
