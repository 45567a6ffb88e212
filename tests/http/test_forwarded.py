"""Forwarded headers (issue 43, item 6): which `X-Forwarded-For` names the client for the per-client
bounds is one setting, `forwarded_allow_ips`, off by default, the same under every way of serving.
Before, it depended on the log level: `app.run("http", log_level="info")` and a plain
`uvicorn.run(app.asgi())` trusted the header from 127.0.0.1 (uvicorn's defaults), so initializes with
forged addresses passed the per-client bound. Each server runs in a process of its own on 127.0.0.1;
the test sends `max_sessions_per_client` + 2 initializes, each forging another address."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mcp_bindings.runtime.http.fairness import UNVERIFIED, ClientAddress
from tests.support import announced_url, stop
from tests.support.cli import SCRIPT, env
from tests.support.http import ACCEPT, rpc

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = """
import sys

import uvicorn

from mcp_bindings.runtime.app import App

app = App("forwarded")


@app.tool
def ping() -> str:
    return "pong"


if __name__ == "__main__":
    how, trusted = sys.argv[1], sys.argv[2:]  # no proxy named: the setting left at its default
    options = {"max_sessions_per_client": 3, **({"forwarded_allow_ips": trusted} if trusted else {})}
    if how == "app.run":
        app.run("http", port=0, log_level="info", **options)
    else:  # uvicorn.run with its defaults (proxy_headers on, trusting 127.0.0.1), or with proxy_headers off
        mcp = app.asgi(**options)
        uvicorn.run(mcp, host="127.0.0.1", port=0, log_level="info", proxy_headers=how == "uvicorn.run")
"""


@contextmanager
def serving(tmp_path: Path, how: str, trusted: str) -> Iterator[tuple[str, int]]:
    """The server served `how`, trusting `trusted`: its endpoint's URL and its per-client bound."""
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    if how == "cli":
        command = [str(SCRIPT), "run", f"{server}:app", "--transport", "http", "--port", "0"]
        command += ["--forwarded-allow-ips", trusted] if trusted else []
        limit = 100  # the default: the command line sets no per-client bound
    else:
        command, limit = [sys.executable, str(server), how, *([trusted] if trusted else [])], 3
    log = tmp_path / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env(), cwd=tmp_path)
    try:
        url = announced_url(log, process).removesuffix("/mcp") + "/mcp"
        yield url, limit
    finally:
        stop(process)


async def forged_initializes(url: str, count: int) -> list[int]:
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "0"}},
    )
    statuses: list[int] = []
    async with httpx.AsyncClient(timeout=10) as client:
        for n in range(count):
            forged = {**ACCEPT, "X-Forwarded-For": f"203.0.{n // 250}.{n % 250 + 1}"}
            statuses.append((await client.post(url, json=init, headers=forged)).status_code)
    return statuses


@pytest.mark.parametrize(
    ("how", "trusted", "bounded"),
    [
        ("app.run", "", True),  # before: trusted at log_level="info"
        ("uvicorn.run", "", True),  # before: trusted (uvicorn's defaults)
        ("cli", "", True),
        ("app.run", "127.0.0.1", False),
        ("uvicorn.run proxy_headers=False", "127.0.0.1", False),
        ("cli", "127.0.0.1", False),
        # uvicorn's own proxy_headers rewrote the address: the peer cannot be checked, one client
        ("uvicorn.run", "127.0.0.1", True),
    ],
)
async def test_forged_forwarded_for_stays_under_the_per_client_bound(
    tmp_path: Path, how: str, trusted: str, bounded: bool
) -> None:
    with serving(tmp_path, how, trusted) as (url, limit):
        statuses = await forged_initializes(url, limit + 2)
    if bounded:
        assert statuses == [200] * limit + [429, 429], statuses
    else:
        assert statuses == [200] * (limit + 2), statuses


def test_client_address_reads_forwarded_for_only_from_the_proxies_named() -> None:
    def scope(peer: str, *forwarded: str) -> dict[str, object]:
        return {"client": (peer, 5000), "headers": [(b"x-forwarded-for", f.encode()) for f in forwarded]}

    nobody, proxy = ClientAddress(), ClientAddress("10.0.0.0/8, 192.0.2.1")
    assert nobody(scope("198.51.100.7", "203.0.113.9")) == "198.51.100.7"  # off: the header ignored
    assert proxy(scope("198.51.100.7", "203.0.113.9")) == "198.51.100.7"  # not from a proxy named
    assert proxy(scope("10.1.2.3", "203.0.113.9")) == "203.0.113.9"
    # The right-most entry that is not a proxy named; what the client itself wrote is left of it.
    assert proxy(scope("10.1.2.3", "1.1.1.1, 203.0.113.9:4444", "192.0.2.1")) == "203.0.113.9"
    assert proxy(scope("10.1.2.3")) == "10.1.2.3"
    # uvicorn's proxy_headers put an entry of the header in the scope: the peer is unknown.
    assert nobody(scope("203.0.113.9", "203.0.113.9")) == UNVERIFIED
    with pytest.raises(ValueError, match=r"forwarded_allow_ips: 'proxy\.local'"):
        ClientAddress(("proxy.local",))
