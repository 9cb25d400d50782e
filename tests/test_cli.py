"""The `sharedctx` command against a real server: human and --json output, stdin content; the
server's commands found through entry points, and what they say when it is missing."""

from __future__ import annotations

import asyncio
import io
import json
import re
import signal
import sys
from importlib.metadata import entry_points

import pytest
from sharedctx import cli
from sharedctx.cli import main
from sharedctx.fit_table import key_cell
from sharedctx.target import parse_target
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.redis_servers import free_port
from .support.servers import serving
from .support.tool_outputs import FAILING_LINE, service_log

NS = "team-a/session-42"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_put_get_keys_delete_round_trip(
    threaded_server: RunningServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", NS)
    code, out, _ = run(
        capsys, "put", *target, "tool/grep#7", "found 3 matches", "--kind", "tool_output"
    )
    assert code == 0 and "stored tool/grep#7 version 1" in out

    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin\n"))
    assert run(capsys, "put", *target, "notes/1")[0] == 0

    code, out, _ = run(capsys, "get", *target, "notes/1")
    assert out == "from stdin\n"  # byte for byte: `get --full > copy` is the original
    code, out, _ = run(capsys, "get", *target, "tool/grep#7")
    assert out == "found 3 matches"  # no newline added when not on a terminal
    code, out, _ = run(capsys, "get", *target, "tool/grep#7", "--json")
    assert json.loads(out)["kind"] == "tool_output"
    code, out, _ = run(capsys, "keys", *target, "--json")
    assert json.loads(out) == ["notes/1", "tool/grep#7"]
    code, out, _ = run(capsys, "delete", *target, "notes/1")
    assert out.strip() == "deleted"
    code, out, _ = run(capsys, "stats", *target, "--json")
    assert json.loads(out)["entries"] == 1
    code, out, _ = run(capsys, "stats", *target)
    assert out.startswith("1 entry, ")
    # `-` reads standard input too; no keys found prints nothing (`| wc -l` counts 0).
    monkeypatch.setattr("sys.stdin", io.StringIO("piped"))
    assert run(capsys, "put", *target, "notes/2", "-")[0] == 0
    assert run(capsys, "get", *target, "notes/2")[1] == "piped"
    assert run(capsys, "keys", *target, "no-such-prefix/") == (0, "", "")


def test_touch_prints_each_keys_expiry(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", NS)
    assert run(capsys, "put", *target, "brief", "x", "--ttl", "60")[0] == 0
    assert run(capsys, "put", *target, "forever", "y")[0] == 0
    code, out, _ = run(capsys, "touch", *target, "brief", "forever", "gone")
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"brief  expires \d{4}-\d\d-\d\dT.*", lines[0])
    assert lines[1:] == ["forever  never expires", "gone  not found"]
    code, out, _ = run(capsys, "touch", *target, "brief", "gone", "--json")
    data = json.loads(out)
    assert list(data["expires_at"]) == ["brief"] and data["missing"] == ["gone"]


def test_errors_print_the_status_and_exit_non_zero(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "get", "--target", f"127.0.0.1:{threaded_server.port}", "-n", NS, "missing"
    )
    assert code == 1
    assert err.startswith("sharedctx: NOT_FOUND: no entry 'missing'")
    assert "Traceback" not in err


def test_watch_does_not_offer_to_resume_from_a_token_the_server_refused(
    threaded_server: RunningServer,
) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    with pytest.raises(SystemExit) as exit_:
        main(["watch", "--target", target, "-n", NS, "--resume-token", "bogus"])
    message = str(exit_.value.code)
    assert message.startswith("sharedctx: INVALID_ARGUMENT: resume_token")
    assert "--resume-token bogus" not in message


def test_a_watch_with_no_server_there_says_so_not_that_it_ended() -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["watch", "--target", f"127.0.0.1:{free_port()}", "-n", NS])
    message = str(exit_.value.code)
    assert message.startswith("sharedctx: UNAVAILABLE: cannot reach a sharedctx server at ")
    assert "ended the watch" not in message and "resume" not in message


