"""Fit excerpts over gRPC: the part of a large entry that answers, under any budget."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from sharedctx import AsyncClient, PutItem
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.fit import omission_marker
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving
from .support.tool_outputs import (
    FAILING_LINE,
    git_log,
    git_status,
    pip_log,
    pytest_log,
    service_log,
)

NS = "team-a/excerpts"
QUERY = "why did the resize-images job fail?"
NOW = datetime.now(UTC)


async def put_task_outputs(client: AsyncClient) -> None:
    """Two agents' tool outputs, the service log oldest and git log newest."""
    outputs = [
        ("logs/worker", service_log(), "log", "", "ops-agent"),
        ("tool/pytest", pytest_log(), "tool_output", "pytest", "dev-agent"),
        ("tool/pip", pip_log(), "tool_output", "pip", "dev-agent"),
        ("tool/git-log", git_log(), "tool_output", "git", "dev-agent"),
    ]
    for i, (key, content, kind, tool, agent) in enumerate(outputs):
        await client.put(
            NS, key, content, kind=kind, tool_name=tool, agent_id=agent,
            event_time=NOW - timedelta(minutes=9 - 2 * i),
        )  # fmt: skip


def lines_of(text: str) -> list[str]:
    return text.split("\n")


async def test_the_failing_job_comes_back_from_a_log_larger_than_the_budget(
    client: AsyncClient, token_counter: TokenCounter
) -> None:
    await put_task_outputs(client)
    result = await client.fit(NS, QUERY, 1000, include_content=True)
    assert result.total_tokens <= 1000
    assert sum(token_counter.count(e.content) for e in result.entries) <= 1000
    by_key = {e.key: e for e in result.entries}
    worker = by_key["logs/worker"]
    assert worker.form == "excerpt"
    assert FAILING_LINE in worker.content
    assert "failed after 3 attempts" in worker.content  # the error line's traceback whole
    assert worker.tokens == token_counter.count(worker.content)
    # The lines shown are the full form's lines at the ranges given; markers count the rest.
    full = lines_of((await client.get(NS, "logs/worker", full=True)).content)
    shown = [line for line in lines_of(worker.content) if line and not line.startswith("[...")]
    expected = [full[i - 1] for first, last in worker.line_ranges for i in range(first, last + 1)]
    assert shown == expected
    assert worker.total_lines == len(full) - 1  # the final newline ends the last line
    first_gap = worker.line_ranges[0][0] - 1
    assert lines_of(worker.content)[0] == omission_marker(first_gap)


async def test_without_excerpts_the_log_is_too_large_and_the_budget_goes_elsewhere(
    client: AsyncClient,
) -> None:
    await put_task_outputs(client)
    result = await client.fit(NS, QUERY, 1000, excerpts=False, explain=True)
    assert "logs/worker" not in result.keys
    assert {c.key: c.reason for c in result.explain}["logs/worker"] == "too_large"
    assert all(e.form != "excerpt" for e in result.entries)


async def test_explain_lists_the_segments_scored_and_chosen(client: AsyncClient) -> None:
    await put_task_outputs(client)
    result = await client.fit(NS, QUERY, 600, explain=True)
    worker = next(c for c in result.explain if c.key == "logs/worker")
    assert worker.reason == "selected"
    chosen = [s for s in worker.segments if s.chosen]
    best = max(worker.segments, key=lambda s: s.relevance)
    assert best.chosen and best.last_line - best.first_line == 6  # error record + traceback
    entry = next(e for e in result.entries if e.key == "logs/worker")
    covered = {i for first, last in entry.line_ranges for i in range(first, last + 1)}
    assert {i for s in chosen for i in range(s.first_line, s.last_line + 1)} == covered


@pytest.mark.parametrize("budget", [120, 300, 2000, 6000])
async def test_the_budget_holds_at_every_size_with_markers_counted(
    client: AsyncClient, token_counter: TokenCounter, budget: int
) -> None:
    await put_task_outputs(client)
    result = await client.fit(NS, QUERY, budget, include_content=True, form="auto")
    assert result.total_tokens <= budget
    assert sum(token_counter.count(e.content) for e in result.entries) <= budget
    for entry in result.entries:
        assert entry.tokens == token_counter.count(entry.content)


async def test_a_full_form_request_gets_the_whole_log_when_it_fits(client: AsyncClient) -> None:
    await put_task_outputs(client)
    result = await client.fit(NS, QUERY, 20_000, form="full")
    assert {e.key: e.form for e in result.entries}["logs/worker"] == "full"


