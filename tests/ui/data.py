"""What the inspector's tests store: a small agent session with the kinds people debug (a
conversation, a long build log with one error, a test run, a JSON tool output, notes with
TTLs, entries by two agents), so that every page has something real to show."""

from __future__ import annotations

import json
import time

from sharedctx import Client, PutItem

NS = "team-a/session-42"
OTHER_NS = "team-b/triage"
QUERY = "why does the build fail with KeyError port?"
BUILD_LOG_KEY = "tool/make#1"
ERROR_LINE = "src/app.py:41: error: KeyError: 'port' (config app.toml)"
# An awkward key: HTML, quotes, an ampersand and a hash must survive every page and link.
ODD_KEY = 'notes/<b>odd</b> & "quoted" #1'


def build_log(lines: int = 400) -> str:
    """A long make log whose only failure is near the end."""
    body = [
        f"[{i:03d}/{lines}] compiled src/module_{i}.py in {i * 37 % 900} ms" for i in range(lines)
    ]
    return "\n".join([*body, ERROR_LINE, "make: *** [build] Error 1"])


def pytest_run() -> str:
    """A pytest report with one failure among many passes."""
    passed = [f"tests/test_api.py::test_case_{i} PASSED" for i in range(60)]
    failure = [
        "tests/test_config.py::test_port FAILED",
        "=================================== FAILURES ===================================",
        "___________________________________ test_port __________________________________",
        "    def test_port():",
        ">       assert load('app.toml')['port'] == 8080",
        "E       KeyError: 'port'",
        "tests/test_config.py:12: KeyError",
        "=========================== 1 failed, 60 passed in 2.41s ======================",
    ]
    header = "============================= test session starts =============================="
    return "\n".join([header, *passed, *failure])


def services_json() -> str:
    """A JSON tool output with a large array."""
    items = [
        {"name": f"svc-{i}", "status": "running" if i != 17 else "crashed", "port": 8000 + i,
         "image": f"registry.local/svc-{i}:1.{i % 7}.0", "restarts": 0 if i != 17 else 12}
        for i in range(60)
    ]  # fmt: skip
    return json.dumps({"services": items}, indent=2)


def design_doc() -> str:
    """A long pasted message (messages are never cut into excerpts: too large for a small
    budget in full)."""
    section = (
        "The scheduler keeps a queue per tenant and drains them round robin; each job carries "
        "its deadline, its retry budget and the worker pool it may run on. "
    )
    return "\n\n".join(f"Section {i}. {section * 4}" for i in range(12))


SMALL_TALK = [
    ("user", "Unrelated: when is the retro this week?"),
    ("assistant", "Thursday at 15:00, room Ada."),
    ("user", "Can you also remind me to renew the staging certificate?"),
    ("assistant", "Noted: renew the staging certificate before Friday."),
    ("user", "What was the p99 latency of the search service last week?"),
    ("assistant", "About 180 ms, up from 150 ms after the index rebuild."),
]


def seed(client: Client, namespace: str = NS) -> None:
    """Store the session in `namespace` (and one entry in a second namespace)."""
    now = time.time()
    turns = [
        ("user", "The build fails since this morning. Can you look?"),
        ("assistant", "Looking at the build log now."),
        ("user", "Is it the config change from yesterday? We moved the port setting."),
        ("assistant", "Yes: app.py reads 'port' from app.toml, and the key moved to [server]."),
    ]
    client.put_many(
        namespace,
        [
            PutItem(key=f"chat/{i}", content=text, kind="message", role=role, agent_id="planner",
                    thread="chat", event_time=now - 600 + i * 60)
            for i, (role, text) in enumerate(turns)
        ],
    )  # fmt: skip
    client.put_many(
        namespace,
        [
            PutItem(key=f"ops/{i}", content=text, kind="message", role=role, agent_id="ops",
                    thread="ops", event_time=now - 3600 + i * 30)
            for i, (role, text) in enumerate(SMALL_TALK)
        ],
    )  # fmt: skip
    client.put(namespace, "chat/design-doc", design_doc(), kind="message", role="user",
               agent_id="planner", thread="design", event_time=now - 5000)  # fmt: skip
    client.put(namespace, BUILD_LOG_KEY, build_log(), kind="tool_output", tool_name="make",
               agent_id="builder", thread="build", event_time=now - 400)  # fmt: skip
    client.put(namespace, "tool/pytest#1", pytest_run(), kind="tool_output", tool_name="pytest",
               agent_id="builder", thread="build", event_time=now - 300)  # fmt: skip
    client.put(namespace, "tool/services#1", services_json(), kind="tool_output",
               tool_name="kubectl", agent_id="builder", event_time=now - 200)  # fmt: skip
    client.put(namespace, "notes/plan", "1. reproduce the KeyError\n2. fix the port lookup",
               kind="note", agent_id="planner", ttl_seconds=3600, importance=0.8)  # fmt: skip
    client.put(namespace, "notes/plan", "1. reproduce the KeyError\n2. read port from [server]",
               kind="note", agent_id="planner", ttl_seconds=3600, importance=0.8)  # fmt: skip
    client.put(namespace, ODD_KEY, "<script>alert('x')</script> & plain text", kind="note",
               ttl_seconds=900)  # fmt: skip
    client.put(OTHER_NS, "log/1", "a short log line", kind="log")
