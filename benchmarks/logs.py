"""Fit on large tool output: recall of rare log events at token budgets, through the real API.

    python -m benchmarks.logs --dataset path/to/loghub --out logs.json
        [--budgets 500,1000,2000] [--questions-per-system 12] [--seed 13]
        [--target HOST:PORT]  (default: start a server on a private Valkey)
        [--plot logs.png] [--no-compare]

Every system's raw 2,000-line log (`<System>/<System>_2k.log`) is stored the way an agent
stores tool output: 500-line KIND_LOG entries, all systems in one namespace. Questions name a
rare event by its template's words: for each system, the templates (`EventTemplate` of
`<System>_2k.log_structured.csv`) seen 1-3 times whose words, without `<*>`, hold at least
three words of 3+ letters, up to `--questions-per-system` of them chosen with a fixed seed;
the query is `"<System> log: <template words>"`. Recall is the share of the event's lines
(the `Content` column, whitespace normalised) found in the text Fit returns. A second variant
asks the same questions with every other template word dropped (paraphrase pressure).

Beside Fit with excerpts (the default), the report shows Fit with `excerpts: false` (whole
entries only) and, as a reference for what line-level retrieval can do, a plain BM25 over the
lines of the whole namespace filling the same budget in-process. Every returned text is
counted again here with the server's token encoding: the budget must never be exceeded.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import random
import re
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sharedctx import AsyncClient, PutItem
from sharedctx_server.fit.bm25 import TermStats
from sharedctx_server.fit.lexical import lexical_terms
from sharedctx_server.tokens import TokenCounter

from ._plot import budget_arguments, table_row, write_budget_report
from ._procs import target_or_own_server
from .quality import Progress

NAMESPACE = "bench/loghub"
LINES_PER_ENTRY = 500
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass(frozen=True)
class Question:
    """One rare event to find: the query and the lines (Content, normalised) that answer it."""

    system: str
    template: str
    query: str
    paraphrase: str
    lines: tuple[str, ...]


def normalise(text: str) -> str:
    """Whitespace runs as one space, ends trimmed."""
    return " ".join(text.split())


def read_log(folder: Path) -> list[str]:
    """The raw log's lines (without a trailing empty line)."""
    raw = (folder / f"{folder.name}_2k.log").read_text(encoding="utf-8", errors="replace")
    lines = raw.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def template_words(template: str) -> str:
    """The template without its `<*>` parameters, whitespace normalised."""
    return normalise(template.replace("<*>", " "))


