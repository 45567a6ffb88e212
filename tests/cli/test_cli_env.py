"""What a stdio server started by `mcp-bindgen call` (and the other commands that start one) inherits
(issue 43, item 3): the safe variables and what `--env` passes, never the secrets of the shell that
ran the command."""

from __future__ import annotations

import json
import shlex

from tests.support.child_env import ENV_SERVER, SECRETS, check_inherited, seen
from tests.support.cli import bindgen


def test_call_passes_the_safe_variables_and_env_options_only() -> None:
    server = shlex.join(ENV_SERVER)
    environ = {**SECRETS, "FROM_SHELL": "kept"}
    done = bindgen(
        "call", "--env", "X=1", "--env", "FROM_SHELL", "--format", "json", server, "environment", environ=environ
    )
    assert done.returncode == 0, done.stderr
    names = seen(json.loads(done.stdout))
    check_inherited(names)
    assert "FROM_SHELL" in names  # `--env NAME`: ours passed on
    done = bindgen("call", "--env", "FROM_SHELL", server, "variable", "name=FROM_SHELL", environ=environ)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kept\n"