async def test_asking_for_the_excerpt_form_is_refused_with_a_hint(
    server: RunningServer,
) -> None:
    # The client refuses it before sending (tests/test_client_api.py); a raw request gets the
    # server's hint.
    request = pb.FitRequest(namespace=NS, query=QUERY, budget_tokens=1000, form=pb.FORM_EXCERPT)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Fit(request, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "reply form" in (info.value.details() or "")


async def test_turn_strategies_excerpt_an_oversized_tool_output_instead_of_dropping_it(
    client: AsyncClient,
) -> None:
    t0 = NOW - timedelta(minutes=5)
    await client.put_many(
        NS,
        [
            PutItem(key="m/1", content="Can you check why resize-images failed?", kind="message",
                    role="user", event_time=t0),
            PutItem(key="t/1", content=service_log(), kind="tool_output", tool_name="cat",
                    event_time=t0 + timedelta(seconds=5)),
            PutItem(key="m/2", content="The job failed on a connection error.", kind="message",
                    role="assistant", event_time=t0 + timedelta(seconds=10)),
        ],
    )  # fmt: skip
    for strategy in ("relevant", "recent"):
        result = await client.fit(NS, QUERY, 1000, strategy=strategy, include_content=True)
        forms = {e.key: e.form for e in result.entries}
        assert forms == {"m/1": "compressed", "t/1": "excerpt", "m/2": "compressed"}, strategy
        assert result.total_tokens <= 1000
        tool = next(e for e in result.entries if e.key == "t/1")
        assert FAILING_LINE in tool.content or strategy == "recent"
        off = await client.fit(NS, QUERY, 1000, strategy=strategy, excerpts=False)
        assert "t/1" not in off.keys


async def test_a_turn_whose_outputs_need_unequal_room_still_goes_in(client: AsyncClient) -> None:
    # One turn, two oversized outputs: a log, and an exception on one long line whose head
    # (its smallest excerpt) is larger than an equal share of the room.
    error = "java.lang.IllegalStateException: ledger refused the batch: " + " ".join(
        f"attr{i}=value{i * 31 % 977}" for i in range(2500)
    )
    t0 = NOW - timedelta(minutes=5)
    await client.put_many(
        NS,
        [
            PutItem(key="m/1", content="Why did resize-images and the ledger batch fail?",
                    kind="message", role="user", event_time=t0),
            PutItem(key="t/1", content=service_log(), kind="tool_output", tool_name="cat",
                    event_time=t0 + timedelta(seconds=5)),
            PutItem(key="t/2", content=error, kind="tool_output", tool_name="java",
                    event_time=t0 + timedelta(seconds=6)),
        ],
    )  # fmt: skip
    for budget in (900, 1000, 1400):
        result = await client.fit(NS, QUERY, budget, strategy="recent", include_content=True)
        forms = {e.key: e.form for e in result.entries}
        assert forms == {"m/1": "compressed", "t/1": "excerpt", "t/2": "excerpt"}, budget
        assert result.total_tokens <= budget


async def test_a_server_with_excerpts_off_cuts_nothing_and_returns_whole_entries(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, excerpts=False) as (_, client):
        await put_task_outputs(client)
        result = await client.fit(NS, QUERY, 1000, explain=True)
        assert all(e.form != "excerpt" for e in result.entries)
        assert all(not c.segments for c in result.explain)


async def test_entries_stored_without_segments_are_cut_when_a_server_loads_them(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, excerpts=False) as (_, old):
        await put_task_outputs(old)  # as a server before excerpts would have stored them
    async with serving(settings, token_counter) as (_, new):
        result = await new.fit(NS, QUERY, 1000, include_content=True)
    worker = next(e for e in result.entries if e.key == "logs/worker")
    assert worker.form == "excerpt" and FAILING_LINE in worker.content


async def test_replicas_give_the_same_excerpts(
    server: RunningServer, client: AsyncClient, settings: Settings, token_counter: TokenCounter
) -> None:
    await put_task_outputs(client)
    mine = await client.fit(NS, QUERY, 700, include_content=True)
    async with serving(settings, token_counter) as (_, other):
        theirs = await other.fit(NS, QUERY, 700, include_content=True)
    assert [(e.key, e.form, e.tokens, e.line_ranges, e.content) for e in mine.entries] == [
        (e.key, e.form, e.tokens, e.line_ranges, e.content) for e in theirs.entries
    ]


async def test_a_replica_that_follows_every_change_agrees_with_one_that_loads_the_end(
    server: RunningServer, client: AsyncClient, settings: Settings, token_counter: TokenCounter
) -> None:
    # This server builds its namespace once and splices each change into it (Fits between
    # the changes); a replica started after them loads the namespace as it ends.
    queries = [QUERY, "which packages were installed?", "what changed in the uploader?"]
    await put_task_outputs(client)
    for change in range(4):
        for query in queries:
            await client.fit(NS, query, 600)
        if change == 0:
            await client.delete(NS, "tool/pytest")
        elif change == 1:
            await client.put(NS, "logs/worker", service_log(fail_at=20), kind="log")
        elif change == 2:
            await client.put(NS, "tool/pip", "pip 24.0: nothing to do", kind="tool_output")
        else:
            await client.put(NS, "tool/pytest", pytest_log(), tool_name="pytest")
    async with serving(settings, token_counter) as (_, fresh):
        for query in queries:
            for budget in (300, 1000):
                mine = await client.fit(NS, query, budget, include_content=True)
                theirs = await fresh.fit(NS, query, budget, include_content=True)
                assert [(e.key, e.form, e.line_ranges, e.content) for e in mine.entries] == [
                    (e.key, e.form, e.line_ranges, e.content) for e in theirs.entries
                ], (query, budget)


async def test_after_a_rewrite_the_excerpt_quotes_the_new_text(client: AsyncClient) -> None:
    await put_task_outputs(client)
    before = await client.fit(NS, QUERY, 800)
    await client.put(NS, "logs/worker", service_log(fail_at=20), kind="log")
    result = await client.fit(NS, QUERY, 800, include_content=True)
    worker = next(e for e in result.entries if e.key == "logs/worker")
    assert (
        worker.line_ranges != next(e for e in before.entries if e.key == "logs/worker").line_ranges
    )
    full = lines_of((await client.get(NS, "logs/worker", full=True)).content)
    shown = [line for line in lines_of(worker.content) if line and not line.startswith("[...")]
    assert shown == [full[i - 1] for a, b in worker.line_ranges for i in range(a, b + 1)]
    assert FAILING_LINE in worker.content


async def test_a_query_that_names_the_output_gets_that_outputs_line(client: AsyncClient) -> None:
    # Two services log the same message; only the key and tool name tell them apart.
    def log(service: str) -> str:
        lines = [f"2024-05-01 10:{i // 60:02d}:{i % 60:02d} INFO heartbeat seq={i}"
                 for i in range(300)]  # fmt: skip
        lines[150] = "2024-05-01 10:02:30 WARN worker 7 exited: lease expired on queue jobs"
        return "\n".join(lines) + "\n"

    for i, service in enumerate(("payments", "billing")):
        await client.put(NS, f"{service}/worker.log", log(service), kind="log",
                         tool_name=service, event_time=NOW - timedelta(minutes=2 - i))  # fmt: skip
    # Room for one line and its markers.
    result = await client.fit(NS, "payments log: worker exited, lease expired", 45,
                              include_content=True, explain=True)  # fmt: skip
    assert result.keys == ["payments/worker.log"]
    assert "lease expired" in result.entries[0].content
    # The name picks among lines that match; it makes no line match by itself.
    named_only = await client.fit(NS, "payments", 45, explain=True)
    assert not [s for c in named_only.explain for s in c.segments if s.relevance > 0]


async def test_the_command_an_output_echoes_names_it_rather_than_answering(
    client: AsyncClient,
) -> None:
    # A shell tool's output opening with its command: that line matched "pip install" in
    # every run of it and filled the excerpts, while the line that answers says neither.
    done = "Successfully installed " + " ".join(f"pkg{i}-1.{i}" for i in range(0, 60, 6))
    for run, last in enumerate(("ERROR: ResolutionImpossible", done)):
        lines = ["$ pip install -r requirements.txt"]
        for i in range(60):
            lines += [f"Collecting pkg{i}==1.{i} (from -r requirements.txt (line {i}))",
                      f"  Using cached pkg{i}-1.{i}-py3-none-any.whl ({i + 3} kB)"]  # fmt: skip
        lines += [last, f"[exit code {1 - run}]"]
        await client.put(NS, f"tool/pip#{run}", "\n".join(lines), kind="tool_output",
                         tool_name="bash", event_time=NOW - timedelta(minutes=2 - run))  # fmt: skip
    result = await client.fit(NS, "did pip install work, what got installed?", 120,
                              include_content=True, explain=True)  # fmt: skip
    shown = "".join(entry.content for entry in result.entries)
    assert done in shown
    assert not [s for c in result.explain for s in c.segments if s.first_line == 1]


async def test_a_terminal_sessions_command_says_what_its_output_is_about(
    client: AsyncClient,
) -> None:
    # An agent's shell session stored whole: no line of `uname -a`'s output, nor the command,
    # says "kernel"; what the program reports does.
    blocks = [
        (
            "ls -la /etc",
            [f"-rw-r--r-- 1 root root {i * 37} Jan  8  2023 conf{i}.d" for i in range(60)],
        ),
        ("uname -a", ["Linux build-7 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux"]),
        ("python3 --version", ["Python 3.11.7"]),
        ("id", ["uid=1000(dev) gid=1000(dev) groups=1000(dev),27(sudo)"]),
        ("cat notes.txt", [f"note {i}: remember to rotate the release keys" for i in range(40)]),
    ]
    text = "".join(
        f"$ {command}\n" + "".join(f"{line}\n" for line in out) for command, out in blocks
    )
    await client.put(NS, "term/session", text, kind="tool_output", tool_name="bash")
    for question, answer in (
        ("which kernel version is running?", "6.1.0-28-amd64"),
        ("which user am I logged in as?", "uid=1000(dev)"),
    ):
        result = await client.fit(NS, question, 150, include_content=True)
        [entry] = result.entries
        assert entry.form == "excerpt" and answer in entry.content, question


async def test_a_one_line_json_document_is_excerpted_item_by_item(client: AsyncClient) -> None:
    # An API's answer as it comes: one line, larger than the budget.
    jobs = [
        {"id": f"job-{i:04d}", "status": "succeeded", "queue": "thumbnails", "attempts": 1}
        for i in range(400)
    ]
    jobs[237] = {"id": "job-0237", "status": "failed", "queue": "thumbnails", "attempts": 3,
                 "error": "disk quota exceeded on volume scratch-2"}  # fmt: skip
    content = json.dumps({"jobs": jobs}, separators=(",", ":"))
    await client.put(NS, "tool/jobs-api", content, kind="tool_output", tool_name="curl")
    result = await client.fit(NS, "which job failed on disk quota?", 200, include_content=True)
    [entry] = result.entries
    assert entry.form == "excerpt" and result.total_tokens <= 200
    assert '"error": "disk quota exceeded on volume scratch-2"' in entry.content
    # The ranges are lines of the document's indented rendering, the same for every reader.
    rendered = json.dumps(json.loads(content), indent=1, ensure_ascii=False).split("\n")
    assert entry.total_lines == len(rendered)
    shown = [line for line in lines_of(entry.content) if line and not line.startswith("[...")]
    assert shown == [rendered[i - 1] for a, b in entry.line_ranges for i in range(a, b + 1)]


async def test_json_nested_too_deep_to_render_is_stored_and_scored_as_its_one_line(
    client: AsyncClient,
) -> None:
    deep = '{"a":' * 3000 + "1" + "}" * 3000  # deeper than Python's json can parse
    await client.put(NS, "tool/deep", deep, kind="tool_output")
    result = await client.fit(NS, "a", 50, explain=True)
    assert [c.key for c in result.explain] == ["tool/deep"]
    assert (await client.get(NS, "tool/deep", full=True)).content == deep


async def test_coloured_tool_output_is_stored_matched_and_excerpted(client: AsyncClient) -> None:
    # pytest --color=yes: every status word wrapped in terminal colour codes.
    lines = [f"\x1b[32mPASSED\x1b[0m tests/test_app.py::test_case_{i}" for i in range(400)]
    lines[250] = "\x1b[31mFAILED\x1b[0m tests/test_app.py::test_case_250 - KeyError: 'order_id'"
    content = "\n".join(lines) + "\n"
    written = await client.put(NS, "tool/pytest-colour", content, kind="tool_output")
    assert written.compressed_tokens < written.original_tokens
    assert "\x1b" not in (await client.get(NS, "tool/pytest-colour")).content
    assert (await client.get(NS, "tool/pytest-colour", full=True)).content == content
    result = await client.fit(NS, "which test failed with KeyError?", 120, form="full",
                              include_content=True)  # fmt: skip
    [entry] = result.entries
    assert entry.form == "excerpt" and "test_case_250 - KeyError" in entry.content


async def test_a_log_line_longer_than_the_budget_is_shown_by_its_head(
    client: AsyncClient, token_counter: TokenCounter
) -> None:
    # One error line carries a request dump of some 15,000 tokens: whole, the log fits no
    # budget, and a line cannot be cut into segments.
    lines = [f"2026-12-05 10:{i // 60:02d}:{i % 60:02d} INFO api: GET /v1/items/{i} 200"
             for i in range(300)]  # fmt: skip
    dump = " ".join(f"field{j}={j * 7919 % 1000003}" for j in range(1500))
    lines[150] = (
        "2026-12-05 10:02:30 ERROR billing: invoice export rejected by the tax service: "
        f"schema mismatch on vat_number; request dump: {dump}"
    )
    await client.put(NS, "tool/api-log", "\n".join(lines), kind="log")
    for k in range(4):
        await client.put(NS, f"note/{k}", f"Roadmap and hiring plans for quarter {k}. " * 8)
    result = await client.fit(NS, "why was the invoice export rejected?", 800,
                              include_content=True)  # fmt: skip
    assert result.total_tokens <= 800
    api = next(e for e in result.entries if e.key == "tool/api-log")
    assert api.form == "excerpt"
    assert any(first <= 151 <= last for first, last in api.line_ranges)
    assert "rejected by the tax service: schema mismatch on vat_number" in api.content
    assert " chars omitted ...]" in api.content
    assert api.tokens == token_counter.count(api.content)


async def test_a_long_line_comes_whole_when_the_budget_has_room_for_it(
    client: AsyncClient, token_counter: TokenCounter
) -> None:
    lines = [f"2026-12-05 12:{i // 60:02d}:{i % 60:02d} INFO api: GET /v1/items/{i} 200"
             for i in range(300)]  # fmt: skip
    # A layout warning of 1,447 characters (778 tokens), a plan counts by its head (532).
    views = ", ".join(
        f'"<Constraint:0x7f9d{j:04x} H:[View:0x7f9e{j:04x}]-(8)-|>"' for j in range(26)
    )
    lines[120] = f"2026-12-05 12:02:00 WARN ui: unable to satisfy constraints: ({views}) tail-end"
    assert len(lines[120]) > 1_200
    await client.put(NS, "tool/ui-log", "\n".join(lines), kind="log")
    query = "unable to satisfy constraints"
    for budget, whole in ((700, False), (1_200, True)):
        result = await client.fit(NS, query, budget, include_content=True)
        [entry] = result.entries
        assert entry.form == "excerpt" and entry.tokens == token_counter.count(entry.content)
        assert result.total_tokens <= budget
        assert ("tail-end" in entry.content) is whole
        assert (" chars omitted ...]" in entry.content) is not whole
    # Without the text, the tokens are the plan's: the line counted by its head.
    planned = await client.fit(NS, query, 1_200)
    assert planned.entries[0].tokens < result.entries[0].tokens


async def test_the_hunk_that_defines_a_name_answers_what_changed_in_it(
    client: AsyncClient,
) -> None:
    # Eight files import and call render_total in short hunks; one long hunk changes its
    # definition. By words alone, the short hunks match best (BM25 divides by length).
    parts = []
    for i in range(8):
        parts.append(
            f"diff --git a/app/view{i}.py b/app/view{i}.py\n--- a/app/view{i}.py\n"
            f"+++ b/app/view{i}.py\n@@ -1,4 +1,4 @@\n-from app.render import render_total\n"
            f"+from app.render import render_total, render_rows\n"
            f"     total = render_total(rows_{i})\n"
        )
    body = "".join(f"+    subtotal_{j} = sum(row.amount_{j} for row in rows)\n" for j in range(24))
    parts.append(
        "diff --git a/app/render.py b/app/render.py\n--- a/app/render.py\n+++ b/app/render.py\n"
        "@@ -10,6 +10,30 @@ import decimal\n-def render_total(rows):\n"
        f"+def render_total(rows, currency='EUR'):\n{body}"
        "+    return format_money(subtotal_0, currency)\n"
    )
    await client.put(NS, "tool/git-diff", "".join(parts), kind="tool_output", tool_name="git")
    result = await client.fit(NS, "what changed in render_total?", 400, include_content=True)
    [entry] = result.entries
    assert entry.form == "excerpt"
    assert "+def render_total(rows, currency='EUR'):" in entry.content


async def test_a_long_line_matches_by_the_head_it_shows(client: AsyncClient) -> None:
    lines = [f"2026-12-05 11:{i // 60:02d}:{i % 60:02d} INFO api: GET /v1/items/{i} 200"
             for i in range(300)]  # fmt: skip
    # The query's word deep in a long line's tail, which an excerpt would not show...
    lines[100] = "INFO cache: warmed keys " + " ".join(f"k{j}" for j in range(900)) + " zanzibar"
    # ...and in a short line, which it would.
    lines[200] = "WARN scheduler: the zanzibar queue is paused"
    await client.put(NS, "tool/cache-log", "\n".join(lines), kind="log")
    result = await client.fit(NS, "zanzibar", 300, include_content=True, explain=True)
    [entry] = result.entries
    assert "the zanzibar queue is paused" in entry.content
    [scored] = result.explain
    matched = {s.first_line for s in scored.segments if s.relevance > 0}
    assert 201 in matched and 101 not in matched
    # The entry matches by all of its text: a word found only in a long line's tail.
    lines[200] = "WARN scheduler: a queue is paused"
    await client.put(NS, "tool/cache-log", "\n".join(lines), kind="log")
    await client.put(NS, "note/other", "Roadmap and hiring plans for the quarter. " * 10)
    result = await client.fit(NS, "zanzibar", 300, explain=True)
    scores = {c.key: c for c in result.explain}
    assert scores["tool/cache-log"].factors["lexical_relevance"] > 0
    assert scores["note/other"].factors["lexical_relevance"] == 0
    assert all(s.relevance == 0 for s in scores["tool/cache-log"].segments)


async def test_a_training_log_shows_each_progress_bar_by_its_last_state(
    client: AsyncClient, token_counter: TokenCounter
) -> None:
    # tqdm's bars as a caller that decodes the bytes itself stores them: one line per bar,
    # redrawn with carriage returns, between the script's own log lines.
    lines = []
    for epoch in range(1, 31):
        bar = "".join(
            f"\repoch {epoch}: {s * 100 // 60:3d}%|{'#' * (s // 6):<10}| {s}/60 "
            f"[00:{s:02d}<00:00, loss={3.0 / (epoch + s / 60):.4f}]"
            for s in range(61)
        )
        lines += [bar, f"INFO epoch {epoch} done, checkpoint ckpt/epoch-{epoch}.pt"]
    lines[41] = "ERROR epoch 21 diverged: loss is nan; restored ckpt/epoch-20.pt"
    await client.put(NS, "tool/train", "\n".join(lines) + "\n", kind="log", tool_name="python")
    # Under the compressed form's 193 tokens (which shows the same two lines): an excerpt.
    result = await client.fit(NS, "which epoch diverged?", 150, include_content=True)
    [entry] = result.entries
    assert entry.form == "excerpt" and result.total_tokens <= 150
    assert "ERROR epoch 21 diverged" in entry.content
    # The bar before it, as the terminal ended up showing it.
    assert "epoch 21: 100%|##########| 60/60" in entry.content
    assert "[... 60 progress updates omitted]" in entry.content
    assert " 59/60 " not in entry.content
    assert entry.tokens == token_counter.count(entry.content)


async def test_a_one_line_output_larger_than_the_budget_is_shown_by_its_head(
    client: AsyncClient,
) -> None:
    error = (
        "java.lang.IllegalStateException: payment gateway refused the capture for order 8812: "
        "card issuer timeout after 30s; request context: "
        + " ".join(f"attr{i}=value{i * 31 % 977}" for i in range(2500))
    )
    await client.put(NS, "tool/java-error", error, kind="tool_output", tool_name="java")
    result = await client.fit(NS, "why did the payment capture fail?", 800, include_content=True)
    [entry] = result.entries
    assert entry.form == "excerpt" and entry.line_ranges == ((1, 1),) and entry.total_lines == 1
    assert entry.content.startswith("java.lang.IllegalStateException: payment gateway refused")
    assert entry.content.endswith(" chars omitted ...]\n")
    # A message is never cut, however long its one line.
    await client.put(NS, "chat/long", error, kind="message")
    explained = await client.fit(NS, "why did the payment capture fail?", 800, explain=True)
    assert {c.key: c.segments for c in explained.explain}["chat/long"] == ()


async def test_a_compressed_form_without_the_lines_that_answer_does_not_stand_in(
    client: AsyncClient,
) -> None:
    # `python -X importtime`: every line says "import time", so what matches is spread over
    # the whole output, and its compressed form folds the lines into one shape. It cannot
    # show how long `ssl` took; the lines that can are what goes in.
    modules = [f"pkg{k}.module{k}" for k in range(150)]
    modules[97], modules[120] = "_ssl", "ssl"
    text = "import time: self [us] | cumulative | imported package\n" + "".join(
        f"import time: {137 * k % 4000 + 90:>9} | {211 * k % 9000 + 90:>10} | {' ' * (k % 5)}{m}\n"
        for k, m in enumerate(modules)
    )
    await client.put(NS, "tool/importtime", text, kind="tool_output", tool_name="python")
    # Among other outputs, some of which name ssl too: "import time" tells lines apart about
    # as well as "ssl" does, and the lines that say only "import time" match strongly as well.
    apt = "".join(f"Unpacking ssl-cert-{k} (3.0.{k}) over (3.0.{k - 1}) ...\n" for k in range(300))
    web = "".join(
        f"10.0.0.{k % 250} GET /api/v1/items/{k} 200 {k * 7 % 900}ms\n" for k in range(1000)
    )
    await client.put(NS, "tool/apt", apt, kind="log", tool_name="apt-get")
    await client.put(NS, "log/web", web, kind="log")
    stored = await client.get(NS, "tool/importtime")
    assert "| ssl" not in stored.content  # the compressed form
    result = await client.fit(NS, "how long did importing ssl take?", 800, include_content=True)
    entry = next(e for e in result.entries if e.key == "tool/importtime")
    assert entry.form == "excerpt" and "| ssl\n" in entry.content


async def test_a_compressed_form_that_says_every_line_shows_all_the_lines_that_answer(
    client: AsyncClient,
) -> None:
    # A git status compressed says each folder once and writes no line as git did; every
    # path is in it. Where it fits, it answers "which files were deleted?" with all of them;
    # an excerpt of the full form showed a few deleted lines and left the alike others out.
    await put_task_outputs(client)
    text, deleted = git_status()
    await client.put(NS, "tool/git-status", text, kind="tool_output", tool_name="git")
    stored = await client.get(NS, "tool/git-status")
    assert stored.compressed_tokens < 0.6 * stored.original_tokens  # see stored.content
    assert not any(f"deleted:   {path}" in stored.content for path in deleted)
    result = await client.fit(NS, "which files were deleted?", 800, include_content=True)
    entry = next(e for e in result.entries if e.key == "tool/git-status")
    assert entry.form == "compressed"
    assert all(path.rsplit("/", 1)[1] in entry.content for path in deleted)


async def test_an_error_in_the_middle_of_a_long_log_counts_for_its_error_factor(
    client: AsyncClient,
) -> None:
    # About 200 KB: longer than the head and tail error_indicator reads, with one error line
    # in the middle, which only the segments (each judged whole at Put) see.
    lines = [f"2026-12-05 11:{i // 60 % 60:02d}:{i % 60:02d} INFO api: GET /v1/items/{i} 200"
             for i in range(3000)]  # fmt: skip
    lines[1500] = "2026-12-05 11:25:00 ERROR api: upstream timed out after 30 s"
    await client.put(NS, "tool/api-log", "\n".join(lines), kind="log")
    quiet = [line for k, line in enumerate(lines) if k != 1500]
    await client.put(NS, "tool/quiet-log", "\n".join(quiet), kind="log")
    result = await client.fit(NS, "api requests", 500, explain=True)
    factors = {c.key: c.factors["error_indicator"] for c in result.explain}
    assert factors["tool/api-log"] >= 0.25
    assert factors["tool/quiet-log"] == 0


def payments_log() -> str:
    """2,000 lines of a payments service: captures, and ten errors in four kinds."""
    lines = []
    for i in range(2000):
        stamp = f"2026-12-05 18:{i // 60 % 60:02d}:{i % 60:02d}"
        if i in (700, 701, 950, 1300):
            lines.append(
                f"{stamp} ERROR c.a.pay.HikariPool : HikariPool-1 - Connection is not "
                "available, request timed out after 30000ms."
            )
        elif i in (820, 1100, 1500):
            lines.append(
                f"{stamp} ERROR c.a.pay.FraudScoreClient : fraud-score call failed: HTTP 503 "
                "from http://fraud-score:8080/v1/score"
            )
        elif i in (1010, 1400):
            lines.append(
                f"{stamp} ERROR c.a.pay.LedgerWriter : ledger append failed for batch {i}: "
                "java.net.SocketTimeoutException: Read timed out"
            )
        else:
            lines.append(
                f"{stamp} INFO  c.a.pay.PaymentService : payment {i * 7919:012x} captured "
                f"amount={i % 997}.{i % 89:02d} currency=EUR"
            )
    return "\n".join(lines)


INCIDENT_CHAT = [
    "Priya here. I'm taking incident commander for this one; declaring SEV-2.",
    "Looking at payments-api now; the deploy went out fifteen minutes before the first alert.",
    "Gateway shows 502s on the payments routes only, cart and shipping are fine.",
    "Support says the first customer report came in at 18:52 from a merchant in Lyon.",
    "DBA team saw long-running locks on the primary around 18:40, checking what held them.",
    "Decision: roll payments-api back to the previous release now and investigate afterwards.",
    "Rollback started at 19:12 UTC, helm revision 88, watching the pods come up.",
    "Public status page updated at 19:20 UTC: degraded checkout performance, investigating.",
    "Redis memory is at 94 percent, maxmemory policy only evicts keys that have a TTL.",
    "Error rate is back under one percent since 19:34, keeping the incident open.",
    "Customer impact estimate: roughly 3,100 failed checkouts between 18:46 and 19:34 UTC.",
    "Follow-up tickets filed for the migration lock timeout and the session key TTLs.",
    "Postmortem doc drafted, review on Tuesday at ten, please add your timelines.",
    "Thanks all, downgrading to SEV-3 and leaving the rollback in place for now.",
]


async def test_a_message_that_answers_beats_error_lines_that_share_no_word_with_the_question(
    client: AsyncClient,
) -> None:
    # No line of the log holds a word of the question; ten report errors. Those are hits by
    # their error evidence alone, no full match: the message that answers goes in, although
    # it was said hours before the rest.
    await client.put(NS, "logs/payments-api", payments_log(), kind="log", event_time=NOW)
    for i, text in enumerate(INCIDENT_CHAT):
        when = NOW - timedelta(minutes=300 if i == 0 else 55 - 3 * i)
        await client.put(NS, f"chat/{i:03d}", text, kind="message", role="user", event_time=when)
    for budget in (300, 1000):
        result = await client.fit(NS, "Who is the incident commander?", budget)
        assert "chat/000" in [e.key for e in result.entries], (budget, result.entries)


async def test_a_budget_too_small_for_any_line_and_its_markers_says_too_large(
    client: AsyncClient,
) -> None:
    compiled = [
        f"[{i:03d}/400] compiled src/module_{i}.py in {i * 37 % 900} ms" for i in range(400)
    ]
    log = "\n".join(
        [*compiled, "src/app.py:41: error: KeyError: 'port'", "make: *** [build] Error 1"]
    )
    await client.put(NS, "tool/make", log, kind="tool_output", tool_name="make")
    # Down from a budget that takes it: the first budget under its smallest excerpt (a line
    # and its markers) leaves it out for its size, not for other entries taking the budget.
    for budget in range(60, 0, -1):
        result = await client.fit(NS, "why does the build fail?", budget)
        if not result.entries:
            assert result.left_out_by_reason == {"too_large": 1}, budget
            break
    else:
        raise AssertionError("an excerpt fitted every budget")


def describe_pod(name: str, settings: dict[str, str]) -> str:
    """One pod of `kubectl describe pods`, its events worded as kubelet words them."""
    env = "".join(f"      {key}:  {value}\n" for key, value in settings.items())
    events = "".join(
        f"  Normal  Pulled  {i}m  kubelet  Container image already present on machine\n"
        for i in range(12)
    )
    return (
        f"Name:             {name}\nNamespace:        shop-prod\n"
        "Containers:\n  app:\n    Image:          shop/app:2.15.0\n"
        "    Limits:\n      cpu:     1\n      memory:  768Mi\n"
        f"    Environment:\n{env}    Mounts:\n      /var/run/secrets from token (ro)\n"
        f"Conditions:\n  Type              Status\n  Ready             True\nEvents:\n{events}\n"
    )


async def test_a_small_budget_gets_the_block_of_keys_that_answers(client: AsyncClient) -> None:
    # Read as text, each pod was one paragraph of about 245 tokens: a 150-token Fit had
    # returned nothing. Cut by its keys, the payments pod's environment comes back.
    pods = [
        describe_pod(
            "payments-6c4b9d7f8-kq2xz", {"DATABASE_URL": "postgres://db/pay", "WORKERS": "4"}
        ),
        describe_pod("cart-7d9f-abcde", {"REDIS_URL": "redis://cache:6379", "LOG_LEVEL": "debug"}),
        describe_pod("search-5f5-zzzzz", {"ES_URL": "http://es:9200", "SHARDS": "3"}),
    ]
    await client.put(NS, "tool/describe", "".join(pods), kind="note")
    result = await client.fit(
        NS, "which environment variables does the payments pod have?", 150, include_content=True
    )
    assert [e.form for e in result.entries] == ["excerpt"]
    shown = result.entries[0].content
    assert "DATABASE_URL:  postgres://db/pay" in shown and "WORKERS:  4" in shown
    assert result.total_tokens <= 150


def pytest_run(failing: list[str], tests: int = 14) -> str:
    """A `pytest -v` run of `tests` price tests, those named in `failing` failing."""
    names = ["test_comma", "test_negative", *(f"test_case_{i:02d}" for i in range(tests - 2))]
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0",
        "rootdir: /home/dev/shop",
        f"collected {tests} items",
        "",
    ]
    lines += [
        f"tests/test_price.py::{name} {'FAILED' if name in failing else 'PASSED'}"
        f"{' ' * 30}[{100 * (i + 1) // tests:3d}%]"
        for i, name in enumerate(names)
    ]
    if failing:
        lines += ["", "=" * 35 + " FAILURES " + "=" * 35]
        for name in failing:
            lines += [
                f"{'_' * 30} {name} {'_' * 30}",
                f"    def {name}():",
                '>       assert price("$1,200.00") == 1200.0',
                "E       ValueError: could not convert string to float: '1,200.00'",
                "",
                "tests/test_price.py:7: ValueError",
            ]
        lines += ["=" * 30 + " short test summary info " + "=" * 30]
        lines += [f"FAILED tests/test_price.py::{name} - ValueError" for name in failing]
    passed = tests - len(failing)
    summary = (f"{len(failing)} failed, " if failing else "") + f"{passed} passed in 0.81s"
    return "\n".join([*lines, f"{'=' * 30} {summary} {'=' * 30}"]) + "\n"


