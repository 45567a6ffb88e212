"""`mcp-bindgen mock` without its extra (issue 45, item 6): the command stops at its start naming the
`mock` extra, as every other command does, instead of serving and answering every `tools/call`
with a `faker` traceback. The extra's absence is made by the import system (`None` in sys.modules)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LOCK = {
    "lockFormat": 1,
    "versions": {
        "2025-11-25": {
            "serverInfo": {"name": "weather"},
            "capabilities": {"tools": {}},
            "tools": [{"name": "forecast", "inputSchema": {"type": "object"}}],
            "prompts": [],
            "resources": [],
            "resourceTemplates": [],
        }
    },
}
WITHOUT = "import sys; sys.modules[{module!r}] = None\nfrom mcp_bindgen.cli import main\nsys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("module", ["faker", "jsf"])
def test_mock_without_its_extra_names_it_at_start(tmp_path: Path, module: str) -> None:
    lock = tmp_path / "mcp-lock.json"
    lock.write_text(json.dumps(LOCK), encoding="utf-8")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT.format(module=module), "mock", str(lock)],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""  # nothing served
    assert done.stderr == (
        f"mcp-bindgen: error: `mcp-bindgen mock` needs the mock extra (no module {module!r}): "
        "install mcp-bindgen[mock]\n"
    )