def test_fit_prints_a_table_and_explain_columns(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", NS)
    run(capsys, "put", *target, "tool/pytest", "E   KeyError: 'port'\n1 failed", "--kind", "log")
    run(capsys, "put", *target, "note", "lunch at noon")
    code, out, _ = run(capsys, "fit", *target, "why did the test fail", "--budget", "50")
    assert code == 0
    title, head, *rows = out.splitlines()
    assert "order returned" in title and "added" in title
    assert head.split() == ["#", "added", "key", "form", "tokens", "score", "lines"]
    assert [r.split()[0] for r in rows[:2]] == ["1", "2"]  # positions, in order
    assert "tool/pytest" in out and "2 of 2 entries" in out
    code, out, _ = run(capsys, "fit", *target, "test failure", "--explain", "--keep-recent", "0")
    assert "best score first" in out.splitlines()[0]
    assert "sem" in out.splitlines()[1] and "reason" in out.splitlines()[1]
    code, out, _ = run(capsys, "fit", *target, "test", "--json", "--content")
    assert json.loads(out)["entries"][0]["content"]


def test_a_long_key_keeps_its_start_and_its_end_in_the_fit_table() -> None:
    cells = [
        key_cell(f"cat:server/sharedctx_server/fit/{name}.py") for name in ("lexical", "excerpts")
    ]
    assert cells[0] != cells[1] and all(len(c) == 30 for c in cells)
    assert cells[0].startswith("cat:ser") and cells[0].endswith("fit/lexical.py")
    assert key_cell("tool/pytest") == f"{'tool/pytest':30}"


def test_fit_takes_every_request_option_from_flags(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", "team-a/flags")
    run(capsys, "put", *target, "log/a", "ERROR disk full", "--kind", "log", "--tag", "ops")
    run(capsys, "put", *target, "note/b", "disk cleanup plan", "--kind", "note", "--agent-id", "x")
    run(capsys, "put", *target, "note/c", "lunch", "--kind", "note", "--thread", "t1")

    def keys(*flags: str) -> list[str]:
        code, out, _ = run(capsys, "fit", *target, "disk", "--json", "--keep-recent", "0", *flags)
        assert code == 0
        return sorted(e["key"] for e in json.loads(out)["entries"])

    assert keys("--kind", "log") == ["log/a"]
    assert keys("--exclude-kind", "log", "--exclude-tag", "ops") == ["note/b", "note/c"]
    assert keys("--tag", "ops", "--tag", "other") == ["log/a"]
    assert keys("--agent", "x") == ["note/b"]
    assert keys("--exclude-agent", "x", "--thread", "t1") == ["note/c"]
    assert keys("--min-score", "5") == []
    code, out, _ = run(
        capsys, "fit", *target, "disk", "--json", "--explain", "--weight", "recency=0",
        "--weight", "lexical_relevance=2", "--preset", "headroom", "--no-neighbours",
        "--fill", "stop", "--recency-decay-rate", "0.5", "--form", "auto",
        "--compress-threshold", "10",
    )  # fmt: skip
    assert code == 0
    weights = json.loads(out)["weights"]
    assert weights["recency"] == 0  # weights come back normalised
    assert weights["lexical_relevance"] == max(weights.values())


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--weight", "recency", "is not FACTOR=WEIGHT"),
        ("--weight", "bogus=1", "unknown factor 'bogus'; use one of recency,"),
        ("--kind", "bogus", "invalid choice: 'bogus'"),
        ("--exclude-kind", "notes", "invalid choice: 'notes'"),
    ],
)
def test_a_malformed_fit_option_is_a_usage_error(
    flag: str, value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fit", "-n", NS, "q", flag, value, "--target", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and "Traceback" not in err


def test_fit_shows_an_excerpt_with_its_line_ranges_and_scored_segments(
    threaded_server: RunningServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", NS)
    monkeypatch.setattr("sys.stdin", io.StringIO(service_log()))
    assert run(capsys, "put", *target, "logs/worker", "--kind", "log")[0] == 0
    query = "why did the resize-images job fail?"
    code, out, _ = run(capsys, "fit", *target, query, "--budget", "400", "--content")
    assert code == 0
    row = out.splitlines()[2].split()
    assert row[2:4] == ["logs/worker", "excerpt"] and row[-1] == "166"  # "... of 166"
    assert "--- logs/worker (excerpt, " in out and FAILING_LINE in out
    assert "lines omitted ...]" in out
    code, out, _ = run(capsys, "fit", *target, query, "--budget", "400", "--explain")
    assert "selected (excerpt)" in out
    assert any(
        line.split()[:2] == ["lines", "98-104"] and "shown" in line for line in out.splitlines()
    )
    code, out, _ = run(capsys, "fit", *target, query, "--budget", "400", "--no-excerpts")
    assert "0 of 1 entries" in out and "too_large" in out


def test_reembed_is_a_command_of_the_server_package(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}", "-n", NS)
    run(capsys, "put", *target, "notes/1", "first note")
    run(capsys, "put", *target, "notes/2", "second note")
    code, out, _ = run(capsys, "reembed", *target, "--force", "--json")
    assert code == 0 and json.loads(out) == {"done": 2, "total": 2, "computed": 2}
    code, out, err = run(capsys, "reembed", *target)
    assert code == 0 and "re-embedding [" in err and out.startswith("2 entries")


def test_the_added_commands_come_from_entry_points() -> None:
    from sharedctx.cli import COMMAND_GROUP, added_commands
    from sharedctx.mcp.command import MCP
    from sharedctx.ui.command import UI
    from sharedctx_server import cli as server_cli

    commands = added_commands()
    assert commands["serve"] is server_cli.SERVE
    assert commands["compress"] is server_cli.COMPRESS
    assert commands["reembed"] is server_cli.REEMBED
    # The client's optional fronts register the same way, so `sharedctx --help` lists them
    # whether or not their extras are installed.
    assert commands["mcp"] is MCP
    assert commands["ui"] is UI
    assert {p.name for p in entry_points(group=COMMAND_GROUP)} == {
        "serve",
        "compress",
        "reembed",
        "mcp",
        "ui",
    }


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["serve", "--listen", "0.0.0.0:1", "--insecure"], "the server is not installed"),
        (["compress", "--json", "notes.txt"], "compress needs the server"),
        (["reembed", "-n", NS, "--force"], "reembed needs the server package"),
    ],
)
def test_without_the_server_package_its_commands_say_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    hint: str,
) -> None:
    monkeypatch.setattr("sharedctx.cli.added_commands", dict)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err == f"{hint}: pip install -e '.[server]' in the sharedctx checkout\n"


