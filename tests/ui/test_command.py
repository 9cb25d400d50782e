"""`sharedctx ui`: its registration, its address rule, its install hint, and a real start beside
a server; and signing in to an inspector started with a token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from urllib.parse import quote

import pytest
from sharedctx.cli import COMMAND_GROUP, added_commands, main
from sharedctx.ui.command import INSTALL_HINT, UI
from sharedctx.ui.config import UiConfig, listen_problem

from .data import NS
from .stack import fetch, inspector


def test_ui_is_a_command_of_the_client_package() -> None:
    assert added_commands()["ui"] is UI
    assert "ui" in {p.name for p in entry_points(group=COMMAND_GROUP)}


@pytest.mark.parametrize(
    ("listen", "token", "insecure", "refused"),
    [
        ("127.0.0.1:8080", False, False, False),
        ("localhost:8080", False, False, False),
        ("[::1]:8080", False, False, False),
        ("0.0.0.0:8080", False, False, True),
        ("inspector.example:8080", False, False, True),
        ("0.0.0.0:8080", True, False, False),
        ("0.0.0.0:8080", False, True, False),
    ],
)
def test_beyond_loopback_it_needs_a_token_or_insecure(
    listen: str, token: bool, insecure: bool, refused: bool
) -> None:
    problem = listen_problem(listen, token, insecure)
    assert (problem is not None) == refused
    if refused:
        assert problem is not None and "--token" in problem and "--insecure" in problem


def test_the_command_refuses_an_open_network_address(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHAREDCTX_TOKEN", raising=False)
    code = main(["ui", "--listen", "0.0.0.0:8080"])
    assert code == 2
    assert "refusing to listen on 0.0.0.0:8080" in capsys.readouterr().err
    assert main(["ui", "--listen", "nonsense"]) == 2
    assert "give HOST:PORT" in capsys.readouterr().err


def test_a_bad_target_or_a_taken_port_is_one_line_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    assert main(["ui", "--target", "http://127.0.0.1:1", "--listen", "127.0.0.1:0"]) == 2
    assert capsys.readouterr().err.startswith("sharedctx: target 'http://127.0.0.1:1': ")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["ui", "--listen", f"127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().err == (
        f"sharedctx ui: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )


def test_without_the_ui_extra_it_says_how_to_install_it() -> None:
    # A fresh interpreter in which the web stack cannot be imported.
    script = (
        "import sys\n"
        "sys.modules['starlette'] = None\n"
        "from sharedctx.cli import main\n"
        "sys.exit(main(['ui']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == INSTALL_HINT + "\n"
    assert "pip install -e '.[ui]' in the sharedctx checkout" in INSTALL_HINT


def test_sharedctx_ui_starts_beside_a_server(target: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SHAREDCTX_TOKEN"}
    process = subprocess.Popen(
        [sys.executable, "-m", "sharedctx.cli", "ui", "--target", target,
         "--listen", "127.0.0.1:0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        started = json.loads(process.stdout.readline())
        assert started["target"] == target and started["url"].startswith("http://127.0.0.1:")
        reply = fetch(started["url"])
        assert reply.status == 200 and f'href="/ns/{NS}"' in reply.text
    finally:
        process.terminate()
        process.wait(20)


def test_with_a_token_the_browser_signs_in_with_it(target: str) -> None:
    with inspector(UiConfig(target=target, token="s3cret-token")) as url:
        page = f"/ns/{NS}?sort=key"
        away = fetch(url + page)
        assert away.status == 303
        assert away.headers["location"] == f"/login?next={quote(page, safe='')}"
        assert fetch(url + f"/events/{NS}").status == 401
        login = fetch(url + "/login")
        assert login.status == 200 and "sign out" not in login.text  # not signed in yet
        wrong = fetch(url + "/login", data={"token": "guess", "next": page})
        assert wrong.status == 401 and "That is not the token." in wrong.text
        right = fetch(url + "/login", data={"token": "s3cret-token", "next": page})
        assert right.status == 303 and right.headers["location"] == page
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        session = cookie.split(";", 1)[0]
        signed_in = fetch(url + page, headers={"Cookie": session})
        assert signed_in.status == 200 and "sign out" in signed_in.text
        forged = session.rsplit(".", 1)[0] + ".00"
        assert fetch(url + page, headers={"Cookie": forged}).status == 303
        bearer = {"Authorization": "Bearer s3cret-token"}
        assert fetch(url + page, headers=bearer).status == 200
        # Only this inspector's own paths after signing in (no open redirect).
        elsewhere = fetch(url + "/login", data={"token": "s3cret-token", "next": "//evil.example/"})
        assert elsewhere.headers["location"] == "/"