@pytest.mark.parametrize(
    ("tool", "echo"), [("pytest", ""), ("shell", "dev@box:~/shop$ python -m pytest -v\n")]
)
async def test_the_newest_run_of_a_command_says_how_it_ended_beside_older_failures(
    client: AsyncClient, tool: str, echo: str
) -> None:
    # An agent ran the tests three times while fixing them; the last run passed. A question
    # about the state now matches the old failures, while the run that passed holds none of
    # its words: its end goes in beside them. Runs of one command: one tool's outputs that
    # open alike, or a shell's that echo the same command.
    runs = [["test_comma", "test_negative"], ["test_negative"], []]
    for i, failing in enumerate(runs):
        await client.put(
            NS, f"pytest-{i + 1}", echo + pytest_run(failing), kind="tool_output",
            tool_name=tool, event_time=NOW - timedelta(minutes=6 - 2 * i),
        )  # fmt: skip
    result = await client.fit(NS, "which tests are still failing?", 300, include_content=True)
    assert result.total_tokens <= 300
    newest = {e.key: e for e in result.entries}["pytest-3"]
    assert "14 passed in 0.81s" in newest.content

    # Not when the newest is another tool's output, in another thread, or another command.
    for thread, other_echo in (("other", echo), ("", echo.replace("-v", "-x") or "$ tox\n")):
        await client.put(
            NS, "pytest-3", other_echo + pytest_run([]), kind="tool_output", tool_name=tool,
            thread=thread, event_time=NOW,
        )  # fmt: skip
        result = await client.fit(NS, "which tests are still failing?", 300, include_content=True)
        assert "14 passed" not in "".join(e.content for e in result.entries)