def questions_for(folder: Path, per_system: int, seed: int) -> list[Question]:
    """The system's rare-event questions (see the module docstring)."""
    with (folder / f"{folder.name}_2k.log_structured.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    counts = Counter(r["EventTemplate"] for r in rows)
    eligible = sorted(
        t for t, c in counts.items() if 1 <= c <= 3 and len(_WORD.findall(template_words(t))) >= 3
    )
    chosen = sorted(
        random.Random(f"{seed}/{folder.name}").sample(eligible, k=min(per_system, len(eligible)))
    )
    out = []
    for template in chosen:
        words = template_words(template)
        lines = tuple(normalise(r["Content"]) for r in rows if r["EventTemplate"] == template)
        out.append(
            Question(
                system=folder.name,
                template=template,
                query=f"{folder.name} log: {words}",
                paraphrase=f"{folder.name} log: {' '.join(words.split()[::2])}",
                lines=lines,
            )
        )
    return out


def entries_for(folder: Path, start: datetime) -> list[PutItem]:
    """The system's log as 500-line KIND_LOG entries, a second apart, oldest first."""
    lines = read_log(folder)
    items = []
    for i, first in enumerate(range(0, len(lines), LINES_PER_ENTRY)):
        chunk = lines[first : first + LINES_PER_ENTRY]
        items.append(
            PutItem(
                key=f"{folder.name}/lines-{first + 1:04d}-{first + len(chunk):04d}",
                content="\n".join(chunk) + "\n",
                kind="log",
                tool_name=folder.name.lower(),
                event_time=start + timedelta(seconds=i),
            )
        )
    return items


def recall(question: Question, text: str) -> float:
    """Share of the event's lines found in `text` (both whitespace normalised)."""
    haystack = normalise(text)
    return sum(1 for line in question.lines if line in haystack) / len(question.lines)


class LineBM25:
    """The reference: BM25 over every line of the namespace, best lines until the budget."""

    def __init__(self, lines: Sequence[str], tokens: TokenCounter) -> None:
        self._lines = list(lines)
        self._stats = TermStats()
        for i, line in enumerate(self._lines):
            self._stats.add(i, lexical_terms(line))
        self._costs = [tokens.count(line + "\n") for line in self._lines]

    def text(self, query: str, budget: int) -> str:
        """The best-scoring lines (in score order) that fit the budget, one per line."""
        scores = self._stats.bm25_scores(lexical_terms(query), size=len(self._lines))
        picked, used = [], 0
        for i in sorted(range(len(self._lines)), key=lambda i: (-scores[i], i)):
            if scores[i] <= 0:
                break
            if used + self._costs[i] <= budget:
                picked.append(self._lines[i])
                used += self._costs[i]
        return "\n".join(picked)


async def load(client: AsyncClient, folders: Sequence[Path]) -> int:
    """Store every system's log in the namespace; returns the number of entries."""
    await client.clear(NAMESPACE)
    start = datetime.now(UTC) - timedelta(hours=1)
    items = [item for folder in folders for item in entries_for(folder, start)]
    progress = Progress(len(items), "storing logs")
    for item in items:
        await client.put_many(NAMESPACE, [item], timeout=300)
        progress.step()
    return len(items)


async def evaluate(
    client: AsyncClient,
    questions: Sequence[Question],
    budgets: Sequence[int],
    tokens: TokenCounter,
    modes: dict[str, dict[str, Any]],
    reference: LineBM25 | None,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Recall and tokens per mode, variant and budget, plus budget violations."""
    variants = ("exact", "paraphrase")
    names = [*modes, *(["line_bm25"] if reference else [])]
    sums = {m: {v: dict.fromkeys(budgets, 0.0) for v in variants} for m in names}
    used = {m: {v: dict.fromkeys(budgets, 0) for v in variants} for m in names}
    by_system: dict[str, dict[str, dict[int, float]]] = {m: {} for m in names}
    # Questions not fully answered, to read what a change won or lost.
    missed: dict[str, dict[str, dict[int, list[str]]]] = {
        m: {v: {b: [] for b in budgets} for v in variants} for m in names
    }
    violations: list[dict[str, Any]] = []
    progress = Progress(len(questions) * len(variants) * len(budgets) * len(modes), "asking Fit")
    gate = asyncio.Semaphore(concurrency)

    def count(mode: str, variant: str, budget: int, q: Question, text: str, n: int) -> None:
        score = recall(q, text)
        if score < 1.0:
            query = q.query if variant == "exact" else q.paraphrase
            missed[mode][variant][budget].append(f"{query} ({score:.2f})")
        sums[mode][variant][budget] += score
        used[mode][variant][budget] += n
        if variant == "exact":
            per = by_system[mode].setdefault(q.system, dict.fromkeys(budgets, 0.0))
            per[budget] += score

    async def ask(q: Question) -> None:
        async with gate:
            for variant in variants:
                query = q.query if variant == "exact" else q.paraphrase
                for budget in budgets:
                    for mode, options in modes.items():
                        result = await client.fit(
                            NAMESPACE, query, budget, include_content=True, timeout=120, **options
                        )
                        text = "\n".join(e.content for e in result.entries)
                        counted = sum(tokens.count(e.content) for e in result.entries)
                        if result.total_tokens > budget or counted > budget:
                            violations.append(
                                {"mode": mode, "query": query, "budget": budget,
                                 "total_tokens": result.total_tokens, "counted": counted}
                            )  # fmt: skip
                        count(mode, variant, budget, q, text, result.total_tokens)
                        progress.step()
                    if reference is not None:
                        text = reference.text(query, budget)
                        count("line_bm25", variant, budget, q, text, tokens.count(text))

    await asyncio.gather(*(ask(q) for q in questions))
    n = len(questions)
    per_system_n = Counter(q.system for q in questions)
    return {
        "questions": n,
        "questions_by_system": dict(sorted(per_system_n.items())),
        "recall": {
            m: {v: {str(b): round(sums[m][v][b] / n, 4) for b in budgets} for v in variants}
            for m in names
        },
        "mean_tokens": {
            m: {v: {str(b): round(used[m][v][b] / n, 1) for b in budgets} for v in variants}
            for m in names
        },
        "recall_by_system": {
            m: {
                s: {str(b): round(v / per_system_n[s], 4) for b, v in per.items()}
                for s, per in sorted(systems.items())
            }
            for m, systems in by_system.items()
        },
        "missed": {
            m: {v: {str(b): sorted(missed[m][v][b]) for b in budgets} for v in variants}
            for m in names
        },
        "budget_violations": violations,
    }


def _folders(dataset: Path) -> list[Path]:
    return sorted(p for p in dataset.iterdir() if p.is_dir() and (p / f"{p.name}_2k.log").exists())


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command line asks for."""
    folders = _folders(Path(args.dataset))
    budgets = args.budgets
    questions = [q for f in folders for q in questions_for(f, args.questions_per_system, args.seed)]
    tokens = TokenCounter(args.token_encoding)
    modes: dict[str, dict[str, Any]] = {"excerpts": {}}
    if args.compare:
        modes["whole_entries"] = {"excerpts": False}
    reference = LineBM25([line for f in folders for line in read_log(f)], tokens)
    async with AsyncExitStack() as stack:
        target = await target_or_own_server(stack, args.target)
        client = await stack.enter_async_context(AsyncClient(target, timeout=300))
        entries = await load(client, folders)
        report = await evaluate(client, questions, budgets, tokens, modes, reference)
    report["entries"] = entries
    report["systems"] = [f.name for f in folders]
    return report


def print_table(report: dict[str, Any], budgets: Sequence[int]) -> None:
    """Recall and mean tokens per mode and variant."""
    print(f"{report['questions']} questions over {report['entries']} entries")
    print(f"{'mode':14} {'variant':11}" + "".join(f"{b:>8}" for b in budgets) + "   mean tokens")
    for mode, variants in report["recall"].items():
        for variant, recalls in variants.items():
            spent = report["mean_tokens"][mode][variant]
            cells = [f"{recalls[str(b)]:>8.3f}" for b in budgets]
            print(table_row(f"{mode:14} {variant:11}", cells, spent, budgets))
    print(f"budget violations: {len(report['budget_violations'])}")


def main() -> None:
    """Entry point."""
    parser = budget_arguments("500,1000,2000", "recall")
    parser.description = __doc__
    parser.add_argument("--dataset", required=True, help="folder of <System>/<System>_2k.log*")
    parser.add_argument("--questions-per-system", type=int, default=12)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--compare", action=argparse.BooleanOptionalAction, default=True,
        help="also run Fit without excerpts (whole entries only)",
    )  # fmt: skip
    args = parser.parse_args()
    budgets = args.budgets
    report = asyncio.run(run(args))
    series = {
        f"{mode} ({variant})": [(b, recalls[str(b)]) for b in budgets]
        for mode, variants in report["recall"].items()
        for variant, recalls in variants.items()
    }
    out, plot = write_budget_report(
        report, series, out=args.out, plot=args.plot, y_label="evidence-line recall"
    )
    print_table(report, budgets)
    print(f"wrote {out} and {plot}")


if __name__ == "__main__":
    main()
