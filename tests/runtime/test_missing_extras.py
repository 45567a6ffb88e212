"""Importing a part of the runtime without its extra names the extra to install (issue 34), instead of
a bare `No module named 'anyio'`. Each case runs in a fresh interpreter where the dependency is
hidden (`sys.modules[name] = None` makes it uninstalled as far as imports and `find_spec` see)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import REPO_ROOT

CASES = [
    ("anyio", "mcp_bindings.runtime.stdio", "runtime"),
    ("orjson", "mcp_bindings.runtime.app", "runtime"),
    ("starlette", "mcp_bindings.runtime.http.app", "http"),
    ("httpx", "mcp_bindings.runtime.client.http", "http"),
    ("jwt", "mcp_bindings.runtime.auth", "http"),
]


@pytest.mark.parametrize(("hidden", "module", "extra"), CASES)
def test_a_missing_dependency_names_its_extra(hidden: str, module: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{hidden!r}] = None\n"
        "try:\n"
        f"    import {module}\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, '|', exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    name, _, message = out.stdout.strip().partition(" | ")
    assert name == hidden
    assert f"needs {hidden!r}, which is not installed: pip install 'mcp-bindgen[{extra}]'" in message