async def test_a_superlative_question_gets_the_row_holding_the_columns_extreme(
    client: AsyncClient,
) -> None:
    # No word of "which pod restarted the most?" is on the row that answers it; the column
    # of restarts as a whole says which row that is. Both tables are far over the budget.
    pods = [f"{'NAME':<36}{'READY':<8}{'STATUS':<18}{'RESTARTS':<10}AGE"]
    for i in range(300):
        restarts, status = (41, "CrashLoopBackOff") if i == 217 else (i % 4, "Running")
        pods.append(f"{f'api-7f9c{i:04d}-x{i % 7}':<36}{'1/1':<8}{status:<18}{restarts:<10}3d")
    sales = ["store,region,revenue,units"]
    sales += [f"store-{i:03d},north,{1000 + (i * 7919) % 9000},{30 + (i * 37) % 500}"
              for i in range(400)]  # fmt: skip
    await client.put(NS, "tool/kubectl-get-pods", "\n".join(pods), kind="tool_output")
    await client.put(NS, "tool/sales.csv", "\n".join(sales), kind="tool_output")
    # A listing's sizes have no header; `du` sizes folders, and the last line is their total.
    du = [f"{(i * 7919) % 50000 + 8}\tsite-packages/pkg_{i:03d}" for i in range(300)]
    du[123] = "812344\tsite-packages/playwright"
    du.append("4912344\tsite-packages")
    await client.put(NS, "tool/du", "\n".join(du), kind="tool_output", tool_name="bash")
    # JSON Lines: a key holding a number in every record is a column named by the key.
    access = [json.dumps({"route": "/api/cart", "latency_ms": 10 + (i * 31) % 90, "req": f"r{i}"})
              for i in range(600)]  # fmt: skip
    access[444] = access[444].replace('"latency_ms": ', '"latency_ms": 4821')
    await client.put(NS, "tool/access.jsonl", "\n".join(access), kind="tool_output")
    # A log: a number named by the word before it (`finished in 912.4s`) is a column too.
    runs = [f"10:{i // 60:02d}:{i % 60:02d} INFO scheduler job job-{i:03d} finished in "
            f"{(i * 53) % 97 / 10 + 0.5}s" for i in range(400)]  # fmt: skip
    runs[288] = "10:04:48 INFO scheduler job job-288 finished in 3.5 min"
    await client.put(NS, "scheduler.log", "\n".join(runs), kind="log")
    fewest = min(range(400), key=lambda i: 30 + (i * 37) % 500)
    for query, answer in (
        ("which pod has restarted the most times?", "api-7f9c0217-x0"),
        ("which store sold the fewest units?", f"store-{fewest:03d},"),
        ("which package takes the most disk space?", "site-packages/playwright"),
        ("which request was the slowest?", '"req": "r444"'),
        ("which job took the longest?", "job-288 finished"),
    ):
        result = await client.fit(NS, query, 200, include_content=True)
        assert result.total_tokens <= 200
        assert answer in "".join(entry.content for entry in result.entries), query


