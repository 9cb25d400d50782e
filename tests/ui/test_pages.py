"""The inspector's pages over HTTP, against a live server holding the session of data.py."""

from __future__ import annotations

import html
import json
import shlex
import socket
import threading
import urllib.request
from urllib.parse import quote, urlencode

import pytest
from markupsafe import escape
from sharedctx import Client
from sharedctx.cli import main
from sharedctx.ui.config import UiConfig

from .data import BUILD_LOG_KEY, ERROR_LINE, NS, ODD_KEY, OTHER_NS, QUERY
from .stack import fetch, inspector


def test_namespaces_lists_each_with_its_totals(ui_url: str, client: Client) -> None:
    reply = fetch(ui_url + "/")
    assert reply.status == 200
    info = {n.namespace: n for n in client.namespaces()}
    for ns in (NS, OTHER_NS):
        assert f'href="/ns/{ns}"' in reply.text
        assert f"{info[ns].original_tokens:,}" in reply.text
    assert OTHER_NS not in fetch(ui_url + "/?prefix=team-a/").text


def test_the_namespace_table_sorts_filters_and_pages(ui_url: str, client: Client) -> None:
    keys = list(client.keys(NS))
    first = fetch(ui_url + f"/ns/{NS}?sort=key&order=asc")
    assert first.status == 200
    shown = _row_keys(first.text)
    assert shown == sorted(keys)[:12] and "page 1 of 2" in first.text
    second = fetch(ui_url + f"/ns/{NS}?sort=key&order=asc&page=2")
    assert _row_keys(second.text) == sorted(keys)[12:]
    by_size = _row_keys(fetch(ui_url + f"/ns/{NS}?sort=full&order=desc").text)
    assert by_size[0] == BUILD_LOG_KEY  # the 402-line log is the largest
    only_tools = _row_keys(fetch(ui_url + f"/ns/{NS}?prefix=tool/").text)
    assert only_tools and all(k.startswith("tool/") for k in only_tools)


def _row_keys(page: str) -> list[str]:
    return [html.unescape(part.split('"', 1)[0]) for part in page.split('<tr data-key="')[1:]]


def test_every_key_and_text_is_escaped(ui_url: str) -> None:
    table = fetch(ui_url + f"/ns/{NS}").text
    assert "<b>odd</b>" not in table
    assert escape(ODD_KEY) in table
    link = f"/entry/{NS}?key={quote(ODD_KEY, safe='/')}"
    assert f'href="{link}"' in table
    entry = fetch(ui_url + link)
    assert entry.status == 200
    assert "<script>alert" not in entry.text and "&lt;script&gt;alert(" in entry.text


def test_the_entry_page_shows_both_forms_and_what_was_left_out(ui_url: str, client: Client) -> None:
    full = client.get(NS, BUILD_LOG_KEY, full=True)
    reply = fetch(ui_url + f"/entry/{NS}?key={quote(BUILD_LOG_KEY)}")
    assert reply.status == 200
    assert f"{full.original_tokens:,} tokens" in reply.text
    assert f"{full.compressed_tokens:,} tokens" in reply.text
    assert "402 lines" in reply.text and escape(ERROR_LINE) in reply.text
    assert '<mark class="omit">[... 398 similar lines]</mark>' in reply.text
    assert "What the compressor left out" in reply.text
    raw = fetch(ui_url + f"/raw/{NS}?key={quote(BUILD_LOG_KEY)}&form=full")
    assert raw.text == full.content


def test_a_missing_entry_is_a_404_page_and_a_gone_row(ui_url: str) -> None:
    reply = fetch(ui_url + f"/entry/{NS}?key=no/such")
    assert reply.status == 404 and "NOT_FOUND" in reply.text
    assert fetch(ui_url + f"/row/{NS}?key=no/such").status == 404


def test_the_fit_page_explains_every_candidate(ui_url: str, client: Client) -> None:
    params = {"q": QUERY, "budget": "700", "form": "full", "excerpts": "on",
              "neighbours": "on", "run": "1"}  # fmt: skip
    reply = fetch(ui_url + f"/fit/{NS}?{urlencode(params)}")
    assert reply.status == 200
    result = client.fit(NS, QUERY, 700, form="full", explain=True)
    assert f"Chose <b>{len(result.entries)}</b> of {result.candidates}" in reply.text
    assert reply.text.count('class="cand ') == len(result.explain)
    assert reply.text.count('class="seg form-') == len(result.entries)
    assert "too large" in reply.text and "more than the whole budget (700)" in reply.text
    assert "above 1: neighbours" in reply.text  # a score past 1, explained


