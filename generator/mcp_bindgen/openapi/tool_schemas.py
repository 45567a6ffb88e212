"""Each tool's inputSchema and outputSchema written into the generated package (`tool_schemas.json`),
so that starting it builds no model: the server lists its tools from the file and builds a tool's
models on its first call (the runtime's `@app.tool(schemas=...)`).

The schemas are the runtime's own: the package is imported once, in a child interpreter running the
live tools' `mcp_bindings.live.tool_schemas` (the generator imports nothing of the runtime), with no
such file, each tool analysed as any tool is when it is registered, and what its definition lists is
written down; so the listing is the same, byte for byte, with the file or without it. The file names
the pydantic that wrote it; under another pydantic the package ignores it (its schemas may differ)
and analyses its tools at start-up. Where the child cannot import the package (the runtime is not
installed beside the generator), the package is written without the file, and the reason is said.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["FILE", "with_tool_schemas"]

FILE = "tool_schemas.json"  # beside the package's server module (the runtime's `app.openapi.TOOL_SCHEMAS`)
_TIMEOUT = 600.0  # seconds to import a package of thousands of tools, models built, on a loaded machine


def with_tool_schemas(files: dict[str, str], package: str) -> dict[str, str]:
    """`files` (the generated project's) with `src/PACKAGE/tool_schemas.json` added, where the
    package imports."""
    with tempfile.TemporaryDirectory(prefix="mcp-bindgen-schemas-") as tmp:
        src = Path(tmp) / "src"
        for rel, content in files.items():
            if rel.startswith(f"src/{package}/"):
                path = Path(tmp) / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
        out = Path(tmp) / FILE
        argv = [sys.executable, "-m", "mcp_bindings.live.tool_schemas", str(src), package, str(out)]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT, env=env, check=False)
        except subprocess.TimeoutExpired:
            return _without(files, f"importing the package took over {_TIMEOUT:g} s")
        if done.returncode != 0 or not out.is_file():
            lines = done.stderr.strip().splitlines()
            return _without(files, lines[-1] if lines else f"exit status {done.returncode}")
        return {**files, f"src/{package}/{FILE}": out.read_text(encoding="utf-8")}


def _without(files: dict[str, str], reason: str) -> dict[str, str]:
    print(
        f"warning: the tools' schemas were not written ({reason}); the package analyses its tools when it starts",
        file=sys.stderr,
    )
    return files