async def test_a_part_of_a_long_json_record_comes_with_the_records_name(
    client: AsyncClient,
) -> None:
    # `kubectl get pods -o json`: the line that answers is 80 lines below the pod's name.
    def pod(i: int) -> dict[str, object]:
        phase, reason = ("Failed", "OOMKilled") if i == 61 else ("Running", "")
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"billing-5c7d9-{i:05d}", "namespace": "prod",
                         "labels": {"app": "billing", "pod-template-hash": "5c7d9"}},
            "spec": {"containers": [{"name": "billing", "image": "registry.local/billing:4",
                                     "ports": [{"containerPort": 8080}]}],
                     "nodeName": f"node-{i % 7}", "restartPolicy": "Always",
                     "volumes": [{"name": f"config-{j}", "configMap": {"name": f"cm-{j}"}}
                                 for j in range(12)]},
            "status": {"phase": phase, "podIP": f"10.0.{i % 9}.{i}",
                       "containerStatuses": [{"name": "billing", "ready": phase == "Running",
                                              "restartCount": 0, "reason": reason}]},
        }  # fmt: skip

    text = json.dumps({"kind": "List", "items": [pod(i) for i in range(100)]}, indent=4)
    await client.put(NS, "tool/pods.json", text, kind="tool_output", tool_name="kubectl")
    result = await client.fit(NS, "which pod was OOMKilled?", 400, include_content=True)
    shown = "".join(entry.content for entry in result.entries)
    assert '"reason": "OOMKilled"' in shown
    assert '"name": "billing-5c7d9-00061"' in shown