def _bar_keys(page: str) -> list[str]:
    """The budget bar's keys, in fill order."""
    bar = page.split('id="budget-bar"', 1)[1].split("</div>", 1)[0]
    return [html.unescape(p.split('"', 1)[0]) for p in bar.split('data-key="')[1:]]


def _block(page: str, element_id: str) -> str:
    return html.unescape(page.split(f'id="{element_id}">', 1)[1].split("</pre>", 1)[0])


def _python_keys(code: str) -> list[str]:
    scope: dict[str, object] = {}
    exec(code.replace("print(", "(lambda *a: None)("), scope)
    return list(scope["result"].keys)  # type: ignore[attr-defined]


def test_the_fit_page_reproduces_from_the_cli_and_python(
    ui_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    params = {"q": QUERY, "budget": "500", "form": "full", "strategy": "scored",
              "excerpts": "on", "neighbours": "on", "run": "1"}  # fmt: skip
    page = fetch(ui_url + f"/fit/{NS}?{urlencode(params)}").text
    chosen = sorted(_bar_keys(page))
    assert chosen
    argv = shlex.split(_block(page, "cli-text"))
    assert argv[:2] == ["sharedctx", "fit"] and argv[argv.index("--budget") + 1] == "500"
    capsys.readouterr()
    assert main([*argv[1:], "--json"]) == 0
    assert sorted(e["key"] for e in json.loads(capsys.readouterr().out)["entries"]) == chosen
    assert sorted(_python_keys(_block(page, "py-text"))) == chosen
    # Every option of the form has a flag: the command line carries them all.
    params.update(preset="headroom", fill="stop", min_score="0.1", neighbours="off")
    page = fetch(ui_url + f"/fit/{NS}?{urlencode(params)}").text
    argv = shlex.split(_block(page, "cli-text"))
    for flag in ("--preset", "--fill", "--min-score", "--no-neighbours"):
        assert flag in argv
    capsys.readouterr()
    assert main([*argv[1:], "--json"]) == 0
    chosen = sorted(_bar_keys(page))
    assert sorted(e["key"] for e in json.loads(capsys.readouterr().out)["entries"]) == chosen
    assert sorted(_python_keys(_block(page, "py-text"))) == chosen


def test_bad_fit_inputs_are_shown_beside_the_form(ui_url: str) -> None:
    reply = fetch(ui_url + f"/fit/{NS}?q=x&budget=lots&run=1")
    wanted = escape("budget: a whole number of at least 1, not 'lots'")
    assert reply.status == 200 and wanted in reply.text
    # Past what the request's fields hold: said beside the form too, not a server error.
    reply = fetch(ui_url + f"/fit/{NS}?q=x&budget=100&max_entries=2147483648&run=1")
    assert reply.status == 200 and "max entries: at most 2,147,483,647" in reply.text
    reply = fetch(ui_url + f"/fit/{NS}?q=x&budget=99999999999999999999&keep_recent=-1&run=1")
    assert reply.status == 200 and "keep recent: a whole number of at least 0" in reply.text
    assert "budget: at most 9,223,372,036,854,775,807" in reply.text
    reply = fetch(ui_url + f"/fit/{NS}?q=x&budget=999999999&run=1")
    assert reply.status == 400 and "RESOURCE_EXHAUSTED" in reply.text
    assert 'value="999999999"' in reply.text  # the inputs are kept


def test_pages_carry_security_headers_and_refuse_foreign_hosts(ui_url: str) -> None:
    reply = fetch(ui_url + "/")
    assert "script-src 'self'" in reply.headers["content-security-policy"]
    assert reply.headers["x-frame-options"] == "DENY"
    # DNS rebinding: a page of another site reaching a loopback inspector by a name of its own.
    assert fetch(ui_url + "/", headers={"Host": "evil.example:8080"}).status == 421
    assert fetch(ui_url + "/", headers={"Host": "localhost:1"}).status == 200


def test_an_unreachable_server_is_a_clear_page() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    with inspector(UiConfig(target=dead, timeout=2)) as url:
        reply = fetch(url + "/")
    assert reply.status == 502
    assert "UNAVAILABLE" in reply.text and "sharedctx serve" in reply.text


def sse_changes(
    url: str, ready: threading.Event, lines: list[str], headers: dict[str, str] | None = None
) -> None:
    """Read the inspector's event stream at `url` into `lines` until a delete arrives."""
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=20) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            lines.append(line)
            if line == "event: ready":
                ready.set()
            if line.startswith("data: ") and '"op": "delete"' in line:
                return