def test_serve_without_the_server_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command loads (it needs only the standard library), but the server does not import.
    monkeypatch.setitem(sys.modules, "sharedctx_server.server", None)
    # serve sets up logging first, on this test's captured stderr: a handler left on the
    # root logger would write to it once closed ("--- Logging error ---" in a later test).
    monkeypatch.setattr("sharedctx_server.edge.logs.configure", lambda *args, **kwargs: None)
    code, _, err = run(capsys, "serve", "--listen", "127.0.0.1:0")
    assert code == 2
    # Which import failed, too: a broken dependency is not a missing package.
    assert err.startswith(
        "the server is not installed: pip install -e '.[server]' in the sharedctx checkout ("
    )
    assert "importing it failed: import of sharedctx_server.server halted" in err


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"sharedctx {version('sharedctx')}\n"


def test_a_call_past_its_deadline_says_which_flag_gives_it_longer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import grpc
    from sharedctx.errors import DeadlineExceededError

    def slow(*args: object, **kwargs: object) -> None:
        raise DeadlineExceededError("Deadline Exceeded", grpc.StatusCode.DEADLINE_EXCEEDED)

    monkeypatch.setattr("sharedctx.cli.connect", slow)
    code, _, err = run(capsys, "keys", "-n", NS, "--timeout", "2.5")
    assert code == 1
    assert err == (
        "sharedctx: DEADLINE_EXCEEDED: Deadline Exceeded "
        "(no answer within --timeout 2.5 s: give it longer)\n"
    )


def test_ctrl_c_stops_a_command_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("sharedctx.cli.connect", interrupted)
    code, out, err = run(capsys, "keys", "-n", NS)
    assert (code, out, err) == (130, "", "\n")