async def test_an_excerpt_says_how_often_its_match_repeats(client: AsyncClient) -> None:
    # 54 timeouts in a 3,000-line log: the excerpt shows a few (repeats give way), and says
    # how many there are, so that "how many times?" has an answer within 500 tokens.
    lines, timeouts = [], 0
    for i in range(3000):
        stamp = f"2026-05-01 10:{i // 60 % 60:02d}:{i % 60:02d}"
        if i % 55 == 7:
            timeouts += 1
            lines.append(
                f"{stamp} WARN payments-client request {1000 + i} timed out after {i % 30}s"
            )
        elif i % 3:
            lines.append(f"{stamp} INFO orders handled GET /api/orders/{i} in {i % 200}ms")
        else:
            lines.append(f"{stamp} DEBUG cache hit ratio 0.{i % 97:02d} for shard {i % 16}")
    await client.put(NS, "logs/gateway", "\n".join(lines), kind="log")
    result = await client.fit(
        NS, "how many times did the payments client time out?", 500, include_content=True
    )
    (entry,) = [e for e in result.entries if e.key == "logs/gateway"]
    assert entry.form == "excerpt"
    shown = entry.content.count("timed out after")
    assert 0 < shown < timeouts
    (line, count), *others = entry.repeats
    assert count == timeouts
    assert "timed out after" in lines[line - 1]
    assert any(a <= line <= b for a, b in entry.line_ranges)  # a line the excerpt shows
    assert not others  # the cache and request lines share no word with the question