def test_watch_changes_arrive_as_server_sent_events(ui_url: str, client: Client) -> None:
    ns = "live/sse"
    url = ui_url + f"/events/{ns}?prefix=k"
    lines: list[str] = []
    ready = threading.Event()
    thread = threading.Thread(target=sse_changes, args=(url, ready, lines), daemon=True)
    thread.start()
    assert ready.wait(20)
    client.put(ns, "other", "not under the prefix")
    client.put(ns, "k1", "hello")
    client.delete(ns, "k1")
    thread.join(20)
    data = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    changes = [(d["op"], d["key"]) for d in data if "op" in d]
    assert changes == [("put", "k1"), ("delete", "k1")]
    # Every event carries a resume token, the ready event the watch's start: a browser that
    # reconnects with it (Last-Event-ID) gets every change since.
    start = lines[lines.index("event: ready") - 1]
    assert start.startswith("id: ")
    again: list[str] = []
    sse_changes(url, threading.Event(), again, {"Last-Event-ID": start[4:]})
    assert [line for line in again if line.startswith('data: {"op')] == [
        line for line in lines if line.startswith('data: {"op')
    ]


@pytest.mark.parametrize("strategy", ["relevant", "recent"])
def test_turn_strategies_show_turns_not_factors(ui_url: str, strategy: str) -> None:
    params = {"q": QUERY, "budget": "300", "strategy": strategy, "run": "1"}
    reply = fetch(ui_url + f"/fit/{NS}?{urlencode(params)}")
    assert reply.status == 200 and f"Under {strategy}," in reply.text
    assert 'th class="factor"' not in reply.text  # no factor values to show
    assert "Its conversation turn is larger than the whole budget (300)" in reply.text


@pytest.mark.parametrize(
    ("token", "hint"),
    [
        (True, "that token's grants decide what it can show"),
        (False, "was started without <code>--token</code>"),
    ],
)
def test_a_refused_page_says_whether_the_inspector_has_a_token(token: bool, hint: str) -> None:
    from sharedctx.ui.app import templates

    page = templates().env.get_template("error.html").render(
        title="The server refused the request", code="UNAUTHENTICATED", message="no token",
        target="127.0.0.1:50051", login_required=token, link=lambda **_: "?",
    )  # fmt: skip
    assert hint in page


def test_a_namespace_with_dot_segments_keeps_them_in_its_links(ui_url: str, client: Client) -> None:
    # A browser resolves `.` and `..` in a path (`/ns/qa/../x` would show `x`): such segments
    # are escaped twice in links, and read back as the namespace they name.
    ns = "dots/./a/../b"
    client.put(ns, "note/1", "a note in an odd namespace")
    try:
        link = "/ns/dots/%252E/a/%252E%252E/b"
        assert f'href="{link}"' in fetch(ui_url + "/?prefix=dots/").text
        page = fetch(ui_url + link)
        assert page.status == 200 and "note/1" in page.text
        assert f'href="/entry{link[3:]}?key=note/1"' in page.text
        assert fetch(ui_url + f"/entry{link[3:]}?key=note/1").status == 200
    finally:
        client.delete(ns, "note/1")


def test_shares_read_as_whole_percent_but_never_all_when_not() -> None:
    from sharedctx.ui.fmt import percent

    assert [percent(1, 3), percent(1, 1000), percent(70_806, 70_998), percent(5, 5)] == [
        "33%", "<1%", ">99%", "100%",
    ]  # fmt: skip
