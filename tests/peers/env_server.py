"""A stdio server that reports its own environment, for the tests of what a server started by the
runtime inherits (issue 43, item 3: tests/stdio/test_child_environment.py, tests/app/test_app_proxy_env.py,
tests/cli/test_cli_env.py). Spawned with `sys.executable tests/peers/env_server.py`.

Tools:
  environment {}       -> the names of its environment variables, sorted, as JSON text
  variable {name}      -> the value of one of them ("" when unset)
"""

from __future__ import annotations

import json
import os

from mcp_bindings.runtime.app import App

app = App("env", version="1.0")


@app.tool
def environment() -> str:
    """The names of this process's environment variables, sorted, as JSON."""
    return json.dumps(sorted(os.environ))


@app.tool
def variable(name: str) -> str:
    """The value of one environment variable ("" when unset)."""
    return os.environ.get(name, "")


if __name__ == "__main__":
    app.run()
