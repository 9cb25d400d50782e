"""TLS and mTLS on the gRPC port, with throwaway certificates made at test time."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from sharedctx import AsyncClient, UnavailableError
from sharedctx.cli import main
from sharedctx.errors import PermissionDeniedError, UnauthenticatedError
from sharedctx_server.errors import ConfigError
from sharedctx_server.security.tls import server_credentials
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.servers import serving
from .certs import CertificateAuthority, Issued, Pki
from .conftest import READER, WRITER

NS = "team-a/session-42"


def tls_client(
    port: int, ca: Path, client: Issued | None = None, token: str | None = None
) -> AsyncClient:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=ca.read_bytes(),
        private_key=client.key.read_bytes() if client else None,
        certificate_chain=client.cert.read_bytes() if client else None,
    )
    return AsyncClient(
        f"127.0.0.1:{port}", timeout=5, retries=0, credentials=credentials, token=token
    )


async def test_tls_client_connects_and_plaintext_or_untrusting_clients_fail(
    settings: Settings, token_counter: TokenCounter, pki: Pki
) -> None:
    tls = {"tls_cert": pki.server.cert, "tls_key": pki.server.key}
    async with serving(settings, token_counter, **tls) as (running, plaintext):
        async with tls_client(running.port, pki.ca) as client:
            await client.put(NS, "k", "over TLS")
            assert (await client.get(NS, "k", full=True)).content == "over TLS"
        with pytest.raises(UnavailableError, match="its TLS and yours may differ") as info:
            await plaintext.get(NS, "k")
        assert "--tls / --tls-ca for a server with --tls-cert" in info.value.message
        # A client that does not trust the server's CA refuses the handshake.
        async with tls_client(running.port, pki.rogue_ca) as wary:
            with pytest.raises(UnavailableError) as info:
                await wary.get(NS, "k")
        assert info.value.message.startswith(
            f"the TLS handshake with the sharedctx server at 127.0.0.1:{running.port} failed: "
            "its certificate is not signed by a CA this client trusts: pass that CA with --tls-ca"
        )
    # A TLS client at a plaintext port.
    async with serving(settings, token_counter) as (running, _):
        async with tls_client(running.port, pki.ca) as client:
            with pytest.raises(UnavailableError) as info:
                await client.get(NS, "k")
        assert "failed: it does not speak TLS: drop --tls / --tls-ca" in info.value.message


async def test_mtls_requires_a_client_certificate_of_the_configured_ca(
    settings: Settings, token_counter: TokenCounter, pki: Pki
) -> None:
    mtls = {"tls_cert": pki.server.cert, "tls_key": pki.server.key, "tls_client_ca": pki.ca}
    async with serving(settings, token_counter, **mtls) as (running, _):
        async with tls_client(running.port, pki.ca) as no_cert:
            with pytest.raises(UnavailableError, match="--tls-client-cert / --tls-client-key"):
                await no_cert.put(NS, "k", "refused")
        async with tls_client(running.port, pki.ca, pki.rogue_client) as intruder:
            with pytest.raises(UnavailableError):
                await intruder.put(NS, "k", "refused")
        async with tls_client(running.port, pki.ca, pki.client) as agent:
            await agent.put(NS, "k", "mutual")
            assert (await agent.get(NS, "k", full=True)).content == "mutual"


async def test_tls_and_bearer_tokens_combine(
    settings: Settings, token_counter: TokenCounter, pki: Pki, token_file: Path
) -> None:
    extra = {"tls_cert": pki.server.cert, "tls_key": pki.server.key, "auth_tokens": token_file}
    async with serving(settings, token_counter, **extra) as (running, _):
        async with tls_client(running.port, pki.ca, token=WRITER) as agent:
            await agent.put(NS, "k", "authenticated and encrypted")


async def test_cli_client_trusts_the_ca_given_with_tls_ca(
    settings: Settings,
    token_counter: TokenCounter,
    pki: Pki,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mtls = {"tls_cert": pki.server.cert, "tls_key": pki.server.key, "tls_client_ca": pki.ca}
    async with serving(settings, token_counter, **mtls) as (running, _):
        common = ["--target", f"127.0.0.1:{running.port}", "-n", NS, "--tls-ca", str(pki.ca)]
        mine = ["--tls-client-cert", str(pki.client.cert), "--tls-client-key", str(pki.client.key)]
        # The blocking CLI runs in a thread while this loop serves.
        assert await asyncio.to_thread(main, ["put", *common, *mine, "k", "from the CLI"]) == 0
        assert await asyncio.to_thread(main, ["get", *common, *mine, "k", "--full"]) == 0
        assert capsys.readouterr().out.endswith("from the CLI")
        assert await asyncio.to_thread(main, ["get", *common, "--timeout", "3", "k"]) == 1
        assert "UNAVAILABLE" in capsys.readouterr().err
        # Half a client identity is refused before gRPC could abort the process over it.
        for half in (mine[:2], mine[2:]):
            with pytest.raises(SystemExit, match="mTLS takes the two together"):
                main(["get", *common, *half, "k"])
        # A CA file that is not PEM is named, not taken for a server that is not there.
        not_pem = pki.ca.with_name("ca.der")
        not_pem.write_bytes(b"\x30\x82binary")
        with pytest.raises(SystemExit, match=r"--tls-ca .*ca\.der holds no PEM block"):
            main(["get", *common[:4], "--tls-ca", str(not_pem), "k"])


def test_half_configured_tls_is_a_config_error(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="both --tls-cert and --tls-key"):
        server_credentials(Settings(tls_cert=pki.server.cert))
    with pytest.raises(ConfigError, match="needs --tls-cert and --tls-key"):
        server_credentials(Settings(tls_client_ca=pki.ca))
    not_pem = tmp_path / "cert.der"
    not_pem.write_bytes(b"\x30\x82binary")
    with pytest.raises(ConfigError, match="is not PEM"):
        server_credentials(Settings(tls_cert=not_pem, tls_key=pki.server.key))
    with pytest.raises(ConfigError, match="cannot read the TLS private key"):
        server_credentials(Settings(tls_cert=pki.server.cert, tls_key=tmp_path / "absent.key"))


def cert_grants(token_file: Path) -> Path:
    """The standard token file plus a scope for the client certificate with CN "agent-a"."""
    data = json.loads(token_file.read_text())
    data["tokens"].append(
        {"client_cert": "cn:agent-a", "principal": "agent-a-by-cert", "namespaces": ["team-a/"],
         "permissions": ["read", "write"]}
    )  # fmt: skip
    token_file.write_text(json.dumps(data))
    return token_file


async def test_a_client_certificate_named_in_the_token_file_gets_its_scope_without_a_token(
    settings: Settings, token_counter: TokenCounter, pki: Pki, token_file: Path
) -> None:
    mtls = {"tls_cert": pki.server.cert, "tls_key": pki.server.key, "tls_client_ca": pki.ca}
    auth = {"auth_tokens": cert_grants(token_file)}
    async with serving(settings, token_counter, **mtls, **auth) as (running, _):
        async with tls_client(running.port, pki.ca, pki.client) as agent:
            await agent.put(NS, "k", "by certificate")
            assert (await agent.get(NS, "k", full=True)).content == "by certificate"
            with pytest.raises(PermissionDeniedError, match="agent-a-by-cert"):
                await agent.put("team-b/x", "k", "outside the granted prefix")
        # A bearer token, when sent, decides: READER may not write even with the certificate.
        async with tls_client(running.port, pki.ca, pki.client, token=READER) as reader:
            with pytest.raises(PermissionDeniedError, match="auditor"):
                await reader.put(NS, "k2", "refused")


async def test_a_verified_certificate_without_an_entry_or_token_is_unauthenticated(
    settings: Settings, token_counter: TokenCounter, pki: Pki, token_file: Path, tmp_path: Path
) -> None:
    other = CertificateAuthority(tmp_path / "pki", "ca-two")
    nameless = other.issue("agent-z", server=False)
    ca_bundle = tmp_path / "bundle.pem"
    ca_bundle.write_bytes(pki.ca.read_bytes() + other.cert.read_bytes())
    mtls = {"tls_cert": pki.server.cert, "tls_key": pki.server.key, "tls_client_ca": ca_bundle}
    async with serving(settings, token_counter, **mtls, auth_tokens=cert_grants(token_file)) as (
        running,
        _,
    ):
        async with tls_client(running.port, pki.ca, nameless) as stranger:
            with pytest.raises(UnauthenticatedError, match="'cn:agent-z' has no client_cert entry"):
                await stranger.put(NS, "k", "refused")
        async with tls_client(running.port, pki.ca, nameless, token=WRITER) as with_token:
            await with_token.put(NS, "k", "the token decides")


def test_client_cert_entries_need_client_certificate_verification(
    pki: Pki, token_file: Path
) -> None:
    from sharedctx_server.security.auth import Authenticator

    settings = Settings(tls_cert=pki.server.cert, tls_key=pki.server.key)
    with pytest.raises(ConfigError, match="--tls-client-ca"):
        Authenticator.from_settings(replace(settings, auth_tokens=cert_grants(token_file)))