async def test_the_most_common_error_comes_first_with_its_count(client: AsyncClient) -> None:
    # Four kinds of error line, 40 / 15 / 7 / 3 copies, among 4,000 lines: no word of "the
    # most common error" tells them apart, their counts do.
    kinds = [
        ("ERROR db-pool connection reset by peer host=db{n}", 40),
        ("ERROR auth token expired for user u{n}", 15),
        ("ERROR s3-upload checksum mismatch for object o{n}", 7),
        ("ERROR queue consumer crashed with exit code {n}", 3),
    ]
    errors = [kind for kind, copies in kinds for _ in range(copies)]
    every = 4000 // len(errors)
    lines = []
    for i in range(4000):
        stamp = f"2026-05-01T11:{i // 60 % 60:02d}:{i % 60:02d}Z"
        k = i // every
        if i % every == every // 2 and k < len(errors):
            # Interleaved so that no kind comes first in the log.
            kind = errors[(k * 37) % len(errors)]
            lines.append(f"{stamp} {kind.format(n=i)}")
        else:
            lines.append(f"{stamp} INFO api handled request {i * 7} in {i % 300}ms")
    await client.put(NS, "logs/api", "\n".join(lines), kind="log")
    result = await client.fit(
        NS, "what is the most common error in the api log?", 300, include_content=True
    )
    (entry,) = [e for e in result.entries if e.key == "logs/api"]
    assert "connection reset by peer" in entry.content
    (line, count), *_ = entry.repeats
    assert count == 40 and "connection reset by peer" in lines[line - 1]


WORKERS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


async def test_a_time_of_day_in_the_question_finds_that_minutes_lines(
    client: AsyncClient,
) -> None:
    # A log of 2026-05-10 from 09:00 to 11:00: every line holds "05" and "10" in its date,
    # so "10:05" as words matches them all; the minute's mark matches its lines alone.
    lines = []
    for i in range(2400):
        second = 9 * 3600 + i * 3
        stamp = f"2026-05-10 {second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
        # Workers by name: a minute holds lines of twelve kinds (repeats of each give way).
        lines.append(f"{stamp} INFO {WORKERS[i % 12]} processed batch {i} in {i % 90} ms")
        if stamp.endswith("10:05:30"):  # what went wrong in that minute, with its traceback
            lines += [
                f"{stamp} ERROR worker 3 crashed",
                "Traceback (most recent call last):",
                '  File "worker.py", line 12, in run',
                "    total += rows / count",
                "ZeroDivisionError: division by zero",
            ]
    await client.put(NS, "logs/batches", "\n".join(lines), kind="log")
    result = await client.fit(NS, "what happened at 10:05?", 300, include_content=True)
    (entry,) = [e for e in result.entries if e.key == "logs/batches"]
    assert "ZeroDivisionError: division by zero" in entry.content
    minutes = [line[11:16] for line in entry.content.split("\n") if line.startswith("2026")]
    assert minutes.count("10:05") >= 3
    assert set(minutes) <= {"10:04", "10:05", "10:06"}  # with a line of context around
    # A range asks for each of its minutes.
    result = await client.fit(NS, "what ran from 09:58 to 10:01?", 300, include_content=True)
    (entry,) = [e for e in result.entries if e.key == "logs/batches"]
    ranged = {line[11:16] for line in entry.content.split("\n") if line.startswith("2026")}
    assert ranged and ranged <= {"09:57", "09:58", "09:59", "10:00", "10:01", "10:02"}


async def test_the_last_minutes_are_those_before_the_newest_log_time(
    client: AsyncClient,
) -> None:
    # Two logs of 2026-05-10; the newer ends at 11:59:57. Errors every 40 minutes or so, and
    # one at 11:53, in the last 10 minutes: "the last 10 minutes" are the newest log's.
    for key, start_hour in (("logs/older", 7), ("logs/newer", 10)):
        lines = []
        for i in range(2400):
            second = start_hour * 3600 + i * 3
            stamp = f"2026-05-10 {second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
            if i % 800 == 400 or stamp.endswith("11:53:00"):
                lines.append(f"{stamp} ERROR {WORKERS[i % 12]} lost its lease on shard {i}")
            else:
                lines.append(f"{stamp} INFO {WORKERS[i % 12]} processed batch {i} in {i % 90} ms")
        await client.put(NS, key, "\n".join(lines), kind="log")
    result = await client.fit(
        NS, "which errors came in the last 10 minutes?", 300, include_content=True
    )
    (entry,) = [e for e in result.entries if e.key == "logs/newer"]
    assert "11:53:00 ERROR" in entry.content
    shown = {line[11:16] for line in entry.content.split("\n") if line.startswith("2026")}
    assert shown <= {f"11:{m}" for m in range(49, 60)}
    assert all(e.key == "logs/newer" for e in result.entries if e.key.startswith("logs/"))


async def test_the_last_error_is_the_one_written_last(client: AsyncClient) -> None:
    lines = []
    for i in range(3000):
        stamp = f"2026-05-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        if i % 97 == 13:
            lines.append(f"{stamp} ERROR payment {i} declined by the card issuer")
        else:
            lines.append(f"{stamp} INFO checkout {i} completed in {i % 400} ms")
    await client.put(NS, "logs/checkout", "\n".join(lines), kind="log")
    errors = [n for n, line in enumerate(lines, start=1) if " ERROR " in line]
    for question, wanted in (
        ("what was the last error in the checkout log?", errors[-1]),
        ("what was the first error in the checkout log?", errors[0]),
    ):
        result = await client.fit(NS, question, 300, include_content=True)
        (entry,) = [e for e in result.entries if e.key == "logs/checkout"]
        assert any(a <= wanted <= b for a, b in entry.line_ranges), question


def package_table() -> str:
    """`dpkg -l` of 240 packages, among which several name or describe OpenSSL."""
    row = "{:<3} {:<30} {:<16} {:<12} {}"
    rows = [row.format("||/", "Name", "Version", "Architecture", "Description")]
    rows.append(row.format("+++", "=" * 30, "=" * 16, "=" * 12, "=" * 40))
    named = {
        60: ("libcurl4:amd64", "7.88.1-10", "client-side URL transfer library (OpenSSL flavour)"),
        90: ("libgnutls-openssl27:amd64", "3.7.9-2", "GNU TLS library - OpenSSL wrapper"),
        150: ("openssl", "3.0.19-1", "Secure Sockets Layer toolkit - cryptographic utility"),
        160: ("perl-openssl-defaults:amd64", "7+b1", "version baseline for OpenSSL packages"),
        190: ("python3-openssl", "23.0.0-1", "Python 3 wrapper around the OpenSSL library"),
        220: ("ssl-cert", "1.1.2", "simple debconf wrapper for OpenSSL package versions"),
    }
    for i in range(240):
        name, version, about = named.get(i, (f"libpkg{i}", f"1.{i}.0-1", f"support library {i}"))
        rows.append(row.format("ii", name, version, "amd64", about))
    return "\n".join(rows)


async def test_the_row_a_question_names_comes_before_those_that_mention_it(
    client: AsyncClient,
) -> None:
    # The rows that mention OpenSSL hold the question's word as often as the row named
    # `openssl`, and more of its words ("version", "package"): by words alone, they come first.
    await client.put(NS, "tool/dpkg", package_table(), kind="tool_output", tool_name="dpkg")
    result = await client.fit(
        NS, "which version of the openssl package is installed?", 120, include_content=True
    )
    [entry] = result.entries
    assert entry.form == "excerpt"
    assert "ii  openssl                        3.0.19-1" in entry.content


