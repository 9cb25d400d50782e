"""The inspector in a real browser: headless Chromium (Debian's package, driven by Playwright)
loads each page against a live server holding data, runs a Fit in the playground, watches
entries appear, change, go and expire, and checks what is shown.

A screenshot of each page is written to SCREENSHOTS (`build/ui-screenshots/`, or the folder
named by SHAREDCTX_UI_SCREENSHOTS); docs/ui/ keeps a copy of each. Without Chromium
(`apt-get install chromium`) or the Playwright package, these tests are skipped with the
reason.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sharedctx import Client

from .data import BUILD_LOG_KEY, ERROR_LINE, NS, ODD_KEY, OTHER_NS, QUERY

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("SHAREDCTX_UI_SCREENSHOTS", ROOT / "build" / "ui-screenshots"))
CHROMIUM = os.environ.get("SHAREDCTX_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Flags for a closed network: without the background ones, Chromium stalls on its updaters.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 15_000
# The playground's Fit: small enough that entries are left out for both budget and size, and
# that the large outputs come as excerpts.
BUDGET = 200

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        f"no Chromium at {CHROMIUM}: apt-get install chromium (or set SHAREDCTX_CHROMIUM)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (a fresh profile, which Playwright makes per launch)."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page at a desktop size; fails the test on any script error or CSP violation."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    yield tab
    context.close()
    assert problems == [], f"the browser reported errors: {problems}"


def shoot(page: Any, name: str) -> Path:
    """A full-page screenshot of `page` as SCREENSHOTS/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = page.viewport_size
    # A page shorter than the window is shot at its own height, without the empty rest.
    height = min(
        size["height"], page.evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    )
    page.set_viewport_size({"width": size["width"], "height": height})
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


def test_namespaces_page(page: Any, ui_url: str, client: Client) -> None:
    page.goto(ui_url + "/")
    rows = page.locator("#namespaces tbody tr")
    assert rows.count() == 2
    info = {n.namespace: n for n in client.namespaces()}
    first = rows.nth(0).locator("td")
    assert first.nth(0).inner_text() == NS
    assert first.nth(1).inner_text() == str(info[NS].entries)
    assert first.nth(2).inner_text() == f"{info[NS].original_tokens:,}"
    assert rows.nth(1).locator("td").nth(0).inner_text() == OTHER_NS
    assert shoot(page, "namespaces").stat().st_size > 0
    page.get_by_role("link", name=NS, exact=True).click()
    page.wait_for_url(re.compile(f"/ns/{re.escape(NS)}$"))
    assert page.locator("h1").inner_text() == NS


def test_entry_page(page: Any, ui_url: str, client: Client) -> None:
    page.goto(ui_url + f"/ns/{NS}?sort=key&order=asc")
    odd = page.locator("#entries tbody tr", has_text="odd")
    assert odd.locator("td.key a").inner_text() == ODD_KEY  # shown as text, not markup
    page.locator("input[name=prefix]").fill("tool/")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"prefix=tool%2F"))
    keys = page.locator("#entries tbody tr").evaluate_all("rows => rows.map(r => r.dataset.key)")
    assert keys == sorted(client.keys(NS, "tool/"))
    page.get_by_role("link", name="tool/pytest#1", exact=True).click()
    page.wait_for_url(re.compile(r"/entry/"))
    entry = client.get(NS, "tool/pytest#1", full=True)
    assert page.locator("h1").inner_text() == "tool/pytest#1"
    panes = page.locator(".form-pane")
    assert f"{entry.original_tokens:,} tokens" in panes.nth(0).locator("h2").inner_text()
    assert f"{entry.compressed_tokens:,} tokens" in panes.nth(1).locator("h2").inner_text()
    marks = panes.nth(1).locator("mark.omit")
    assert marks.count() >= 2
    assert any("passed tests omitted" in t for t in marks.all_inner_texts())
    assert panes.nth(0).locator("mark.omit").count() == 0
    assert "KeyError: 'port'" in panes.nth(1).inner_text()
    omitted = page.locator(".omissions li")
    assert omitted.count() == marks.count()
    shoot(page, "entry")
    # The compressed form of the long log: one marker for 398 similar lines.
    page.goto(ui_url + f"/entry/{NS}?key={quote(BUILD_LOG_KEY)}")
    assert page.locator(".form-pane").nth(1).locator("mark.omit").inner_text() == (
        "[... 398 similar lines]"
    )


