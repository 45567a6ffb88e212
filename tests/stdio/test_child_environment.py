"""What a stdio server started by `connect_stdio` inherits (issue 43, item 3): not the parent's whole
environment (a probe's proxied server saw 42 variables, `MCP_REQUEST_STATE_SECRET` and
`AWS_SECRET_ACCESS_KEY` among them) but the safe variables (`child_environment`: the official SDK's
list, the locale, TZ, TMPDIR), what the caller passes in `env`, or everything with `env=INHERIT`."""

from __future__ import annotations

import anyio
import pytest

from mcp_bindings.runtime.stdio.connect import INHERIT, ChildEnv, child_environment, connect_stdio
from mcp_bindings.v2025_11_25.client import Client
from tests.support.child_env import ENV_SERVER, EXPLICIT, SECRETS, check_inherited, seen

LIMIT = 30


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", "/home/probe")  # set, whatever the machine running the tests has


async def _environment(env: ChildEnv) -> list[str]:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(ENV_SERVER, Client, env=env) as client:
            return seen(await client.call_tool(name="environment", arguments={}))


@pytest.mark.anyio
@pytest.mark.usefixtures("secrets")
async def test_a_server_gets_the_safe_variables_and_what_is_passed_not_the_secrets() -> None:
    check_inherited(await _environment(EXPLICIT))
    check_inherited(await _environment(None), explicit=False)


@pytest.mark.anyio
@pytest.mark.usefixtures("secrets")
async def test_inherit_passes_the_whole_environment() -> None:
    assert set(SECRETS) <= set(await _environment(INHERIT))


def test_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("TERM", "() { :; }; echo exported function")  # an exported shell function: skipped
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = child_environment({"AWS_SECRET_ACCESS_KEY": "given", "PATH": "/given"})
    assert env["AWS_SECRET_ACCESS_KEY"] == "given" and env["PATH"] == "/given"  # explicit wins
    assert env["LC_ALL"] == "C.UTF-8"
    assert {"MCP_REQUEST_STATE_SECRET", "TERM"}.isdisjoint(env)
    assert env["PYTHONPATH"] == "/elsewhere"  # no secret; a server run from its source needs it
    assert child_environment(INHERIT)["MCP_REQUEST_STATE_SECRET"] == SECRETS["MCP_REQUEST_STATE_SECRET"]
