"""Fit quality on LoCoMo: evidence recall at token budgets, per strategy, through the real API.

    python -m benchmarks.quality --dataset path/to/locomo_dev.json --out q.json
        [--budgets 500,1000,2000,4000] [--strategies scored,relevant,recent]
        [--target HOST:PORT]  (default: start a server on a private Valkey)
        [--preset headroom]   (a Fit weight preset other than the default)
        [--plot q.png] [--agent-scenario/--no-agent-scenario]

Every turn of a conversation becomes an entry of its own namespace (key = dia_id, event
time = its session's time plus its position, speaker as role); each non-adversarial
question (categories 1-4) is asked with Fit at every budget, and recall is the share of the
question's evidence turns that come back, averaged over questions. Evidence ids that name no
turn are dropped and counted. The agent scenario checks that the defaults keep a fresh error
log over an old chat turn that merely shares words with the query.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sharedctx import AsyncClient, PutItem

from ._plot import line_plot_png
from ._procs import target_or_own_server

_EVIDENCE = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)$")


def session_time(text: str) -> datetime:
    """LoCoMo's '1:56 pm on 8 May, 2023' as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_items(sample: dict[str, Any]) -> list[PutItem]:
    """One entry per turn, in order; image captions are part of what was said."""
    conv = sample["conversation"]
    roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
    items = []
    sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)) and conv[k])
    for number, name in sessions:
        start = session_time(conv[f"{name}_date_time"])
        for i, turn in enumerate(conv[name]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            items.append(
                PutItem(
                    key=turn["dia_id"],
                    content=text,
                    kind="message",
                    role=roles.get(turn["speaker"], "user"),
                    # Turns of a session are a few seconds apart, in order.
                    event_time=start + timedelta(seconds=10 * i),
                    tags=(f"session-{number}",),
                )
            )
    return items


def evidence_of(question: dict[str, Any], keys: set[str]) -> tuple[set[str], int]:
    """The question's evidence turn keys, and how many evidence ids named no turn."""
    found: set[str] = set()
    dropped = 0
    for raw in question.get("evidence", []):
        ids = [f"D{a}:{b}" for a, b in _EVIDENCE.findall(raw.replace("D:", "D"))]
        if not ids:
            dropped += 1
        for key in ids:
            if key in keys:
                found.add(key)
            else:
                dropped += 1
    return found, dropped


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.done, self.label, self.started = total, 0, label, time.monotonic()

    def step(self, n: int = 1) -> None:
        self.done += n
        if self.done == self.total or self.done % 25 == 0:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            rate = self.done / max(time.monotonic() - self.started, 1e-9)
            sys.stderr.write(
                f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                f"{self.done}/{self.total} ({rate:.0f}/s)"
            )
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


async def load(client: AsyncClient, samples: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    """Store every conversation as its own namespace; returns each namespace's keys."""
    namespaces = {}
    progress = Progress(sum(len(turn_items(s)) for s in samples), "storing turns")
    for sample in samples:
        ns = f"locomo/{sample['sample_id']}"
        await client.clear(ns)
        items = turn_items(sample)
        for start in range(0, len(items), 100):
            await client.put_many(ns, items[start : start + 100], timeout=300)
            progress.step(len(items[start : start + 100]))
        namespaces[ns] = {i.key for i in items}
    return namespaces


async def evaluate(
    client: AsyncClient,
    samples: Sequence[dict[str, Any]],
    keys: dict[str, set[str]],
    budgets: Sequence[int],
    strategies: Sequence[str],
    fit_options: dict[str, Any] | None = None,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Recall per strategy and budget over every non-adversarial question."""
    jobs = []
    dropped = 0
    for sample in samples:
        ns = f"locomo/{sample['sample_id']}"
        for q in sample["qa"]:
            if q.get("category") == 5:
                continue
            evidence, lost = evidence_of(q, keys[ns])
            dropped += lost
            if evidence:
                jobs.append((ns, q["question"], evidence, q.get("category")))
    sums = {s: dict.fromkeys(budgets, 0.0) for s in strategies}
    by_category: dict[str, dict[int, dict[str, float]]] = {s: {} for s in strategies}
    # Per conversation too: a figure that holds on every conversation is more likely to hold on
    # conversations not measured here than one carried by a few.
    by_namespace: dict[str, dict[int, dict[str, float]]] = {s: {} for s in strategies}
    progress = Progress(len(jobs) * len(strategies) * len(budgets), "asking Fit")
    gate = asyncio.Semaphore(concurrency)

    async def ask(ns: str, question: str, evidence: set[str], category: int) -> None:
        async with gate:
            for strategy in strategies:
                for budget in budgets:
                    result = await client.fit(
                        ns, question, budget, strategy=strategy, timeout=120, **(fit_options or {})
                    )
                    recall = len(evidence & set(result.keys)) / len(evidence)
                    sums[strategy][budget] += recall
                    cat = by_category[strategy].setdefault(budget, {})
                    cat[str(category)] = cat.get(str(category), 0.0) + recall
                    conv = by_namespace[strategy].setdefault(budget, {})
                    conv[ns] = conv.get(ns, 0.0) + recall
                    progress.step()

    await asyncio.gather(*(ask(*job) for job in jobs))
    n = len(jobs)
    counts = {str(c): sum(1 for j in jobs if j[3] == c) for c in {j[3] for j in jobs}}
    per_namespace = {ns: sum(1 for j in jobs if j[0] == ns) for ns in {j[0] for j in jobs}}
    return {
        "questions": n,
        "evidence_ids_dropped": dropped,
        "recall": {s: {str(b): round(sums[s][b] / n, 4) for b in budgets} for s in strategies},
        "recall_by_category": {
            s: {
                str(b): {c: round(v / counts[c], 4) for c, v in sorted(cats.items())}
                for b, cats in by_category[s].items()
            }
            for s in strategies
        },
        "recall_by_conversation": {
            s: {
                str(b): {ns: round(v / per_namespace[ns], 4) for ns, v in sorted(convs.items())}
                for b, convs in by_namespace[s].items()
            }
            for s in strategies
        },
    }


async def agent_scenario(client: AsyncClient) -> dict[str, Any]:
    """A fresh error log must beat an old chat turn that shares the query's words."""
    ns = "bench/agent-task"
    await client.clear(ns)
    now = datetime.now(UTC)
    old = now - timedelta(days=3)
    await client.put_many(
        ns,
        [
            PutItem(key="chat/old-1", kind="message", role="user", event_time=old,
                    content="Last week the build failed because of a flaky network test; "
                            "we decided to retry the build next time the build fails."),
            PutItem(key="chat/old-2", kind="message", role="assistant",
                    event_time=old + timedelta(seconds=20),
                    content="Sounds good, I will retry failed builds automatically."),
            PutItem(key="tool/ls", kind="tool_output", tool_name="ls",
                    event_time=now - timedelta(minutes=6),
                    content="src/\ntests/\npyproject.toml\nREADME.md"),
            PutItem(key="tool/git-status", kind="tool_output", tool_name="git",
                    event_time=now - timedelta(minutes=5),
                    content="On branch main\nChanges not staged for commit:\n"
                            "  modified: src/app.py"),
            PutItem(key="tool/pytest", kind="tool_output", tool_name="pytest",
                    event_time=now - timedelta(minutes=2),
                    content="============ FAILURES ============\n"
                            "___ test_parse_config ___\n"
                            "    def test_parse_config():\n"
                            ">       assert parse_config('app.toml')['port'] == 8080\n"
                            "E       KeyError: 'port'\n"
                            "src/app.py:41: KeyError\n"
                            "1 failed, 23 passed in 1.92s\nexit code 1"),
            PutItem(key="note/plan", kind="note", event_time=now - timedelta(minutes=1),
                    content="Next: make the CI green again."),
        ],
    )  # fmt: skip
    query = "Why did the build fail and what should I fix?"
    result = await client.fit(ns, query, 120, explain=True)
    ranked = [c.key for c in result.explain]
    return {
        "query": query,
        "budget_tokens": 120,
        "selected": result.keys,
        "ranking": ranked,
        "fresh_error_log_selected": "tool/pytest" in result.keys,
        "fresh_error_log_ranked_above_old_chat": ranked.index("tool/pytest")
        < ranked.index("chat/old-1"),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command line asks for."""
    samples = json.loads(Path(args.dataset).read_text())
    budgets = [int(b) for b in args.budgets.split(",")]
    strategies = [s.strip() for s in args.strategies.split(",")]
    async with AsyncExitStack() as stack:
        target = await target_or_own_server(stack, args.target)
        client = await stack.enter_async_context(AsyncClient(target, timeout=120))
        keys = await load(client, samples)
        options = {"preset": args.preset} if args.preset else None
        report = await evaluate(client, samples, keys, budgets, strategies, options)
        if args.agent_scenario:
            report["agent_scenario"] = await agent_scenario(client)
    return report


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--dataset", required=True, help="LoCoMo JSON (a list of samples)")
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    parser.add_argument("--budgets", default="500,1000,2000,4000")
    parser.add_argument("--strategies", default="scored,relevant,recent")
    parser.add_argument("--target", help="HOST:PORT of a running server (default: start one)")
    parser.add_argument("--preset", help="Fit weight preset (default: the server's default)")
    parser.add_argument("--plot", help="PNG of recall against budget (default: next to --out)")
    parser.add_argument(
        "--agent-scenario", action=argparse.BooleanOptionalAction, default=True,
        help="also run the fresh-error-log scenario",
    )  # fmt: skip
    args = parser.parse_args()
    report = asyncio.run(run(args))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    budgets = [int(b) for b in args.budgets.split(",")]
    print(
        f"{report['questions']} questions ({report['evidence_ids_dropped']} evidence ids dropped)"
    )
    print("strategy  " + "".join(f"{b:>8}" for b in budgets))
    for strategy, recalls in report["recall"].items():
        print(f"{strategy:9} " + "".join(f"{recalls[str(b)]:>8.3f}" for b in budgets))
    if "agent_scenario" in report:
        scenario = report["agent_scenario"]
        print(
            "agent scenario: fresh error log selected="
            f"{scenario['fresh_error_log_selected']}, ranked above old chat="
            f"{scenario['fresh_error_log_ranked_above_old_chat']}"
        )
    plot = Path(args.plot) if args.plot else out.with_suffix(".png")
    series = {s: [(b, report["recall"][s][str(b)]) for b in budgets] for s in report["recall"]}
    plot.write_bytes(line_plot_png(series, x_label="budget (tokens)", y_label="evidence recall"))
    print(f"wrote {out} and {plot}")


if __name__ == "__main__":
    main()
