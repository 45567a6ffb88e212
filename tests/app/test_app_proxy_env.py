"""What the stdio server behind `App.proxy(command)` inherits (issue 43, item 3), as the probe saw it:
a proxy started with secrets in its environment, served to a client that asks the remote for its
environment. Only the safe variables and the proxy's `env` reach the remote."""

from __future__ import annotations

import anyio
import pytest

from mcp_bindings.runtime.app import App
from tests.support.child_env import ENV_SERVER, EXPLICIT, SECRETS, check_inherited, seen

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("explicit", [True, False])
async def test_the_proxied_server_does_not_get_the_proxys_secrets(
    monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", "/home/probe")
    proxy = App.proxy(ENV_SERVER, name="env-proxy", env=EXPLICIT if explicit else None)
    with anyio.fail_after(30):
        async with proxy.test_client("2026-07-28") as client:
            names = seen(await client.call_tool(name="environment", arguments={}))
    check_inherited(names, explicit=explicit)