def test_unknown_arguments_are_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["keys", "-n", NS, "--no-such-flag"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --no-such-flag (see sharedctx keys --help)" in err
    # The usage shown is the command's own, not the list of every command.
    assert err.startswith("usage: sharedctx keys ") and "-n NAMESPACE" in err


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_is_not_seconds_above_zero_is_refused(
    capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["keys", "-n", NS, "--timeout", timeout])
    assert info.value.code == 2
    assert f"--timeout: {timeout!r} is not a number of seconds above 0" in capsys.readouterr().err


def test_namespaces_lists_namespaces_with_their_totals(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ("--target", f"127.0.0.1:{threaded_server.port}")
    run(capsys, "put", *target, "-n", "cli/one", "k", "hello")
    run(capsys, "put", *target, "-n", "cli/two", "k", "hello again")
    code, out, _ = run(capsys, "namespaces", *target, "cli/")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["cli/one", "cli/two"]
    code, out, _ = run(capsys, "namespaces", *target, "--json")
    assert {n["namespace"]: n["entries"] for n in json.loads(out)} == {"cli/one": 1, "cli/two": 1}


@pytest.mark.parametrize(
    ("given", "target"),
    [
        ("127.0.0.1", "127.0.0.1:50051"),
        ("localhost:6000", "localhost:6000"),
        ("grpc://sharedctx.internal:7000/", "sharedctx.internal:7000"),
        ("[::1]:7000", "[::1]:7000"),
        ("[::1]", "[::1]:50051"),
        ("::1", "[::1]:50051"),
        ("unix:/run/sharedctx.sock", "unix:/run/sharedctx.sock"),
    ],
)
def test_targets_take_the_forms_people_type_and_default_to_port_50051(
    given: str, target: str
) -> None:
    assert parse_target(given) == target


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("http://127.0.0.1:50051", "not http"),
        ("https://example.org", "not https"),
        ("127.0.0.1:99999", "port"),
        ("[::1:50051", "the ']' after the IPv6 address is missing"),
        ("[]:50051", "an IPv6 address goes in the brackets"),
        ("", "HOST:PORT"),
    ],
)
def test_a_bad_target_is_refused_with_what_to_write_instead(
    given: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match=re.escape(hint)):
        parse_target(given)
    code, _, err = run(capsys, "get", "--target", given or " ", "-n", NS, "k")
    assert code == 2 and hint in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["fit", "-n", NS, "q", "--budget", "9" * 25], "argument --budget: 999"),
        (["put", "-n", NS, "k", "x", "--ttl", "9" * 20], "argument --ttl: 999"),
        (["fit", "-n", NS, "q", "--keep-recent", "3000000000"], "at most 2147483647"),
    ],
)
def test_numbers_the_request_cannot_carry_are_usage_errors(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before any connection: the target here has nothing listening.
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--target", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and "Traceback" not in err


def test_input_that_is_not_utf8_is_refused_before_sending(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe bad \xc3\x28\n")))
    code, _, err = run(capsys, "put", "-n", NS, "k", "--target", "127.0.0.1:1")
    assert code == 2 and "not UTF-8 text" in err
    code, _, err = run(capsys, "put", "-n", NS, "k", "ok \udcff", "--target", "127.0.0.1:1")
    assert code == 2 and "the content argument is not UTF-8 text" in err
    code, _, err = run(capsys, "get", "-n", NS, "k\udcff", "--target", "127.0.0.1:1")
    assert code == 2 and "the key argument is not UTF-8 text" in err


def test_a_value_error_that_is_not_about_the_arguments_is_not_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(client: object, args: object) -> None:
        raise ValueError("a bug")

    monkeypatch.setitem(cli._CLIENT_COMMANDS, "stats", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["stats", "-n", NS])


def test_no_server_at_the_target_says_what_was_tried_and_what_to_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()  # nothing listens there
    code, _, err = run(capsys, "get", "--target", f"127.0.0.1:{port}", "-n", NS, "k",
                       "--timeout", "2")  # fmt: skip
    assert code == 1
    assert f"cannot reach a sharedctx server at 127.0.0.1:{port} (connection refused)" in err
    assert "is `sharedctx serve` running there?" in err


async def live_watch(port: int) -> asyncio.subprocess.Process:
    """`sharedctx watch` of NS in a process of its own, once it says it is live."""
    watcher = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sharedctx.cli", "watch", "--target", f"127.0.0.1:{port}",
        "-n", NS, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert watcher.stderr is not None
    live = await asyncio.wait_for(watcher.stderr.readline(), 30)
    assert live.startswith(f"sharedctx: watching {NS}".encode())
    return watcher


async def test_ctrl_c_stops_a_watch_with_the_token_to_resume_from(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, _):
        watcher = await live_watch(running.port)
        watcher.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(watcher.communicate(), 30)
    assert watcher.returncode == 130
    assert err.startswith(b"sharedctx: stopped; continue without missing a change with ")
    assert b"Traceback" not in err


async def test_watch_reports_a_stopped_server_with_the_token_to_resume_from(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, client):
        watcher = await live_watch(running.port)
        # No change yet: the hint's token is where the watch began.
        await running.stop(0.5)
        out, err = await asyncio.wait_for(watcher.communicate(), 30)
        assert watcher.returncode == 1 and out == b""
        assert b"the server ended the watch" in err
        token = err.decode().rpartition("--resume-token ")[2].strip()
    async with serving(settings, token_counter) as (_, client):
        await client.put(NS, "k", "written while nobody watched")
        resumed = await asyncio.wait_for(anext(client.watch(NS, token)), 30)
    assert (resumed.op, resumed.key) == ("put", "k")
