"""What a stdio server started by the runtime inherits (issue 43, item 3): the secrets a probe found
in a proxied server's environment, the server that reports its own (tests/peers/env_server.py), and
the check every spawn path's test makes of what it saw."""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.support import REPO_ROOT

# What the probe found in the parent's environment and in the third-party server's behind a proxy.
SECRETS = {"MCP_REQUEST_STATE_SECRET": "s" * 40, "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
ENV_SERVER = [sys.executable, str(REPO_ROOT / "tests" / "peers" / "env_server.py")]
EXPLICIT = {"X": "1"}  # what a caller passes explicitly


def seen(result: Any) -> list[str]:
    """The variable names `env_server`'s `environment` tool answered (a typed or wire result)."""
    from mcp_bindings.runtime.protocol import versions

    data = result if isinstance(result, dict) else versions.dump(result)
    return json.loads(data["content"][0]["text"])


def check_inherited(names: list[str], *, explicit: bool = True) -> None:
    """No secret of the parent reached the server; PATH and HOME did (and X, passed explicitly)."""
    leaked = sorted(set(SECRETS) & set(names))
    assert not leaked, f"the server inherited {leaked} (it saw {len(names)} variables: {names})"
    assert {"PATH", "HOME"} <= set(names), names
    if explicit:
        assert set(EXPLICIT) <= set(names), names
