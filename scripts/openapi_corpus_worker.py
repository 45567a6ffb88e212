"""A long-lived worker of `scripts/openapi_corpus.py`: reads one JSON request a line on stdin, answers
one JSON result a line on stdout, so a run pays an interpreter's start and the generator's imports
once per worker instead of once per description (the parent kills and replaces a worker that goes
over its time limit, and replaces each after a number of descriptions).

    python scripts/openapi_corpus_worker.py bindgen    # generate, import, list through our client
    python scripts/openapi_corpus_worker.py fastmcp    # FastMCP's from_openapi: load, list

`fastmcp` mode runs under another venv's interpreter (one holding FastMCP), so this file imports
nothing of this project at its top.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

PACKAGE = "corpus_api"


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def _forget(src: Path) -> None:
    """Drop an earlier description's package from this interpreter, so the next imports afresh."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    while str(src) in sys.path:
        sys.path.remove(str(src))
    importlib.invalidate_caches()


async def _our_tools(package: Any) -> list[str]:
    async with package.app.test_client("2025-11-25") as client:
        names: list[str] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return names


def bindgen(request: dict[str, Any]) -> dict[str, Any]:
    """Generate (falling back to a placeholder base URL where the description names no absolute
    server), import the package, list its tools through the client."""
    from mcp_bindgen.errors import BindgenError
    from mcp_bindgen.openapi import Options, generate, write

    spec, out = request["spec"], Path(request["out"])
    result: dict[str, Any] = {"stage": "generate", "tools": 0, "skipped": 0}
    try:
        started = time.monotonic()
        try:
            generated = generate(spec, Options(name=PACKAGE), "corpus")
        except BindgenError as exc:
            if "--base-url" not in str(exc):
                raise
            result["placeholder_base"] = True
            generated = generate(spec, Options(name=PACKAGE, base_url=request["base"]), "corpus")
        if out.exists():
            shutil.rmtree(out)
        write(out, generated.files, True)
        ir = generated.ir
        result.update(operations=len(ir.operations), skipped=len(ir.skipped), schemas=len(ir.schemas))
        result["generate_s"] = round(time.monotonic() - started, 2)
        if request.get("generate_only"):
            return {**result, "stage": "generated"}
        result["stage"] = "import"
        src = out / "src"
        _forget(src)
        sys.path.insert(0, str(src))
        started = time.monotonic()
        try:
            package = importlib.import_module(PACKAGE)
            result["import_s"] = round(time.monotonic() - started, 2)
            result["stage"] = "list"
            names = asyncio.run(_our_tools(package))
        finally:
            _forget(src)
        return {**result, "stage": "ok", "tools": len(names)}
    except Exception as exc:
        return {**result, "error": _error(exc)}


def fastmcp(request: dict[str, Any]) -> dict[str, Any]:
    """The anchor: the description through FastMCP's `from_openapi`, listed by its in-memory client."""
    result: dict[str, Any] = {"stage": "load", "tools": 0}
    try:
        import httpx2  # type: ignore[import-not-found]  # FastMCP 4's HTTP client, in FastMCP's venv
        from fastmcp import Client, FastMCP  # type: ignore[import-not-found]

        spec = json.loads(Path(request["spec"]).read_text(encoding="utf-8"))
        client = httpx2.AsyncClient(base_url=request["base"])
        server = FastMCP.from_openapi(spec, client=client, name="corpus")  # pyright: ignore
        result["stage"] = "list"

        async def tools() -> int:
            async with Client(server) as session:  # pyright: ignore
                return len(await session.list_tools())  # pyright: ignore

        return {**result, "stage": "ok", "tools": asyncio.run(tools())}
    except Exception as exc:
        return {**result, "error": _error(exc)}


def main() -> int:
    work = {"bindgen": bindgen, "fastmcp": fastmcp}[sys.argv[1]]
    # Results go to the real stdout; whatever the generated code prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if line.strip():
            answers.write(json.dumps(work(json.loads(line))) + "\n")
            answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
