"""Helpers of the runtime process tests: spawning the test server, a raw line-level peer, and
client handlers that record what the server sent or asked."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.support import REPO_ROOT

PEERS = Path(__file__).resolve().parent
TEST_SERVER = PEERS / "stdio_server.py"
HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MAX_LINE = 64 * 1024 * 1024


def server_command(script: Path = TEST_SERVER) -> list[str]:
    return [sys.executable, str(script)]


def server_env(**options: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(options)
    env.pop("PYTHONSTARTUP", None)
    return env


def client_module(version: str) -> ModuleType:
    """The generated `client` module of a protocol version, e.g. `client_module("2024-11-05")`."""
    import importlib

    from mcp_bindings.runtime.protocol import registry

    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.client")


class Recorder:
    """What a client's handlers saw: every call as (kind, payload), plus a change event."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self._changed = anyio.Event()

    def add(self, kind: str, payload: Any = None) -> None:
        self.calls.append((kind, payload))
        self._changed.set()
        self._changed = anyio.Event()

    def of(self, kind: str) -> list[Any]:
        return [payload for k, payload in self.calls if k == kind]

    async def wait_for(self, predicate: Callable[[Recorder], bool], timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while not predicate(self):
                await self._changed.wait()


def _dump(value: Any) -> Any:
    from mcp_bindings.runtime.protocol import versions

    return versions.dump(value)


def make_handlers(version: str, recorder: Recorder) -> Any:
    """A `ClientHandlers` of `version`'s client stub answering sampling, roots and (where the
    version has it) elicitation, and recording notifications."""
    base = client_module(version).ClientHandlers

    list_changed = "roots.listChanged" in base.protocol.capability_paths("client")  # not in 2026-07-28

    class Handlers(base):  # type: ignore[misc, valid-type]
        declared_capabilities = {"roots": {"listChanged": True}} if list_changed else {}

        async def create_message(self, params: Any, ctx: Any) -> Any:
            data = _dump(params)
            recorder.add("sampling", data)
            prompt = data["messages"][0]["content"]["text"]
            if prompt == "slow":  # for cancellation tests: takes long, records being cancelled
                try:
                    await anyio.sleep(30)
                except anyio.get_cancelled_exc_class():
                    recorder.add("sampling_cancelled")
                    raise
            return {
                "role": "assistant",
                "content": {"type": "text", "text": f"sampled: {prompt}"},
                "model": "test-model",
            }

        async def list_roots(self, params: Any, ctx: Any) -> Any:
            recorder.add("roots", None)
            return {"roots": [{"uri": "file:///tmp/project", "name": "project"}]}

        if hasattr(base, "elicit"):

            async def elicit(self, params: Any, ctx: Any) -> Any:
                recorder.add("elicitation", _dump(params))
                return {"action": "accept", "content": {"name": "Ada"}}

        async def on_logging_message(self, params: Any, ctx: Any) -> None:
            recorder.add("log", _dump(params))

        async def on_tool_list_changed(self, params: Any, ctx: Any) -> None:
            recorder.add("tools_changed")

        async def on_prompt_list_changed(self, params: Any, ctx: Any) -> None:
            recorder.add("prompts_changed")

        async def on_resource_list_changed(self, params: Any, ctx: Any) -> None:
            recorder.add("resources_changed")

        async def on_resource_updated(self, params: Any, ctx: Any) -> None:
            recorder.add("updated", _dump(params)["uri"])

    return Handlers()


def tool_text(result: Any) -> str:
    return result.content[0].text


def tool_json(result: Any) -> Any:
    return orjson.loads(tool_text(result))


# -- the raw peer -----------------------------------------------------------------------------


class RawPeer:
    """A running server process driven by raw byte lines on its stdin/stdout."""

    def __init__(self, process: Process, stderr_path: Path) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stderr_path = stderr_path
        self._out = BufferedByteReceiveStream(process.stdout)
        self._ids = itertools.count(1_000_000)

    async def send(self, data: bytes, *, newline: bool = True) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data + (b"\n" if newline else b""))

    async def send_json(self, message: Any) -> None:
        await self.send(orjson.dumps(message))

    async def recv_line(self, timeout: float = 5.0) -> bytes:
        with anyio.fail_after(timeout):
            return await self._out.receive_until(b"\n", MAX_LINE)

    async def recv(self, timeout: float = 5.0) -> Any:
        return orjson.loads(await self.recv_line(timeout))

    async def request(self, method: str, params: Any = None, *, id: Any = None, timeout: float = 5.0) -> Any:
        """Send a request and return the next line (skipping notifications) as decoded JSON."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids) if id is None else id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send_json(message)
        return await self.recv_response(timeout)

    async def recv_response(self, timeout: float = 5.0) -> Any:
        with anyio.fail_after(timeout):
            while True:
                reply = await self.recv(timeout)
                if isinstance(reply, dict) and "method" in reply and "id" not in reply:
                    continue  # a notification (log, progress, ...)
                return reply

    async def initialize(self, version: str, capabilities: Mapping[str, Any] | None = None) -> Any:
        reply = await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": dict(capabilities or {}),
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert reply.get("result", {}).get("protocolVersion") == version, reply
        await self.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def assert_alive(self, *, quiet: float = 0.2) -> None:
        """The next line is the answer to a fresh ping (so nothing was sent for what came before),
        and nothing else follows within `quiet` seconds."""
        ping_id = next(self._ids)
        await self.send_json({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        reply = await self.recv()
        assert reply == {"jsonrpc": "2.0", "id": ping_id, "result": {}}, f"expected the ping reply, got {reply!r}"
        await self.assert_silent(quiet)

    async def resync(self, timeout: float = 5.0) -> None:
        """Skip whatever an earlier (failed) exchange left unread, up to the answer to a fresh ping."""
        ping_id = f"resync-{next(self._ids)}"
        await self.send_json({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        with anyio.fail_after(timeout):
            while True:
                reply = await self.recv(timeout)
                if isinstance(reply, dict) and reply.get("id") == ping_id:
                    return

    async def assert_silent(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            line = await self._out.receive_until(b"\n", MAX_LINE)
            raise AssertionError(f"unexpected output: {line[:300]!r}")

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")


@asynccontextmanager
async def raw_server(stderr_path: Path, script: Path = TEST_SERVER, **options: str) -> AsyncIterator[RawPeer]:
    """Spawn `script` (the test server by default) and yield a raw peer; stop it after."""
    with open(stderr_path, "wb") as stderr:
        process = await anyio.open_process(
            server_command(script),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=server_env(**options),
            cwd=str(REPO_ROOT),
        )
        try:
            yield RawPeer(process, stderr_path)
        finally:
            with anyio.CancelScope(shield=True):
                assert process.stdin is not None
                try:
                    await process.stdin.aclose()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                with anyio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