def test_fit_playground(page: Any, ui_url: str, client: Client) -> None:
    page.goto(ui_url + f"/fit/{NS}")
    page.locator("textarea[name=q]").fill(QUERY)
    page.locator("input[name=budget]").fill(str(BUDGET))
    page.locator("select[name=form]").select_option("compressed")
    page.get_by_role("button", name="Run Fit").click()
    page.locator("#answer").wait_for()
    result = client.fit(NS, QUERY, BUDGET, explain=True)
    # The budget bar: a segment per selected entry, in fill order, sized by tokens.
    segments = page.locator("#budget-bar a.seg")
    assert segments.count() == len(result.entries)
    by_rank = sorted(result.entries, key=lambda e: e.rank)
    assert [segments.nth(i).get_attribute("data-key") for i in range(len(by_rank))] == [
        e.key for e in by_rank
    ]
    total = page.locator("#budget-bar").bounding_box()["width"]
    log = next(e for e in result.entries if e.key == BUILD_LOG_KEY)
    assert log.form == "excerpt"
    seg = page.locator(f'#budget-bar a.seg[data-key="{BUILD_LOG_KEY}"]').bounding_box()["width"]
    assert abs(seg / total - log.tokens / BUDGET) < 0.02
    summary = page.locator("#summary").inner_text()
    assert f"Chose {len(result.entries)} of {result.candidates} entries" in summary
    # Every candidate, with its factors as bars, its score and its fate in plain words.
    rows = page.locator("tr.cand")
    assert rows.count() == len(result.explain)
    assert page.locator("tr.cand.chosen").count() == len(result.entries)
    doc = page.locator('tr.cand[data-key="chat/design-doc"]')
    assert doc.get_attribute("data-reason") == "too_large"
    outcome = doc.locator("td.outcome").inner_text()
    assert "too large" in outcome and "more than the whole budget (200)" in outcome
    advice = page.locator("ul.left-out li", has_text="too large").inner_text()
    assert "Raise the budget, or let excerpts in" in advice
    assert rows.first.locator(".mini").count() >= 7
    spent = page.locator('tr.cand[data-reason="budget"] td.outcome').first.inner_text()
    assert "budget spent" in spent and "had used the budget first" in spent
    assert page.locator("#budget-bar + .legend").is_visible()
    # The packed context, as an agent gets it, holds the log's answering line.
    assert ERROR_LINE in page.locator("#context").inner_text()
    assert page.locator("#context-text").input_value() == "\n\n".join(
        e.content for e in client.fit(NS, QUERY, BUDGET, include_content=True).entries
    )
    # The way back to it from the CLI and from Python.
    cli = page.locator("#cli-text").inner_text()
    assert cli.startswith("sharedctx fit --target ") and f"--budget {BUDGET}" in cli
    assert "client.fit(" in page.locator("#py-text").inner_text()
    shoot(page, "fit")
    segments.first.click()
    assert re.search(r"#cand-\d+$", page.url)


def test_namespace_page_follows_watch(page: Any, ui_url: str, client: Client) -> None:
    page.goto(ui_url + f"/ns/{NS}")
    page.locator('#live[data-state="live"]').wait_for()

    def row(key: str) -> Any:
        return page.locator(f'#entries tbody tr[data-key="{key}"]')

    client.put(NS, "live/new", "a note written while the page is open", kind="note",
               agent_id="watcher", thread="chat")  # fmt: skip
    row("live/new").and_(page.locator(".is-new")).wait_for()
    client.put(NS, "live/new", "the same note, rewritten", kind="note", agent_id="watcher")
    row("live/new").and_(page.locator(".is-rewritten")).wait_for()
    assert row("live/new").locator(".change").inner_text() == "rewritten v2"
    client.put(NS, "live/doomed", "about to be deleted", kind="note")
    row("live/doomed").wait_for()
    client.delete(NS, "live/doomed")
    row("live/doomed").and_(page.locator(".gone")).wait_for()
    assert row("live/doomed").locator(".change").inner_text() == "deleted"
    client.put(NS, "live/kept", "still in use", kind="note", ttl_seconds=600)
    row("live/kept").wait_for()
    client.touch(NS, ["live/kept"])
    row("live/kept").locator(".change", has_text="TTL restarted").wait_for()
    client.put(NS, "live/short-lived", "expires in two seconds", kind="log", ttl_seconds=2)
    row("live/short-lived").wait_for()
    row("live/short-lived").and_(page.locator(".gone")).wait_for()
    assert row("live/short-lived").locator(".change").inner_text() == "expired"
    assert "4 changes" not in page.locator("#live").inner_text()  # counted: 8 so far
    assert page.locator("#live").inner_text() == "live · 8 changes"
    shoot(page, "namespace")