async def test_the_last_commit_of_a_git_log_is_its_first(client: AsyncClient) -> None:
    # git prints the newest commit first: "the last commit" is at the top of its output, as
    # "the last error" is at the bottom of a log.
    parts = git_log(14).removeprefix("commit ").split("\ncommit ")
    newest_first = "\n".join(f"commit {part}" for part in reversed(parts))
    commits = [line for line in newest_first.split("\n") if line.startswith("commit ")]
    await client.put(NS, "tool/git-log", newest_first, kind="tool_output", tool_name="git")
    last = await client.fit(NS, "what did the last commit change?", 200, include_content=True)
    assert commits[0] in last.entries[0].content
    assert commits[-1] not in last.entries[0].content
    first = await client.fit(NS, "which was the first commit?", 200, include_content=True)
    assert commits[-1] in first.entries[0].content


async def test_a_fit_after_a_cut_entry_is_deleted_or_rewritten_still_answers(
    client: AsyncClient,
) -> None:
    # The namespace's segment table is built by the first Fit and spliced by each change
    # after: a delete once left it unusable, and every later Fit failed with INTERNAL.
    await put_task_outputs(client)
    assert (await client.fit(NS, QUERY, 1000)).entries
    await client.delete(NS, "tool/pytest")
    await client.put(NS, "tool/pip", "short now", kind="tool_output", tool_name="pip")
    result = await client.fit(NS, QUERY, 1000, include_content=True)
    assert FAILING_LINE in {e.key: e for e in result.entries}["logs/worker"].content


async def test_the_newest_and_oldest_files_of_a_listing_answer_by_their_dates(
    client: AsyncClient,
) -> None:
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    rows = ["total 4096"]
    for i in range(300):
        date = f"{months[i % 12]} {i % 28 + 1:2d}  {2015 + i % 9}"
        rows.append(f"-rw-r--r-- 1 dev dev {1000 + 37 * i:>8} {date} file-{i:03d}.dat")
    rows[120] = "-rw-r--r-- 1 dev dev     4242 Dec  6 09:41 report-final.pdf"
    rows[200] = "-rw-r--r-- 1 dev dev     4343 Mar  1  2009 legacy.cfg"
    await client.put(NS, "tool/ls", "\n".join(rows), kind="tool_output", tool_name="ls")
    newest = await client.fit(NS, "what is the newest file?", 80, include_content=True)
    assert "report-final.pdf" in newest.entries[0].content
    oldest = await client.fit(NS, "which file is the oldest?", 80, include_content=True)
    assert "legacy.cfg" in oldest.entries[0].content


async def test_why_an_application_failed_brings_the_root_cause_of_its_java_trace(
    client: AsyncClient,
) -> None:
    """Spring's `Application run failed`, then a trace of 50 lines whose last `Caused by:`
    says what went wrong: the question meets the record, and the record's trace brings its
    root cause, forty lines below, with it."""
    frames = [f"\tat org.acme.boot.Step{i}.run(Step{i}.java:{i + 10})" for i in range(30)]
    lines = [
        *(f"2026-12-06 10:{i // 60:02d}:{i % 60:02d}.000  INFO 4242 --- [main] o.s.Boot : "
          f"bean {i} initialised in {i % 7} ms" for i in range(300)),
        "2026-12-06 10:05:00.000 ERROR 4242 --- [main] o.s.b.SpringApplication : "
        "Application run failed",
        "org.springframework.beans.factory.BeanCreationException: Error creating bean "
        "with name 'entityManagerFactory'",
        *frames,
        "Caused by: org.hibernate.exception.JDBCConnectionException: Unable to open JDBC "
        "Connection for DDL execution",
        *frames[:12],
        "Caused by: java.net.ConnectException: Connection refused (Connection refused)",
        *frames[:8],
    ]  # fmt: skip
    await client.put(NS, "log/api-startup", "\n".join(lines), kind="log")
    await client.put(NS, "note/ci", "CI runs the unit tests on every push.", kind="note")
    result = await client.fit(
        NS, "why did the application fail to start?", 400, include_content=True, keep_recent=0
    )
    shown = "\n".join(e.content for e in result.entries)
    assert "Application run failed" in shown
    assert "Caused by: java.net.ConnectException" in shown


def _git_log_p(commits: int, files: int) -> tuple[str, list[str]]:
    """A `git log -p` of `commits` commits of `files` files each, and each commit's sha line;
    the second file of the third commit adds RETRY_LIMIT."""
    text, shas = "", []
    for n in range(commits):
        sha = f"commit {n + 1:02d}{'5e7a9c1b' * 4}{n:06d}"
        shas.append(sha)
        text += (
            f"{sha}\nAuthor: Dev {n} <dev{n}@example.org>\n"
            f"Date:   Mon Dec {n + 1} 10:00:00 2026 +0000\n\n"
            f"    Change {n}: rework the handlers of part {n}\n\n"
        )
        for f in range(files):
            name = f"server/app/module_{n}_{f}.py"
            body = "".join(f"+    value_{n}_{f}_{j} = compute_{j}(rows)\n" for j in range(8))
            if (n, f) == (2, 1):
                body = "+RETRY_LIMIT = 5\n" + body
            text += (
                f"diff --git a/{name} b/{name}\nindex 1111111..2222222 100644\n"
                f"--- a/{name}\n+++ b/{name}\n"
                f"@@ -{10 + f},6 +{10 + f},14 @@ def handler_{n}_{f}(rows):\n{body}"
            )
    return text, shas


async def test_a_hunk_comes_with_its_file_and_its_commit(client: AsyncClient) -> None:
    # "Which commit added RETRY_LIMIT?" matches one hunk: the commit that holds it is two
    # heads up (the hunk's file, that file's commit), and its line answers.
    text, shas = _git_log_p(5, 3)
    await client.put(NS, "tool/git-log", "$ git log -p -n 5\n" + text, kind="tool_output",
                     tool_name="git")  # fmt: skip
    result = await client.fit(NS, "which commit added RETRY_LIMIT?", 400, include_content=True)
    (entry,) = [e for e in result.entries if e.key == "tool/git-log"]
    assert entry.form == "excerpt"
    assert "+RETRY_LIMIT = 5" in entry.content
    assert "diff --git a/server/app/module_2_1.py" in entry.content
    assert shas[2] in entry.content and shas[1] not in entry.content


async def test_a_rare_record_of_a_json_lines_log_comes_before_the_routine_ones(
    client: AsyncClient,
) -> None:
    # 600 JSON records, ten of them of user u0042: nine routine `request completed` (their
    # paths, methods and loggers vary) and one warning. By their level and message the nine
    # are one statement, which gives way past its first few, and the warning is shown.
    lines = []
    for i in range(600):
        user = "u0042" if i % 60 == 7 else f"u{100 + i * 7 % 900:04d}"
        k = i // 60 if user == "u0042" else i  # u0042's requests vary too
        record = {
            "ts": f"2026-12-07T08:{i // 60:02d}:{i % 60:02d}Z",
            "level": "info",
            "logger": ("api.http", "worker.queue")[k % 2],
            "msg": "request completed",
            "method": ("GET", "POST")[k // 2 % 2],
            "path": ("/v1/orders", "/v1/cart", "/v1/users")[k % 3],
            "status": 200,
            "user": user,
        }
        if i == 333:
            record.update(level="warn", logger="api.auth", msg="token signature expired",
                          status=401, user="u0042")  # fmt: skip
        lines.append(json.dumps(record))
    await client.put(NS, "log/app", "\n".join(lines) + "\n", kind="log")
    result = await client.fit(NS, "what happened to user u0042?", 600, include_content=True)
    (entry,) = [e for e in result.entries if e.key == "log/app"]
    assert entry.form == "excerpt" and "token signature expired" in entry.content
