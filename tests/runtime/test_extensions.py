"""Custom and extension methods (runtime/server/extensions.py): declared once with their models and
extension identifier, served by a server or by a client's handlers, advertised where each protocol
version puts extensions (`experimental` before 2026-07-28, `extensions` from it), dispatched like
core methods (params validated: -32602 naming fields; errors, progress, cancellation), typed on the
client, and refused before sending where the peer did not declare the extension.

In memory at every version; as real processes over stdio (`connect_stdio` with the peer script
written into tmp_path) and over HTTP (uvicorn on 127.0.0.1) at 2025-11-25 and 2026-07-28.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CapabilityError,
    McpError,
)
from mcp_bindings.runtime.server import extensions
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.peers.harness import server_env
from tests.support import REPO_ROOT
from tests.support.http import ACCEPT, rpc, serve_in_thread, stateless, stateless_headers

pytestmark = pytest.mark.anyio

ALL_VERSIONS = list(registry.versions())
REAL = ["2025-11-25", "2026-07-28"]
LIMIT = 30  # seconds any one test may take
EXT = "com.example/echo"

# The peer: the declarations both sides share, and a server serving them (its `__main__` serves stdio).
PEER = '''
"""Custom methods of extension com.example/echo, and a server of them (tests/runtime/test_extensions.py)."""

import importlib
import sys

import anyio
import orjson
from pydantic import BaseModel

from mcp_bindings.runtime.server import extensions
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError

EXT = "com.example/echo"


class EchoParams(BaseModel):
    text: str
    times: int = 1


class EchoResult(BaseModel):
    echoed: str


class SlowParams(BaseModel):
    seconds: float


class Note(BaseModel):
    text: str


ECHO = extensions.request("example/echo", EchoParams, EchoResult, extension=EXT)
SLOW = extensions.request("example/slow", SlowParams, EchoResult, extension=EXT)
FAIL = extensions.request("example/fail", None, EchoResult, extension=EXT)
WRONG = extensions.request("example/wrong", None, EchoResult, extension=EXT)
CAPS = extensions.request("example/caps", None, EchoResult, extension=EXT)  # the client's capabilities, as seen
HEARD = extensions.request("example/heard", None, EchoResult, extension=EXT)  # what the server heard so far
ROUND = extensions.request("example/round", EchoParams, EchoResult, extension=EXT)  # the server asks ASK back
HELLO = extensions.notification("notifications/example/hello", Note, extension=EXT)
PINGED = extensions.notification("notifications/example/pinged", Note, extension=EXT, sender="server")
ASK = extensions.request("example/ask", EchoParams, EchoResult, extension=EXT, sender="server")


def make_server(version):
    stub = importlib.import_module(f"mcp_bindings.{registry.info(version).package}.server")

    class Server(stub.Server):
        name = "extension-peer"

    server = Server()
    heard = []

    async def echo(params, ctx):
        await ctx.report_progress(1, 2)
        sent = await extensions.notify(ctx, PINGED, Note(text=f"echoing {params.text}"))
        heard.append(f"pinged:{sent}")
        return EchoResult(echoed=params.text * params.times)

    async def slow(params, ctx):
        try:
            await anyio.sleep(params.seconds)
        except anyio.get_cancelled_exc_class():
            heard.append("slow:cancelled")
            raise
        return EchoResult(echoed="slept")

    async def fail(params, ctx):
        raise McpError(-32050, "example failure", {"why": "asked to"})

    async def wrong(params, ctx):
        return Note(text="not an EchoResult")

    async def caps(params, ctx):
        return EchoResult(echoed=orjson.dumps(ctx.peer_capabilities).decode())

    async def heard_so_far(params, ctx):
        return EchoResult(echoed=",".join(heard))

    async def round_trip(params, ctx):
        return await extensions.request_client(ctx, ASK, params)

    async def hello(params, ctx):
        heard.append(f"hello:{params.text}:{ctx.protocol_version}")

    for method, handler in [
        (ECHO, echo), (SLOW, slow), (FAIL, fail), (WRONG, wrong), (CAPS, caps), (HEARD, heard_so_far),
        (ROUND, round_trip), (HELLO, hello),
    ]:
        server.register_method(method, handler)
    return server


if __name__ == "__main__":
    from mcp_bindings.runtime.stdio.serve import serve_stdio

    serve_stdio(make_server(sys.argv[1]))
'''


@pytest.fixture(scope="module")
def peer_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("extension_peer") / "peer.py"
    path.write_text(PEER, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def peer(peer_script: Path) -> ModuleType:
    """The peer script as a module of this process (the declarations the client uses)."""
    spec = importlib.util.spec_from_file_location("_extension_peer", peer_script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def client_stubs(version: str) -> ModuleType:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.client")


def make_handlers(peer: ModuleType, version: str, got: list[Any], *, declare: bool = True) -> Any:
    """A client's handlers of `version` serving PINGED and ASK (which declares the extension)."""
    handlers = client_stubs(version).ClientHandlers()
    if not declare:
        return handlers

    async def pinged(params: Any, ctx: Any) -> None:
        got.append(("pinged", params.text, ctx.protocol_version))

    async def ask(params: Any, ctx: Any) -> Any:
        return peer.EchoResult(echoed=f"client:{params.text}")

    handlers.register_method(peer.PINGED, pinged)
    handlers.register_method(peer.ASK, ask)
    return handlers


async def heard(client: Any, peer: ModuleType) -> list[str]:
    result = await client.session.call_extension(peer.HEARD)
    return [item for item in result.echoed.split(",") if item]


async def raw(client: Any, method: str, params: dict[str, Any] | None = None) -> Any:
    """A request as the wire carries it, past the typed client's own checks."""
    runtime = client.session
    data = dict(params or {})
    if runtime.stateless:
        data["_meta"] = runtime.request_meta()
    return await runtime.session.request(method, data or None, timeout=10)


async def exercise(client: Any, peer: ModuleType, got: list[Any], version: str, *, notifications: bool = True) -> None:
    """What every transport is checked for: the typed call, progress, the server's notification to
    the client, the client's to the server, a server-to-client request, and bad input."""
    progress: list[tuple[float, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    with client.session.progress(on_progress):
        result = await client.session.call_extension(peer.ECHO, peer.EchoParams(text="ab", times=2))
    assert isinstance(result, peer.EchoResult)
    assert result.echoed == "abab"
    assert progress == [(1, 2)]
    with anyio.fail_after(5):
        while not got:
            await anyio.sleep(0.01)
    assert got == [("pinged", "echoing ab", version)]

    if notifications:
        await client.session.notify_extension(peer.HELLO, {"text": "hi"})
        with anyio.fail_after(5):
            while f"hello:hi:{version}" not in await heard(client, peer):
                await anyio.sleep(0.02)

    if registry.info(version).stateless:  # no server-to-client requests in the stateless era
        with pytest.raises(McpError) as refused:
            await client.session.call_extension(peer.ROUND, {"text": "x"})
        assert refused.value.code == INTERNAL_ERROR
    else:
        answered = await client.session.call_extension(peer.ROUND, {"text": "x"})
        assert answered.echoed == "client:x"

    # Bad input, on the wire: each the JSON-RPC error the core methods get.
    with pytest.raises(McpError) as bad:
        await raw(client, "example/echo", {"times": "twice"})
    assert bad.value.code == INVALID_PARAMS
    paths = {error["path"] for error in bad.value.data["errors"]}
    assert paths == {"params.text", "params.times"}
    with pytest.raises(McpError) as unknown:
        await raw(client, "example/unknown", {})
    assert unknown.value.code == METHOD_NOT_FOUND
    with pytest.raises(McpError) as failed:
        await client.session.call_extension(peer.FAIL)
    assert (failed.value.code, failed.value.message, failed.value.data) == (
        -32050,
        "example failure",
        {"why": "asked to"},
    )
    with pytest.raises(McpError) as wrong:
        await client.session.call_extension(peer.WRONG)
    assert wrong.value.code == INTERNAL_ERROR
    # The typed client checks params before sending.
    with pytest.raises(McpError) as local:
        await client.session.call_extension(peer.ECHO, {"times": 1})
    assert local.value.code == INVALID_PARAMS


# -- in memory, every version ------------------------------------------------------------------------


@asynccontextmanager
async def in_memory(peer: ModuleType, version: str, got: list[Any], **options: Any) -> AsyncIterator[Any]:
    server = peer.make_server(version)
    async with connect_in_memory(
        server,
        client_stubs(version).Client,
        handlers=make_handlers(peer, version, got, **options),
        protocol_version=version,
        request_timeout=10,
    ) as client:
        yield client


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_capabilities_where_each_version_puts_extensions(peer: ModuleType, version: str) -> None:
    # 2026-07-28 on: `extensions` only. Before: `experimental` (what those schemas define) and
    # `extensions` too, where SEP-1724 peers (the TypeScript SDK v2, MCP Apps, Skills) read them.
    stateless = registry.info(version).stateless
    keys = ("extensions",) if stateless else ("experimental", "extensions")
    with anyio.fail_after(LIMIT):
        async with in_memory(peer, version, []) as client:
            advertised = client.server_capabilities
            declared = client.session.capabilities
            seen = orjson.loads((await client.session.call_extension(peer.CAPS)).echoed)
            for key in keys:
                assert advertised[key] == {EXT: {}} and declared[key] == {EXT: {}} and seen[key] == {EXT: {}}
            if stateless:
                assert "experimental" not in advertised and "experimental" not in declared


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_round_trip_in_memory(peer: ModuleType, version: str) -> None:
    got: list[Any] = []
    with anyio.fail_after(LIMIT):
        async with in_memory(peer, version, got) as client:
            await exercise(client, peer, got, version)


async def test_settings_and_declared_extensions(peer: ModuleType) -> None:
    """Settings given with `use_extension` are advertised; an extension declared in
    `declared_capabilities["extensions"]` is placed like a registered one."""
    from mcp_bindings.v2025_11_25 import client as c25
    from mcp_bindings.v2025_11_25 import server as s25

    class Server(s25.Server):
        declared_capabilities = {"extensions": {"com.example/declared": {"level": 2}}}

    server = Server()
    server.use_extension(EXT, {"maxTimes": 3})

    class Handlers(c25.ClientHandlers):
        declared_capabilities = {"extensions": {"com.example/client": {}}}

    with anyio.fail_after(LIMIT):
        async with connect_in_memory(server, c25.Client, handlers=Handlers()) as client:
            assert client.server_capabilities["experimental"] == {
                "com.example/declared": {"level": 2},
                EXT: {"maxTimes": 3},
            }
            assert client.server_capabilities["extensions"] == client.server_capabilities["experimental"]
            assert client.session.capabilities == {
                "experimental": {"com.example/client": {}},
                "extensions": {"com.example/client": {}},
            }


async def test_nothing_sent_where_the_peer_lacks_the_extension(peer: ModuleType) -> None:
    """The typed client refuses a method of an extension the server did not advertise (CapabilityError,
    nothing sent: the server's handler never runs); a server's notification to a client that did not
    declare the extension is not sent (notify returns False)."""
    other = extensions.request("example/echo", peer.EchoParams, peer.EchoResult, extension="com.example/other")
    got: list[Any] = []
    with anyio.fail_after(LIMIT):
        async with in_memory(peer, "2025-11-25", got, declare=False) as client:
            with pytest.raises(CapabilityError) as refused:
                await client.session.call_extension(other, {"text": "x"})
            assert "com.example/other" in str(refused.value)
            assert await heard(client, peer) == []
            await client.session.call_extension(peer.ECHO, {"text": "x"})
            assert await heard(client, peer) == ["pinged:False"]
            assert got == []


async def test_cancelling_a_custom_request(peer: ModuleType) -> None:
    with anyio.fail_after(LIMIT):
        async with in_memory(peer, "2025-11-25", []) as client:
            with anyio.move_on_after(0.2):
                await client.session.call_extension(peer.SLOW, {"seconds": 30})
            with anyio.fail_after(5):
                while "slow:cancelled" not in await heard(client, peer):
                    await anyio.sleep(0.02)


def test_registration_is_checked_and_kept_out_of_the_object(peer: ModuleType) -> None:
    from mcp_bindings.v2025_11_25 import client as c25
    from mcp_bindings.v2025_11_25 import server as s25

    server = s25.Server()
    before = dict(vars(server))

    async def handler(params: Any, ctx: Any) -> Any:
        return peer.EchoResult(echoed="")

    core = extensions.request("tools/list", None, peer.EchoResult, extension=EXT)
    with pytest.raises(ValueError, match="tools/list is a method of MCP 2025-11-25"):
        server.register_method(core, handler)
    with pytest.raises(ValueError, match="sent by the server"):
        server.register_method(peer.ASK, handler)
    with pytest.raises(ValueError, match="sent by the client"):
        c25.ClientHandlers().register_method(peer.ECHO, handler)
    with pytest.raises(ValueError, match="extension identifier"):
        extensions.request("example/x", None, None, extension="no-prefix")
    with pytest.raises(TypeError):
        server.register_method("example/echo", handler)

    @server.register_method(peer.ECHO)
    async def decorated(params: Any, ctx: Any) -> Any:
        return peer.EchoResult(echoed=params.text)

    assert vars(server) == before  # the registry is the runtime's, not the object's
    assert extensions.methods_of(server).handlers["example/echo"].handler is decorated


async def test_an_extension_package_plugs_in_its_tables(peer: ModuleType) -> None:
    """What a generated extension package provides (method tables of `MethodSpec`s) plugs into a
    server (handlers found by each spec's handler name) and a client (its declarations)."""
    from mcp_bindings.v2026_07_28 import client as c26
    from mcp_bindings.v2026_07_28 import server as s26

    def spec(method: str, handler: str, direction: Any, params: Any, result: Any, kind: Any = "request") -> MethodSpec:
        return MethodSpec(
            method=method,
            kind=kind,
            direction=direction,
            handler=handler,
            message=dict,
            params=params,
            params_required=True,
            result=result,
            input_required=False,
            gate=None,
            param_gates=(),
            optional_handler=False,
            builtin=False,
        )

    client_requests = {"example/shout": spec("example/shout", "shout", "client_to_server", peer.Note, peer.EchoResult)}
    server_notifications = {
        "notifications/example/shouted": spec(
            "notifications/example/shouted", "on_shouted", "server_to_client", peer.Note, None, "notification"
        )
    }
    package = extensions.Extension.from_tables(
        "com.example/shout", client_requests, server_notifications, settings={"volume": 11}
    )

    class Shouting:
        async def shout(self, params: Any, ctx: Any) -> Any:
            await extensions.notify(ctx, package["notifications/example/shouted"], params)
            return peer.EchoResult(echoed=params.text.upper())

    server = s26.Server()
    server.use_extension(package, handlers=Shouting())
    got: list[str] = []

    class ClientSide:
        async def on_shouted(self, params: Any, ctx: Any) -> None:
            got.append(params.text)

    handlers = c26.ClientHandlers()
    handlers.use_extension(package, handlers=ClientSide())
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(server, c26.Client, handlers=handlers, protocol_version="2026-07-28") as client:
            assert client.server_capabilities["extensions"] == {"com.example/shout": {"volume": 11}}
            result = await client.session.call_extension(package["example/shout"], peer.Note(text="hey"))
            assert result.echoed == "HEY"
            assert got == ["hey"]


# -- real processes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", REAL)
async def test_stdio_round_trip(peer: ModuleType, peer_script: Path, version: str, tmp_path: Path) -> None:
    got: list[Any] = []
    with anyio.fail_after(LIMIT), open(tmp_path / "server.stderr", "wb") as stderr:
        async with connect_stdio(
            [sys.executable, str(peer_script), version],
            client_stubs(version).Client,
            handlers=make_handlers(peer, version, got),
            protocol_version=version,
            request_timeout=10,
            env=server_env(),
            cwd=str(REPO_ROOT),
            stderr=stderr,
        ) as client:
            key = "extensions" if version == "2026-07-28" else "experimental"
            assert client.server_capabilities[key] == {EXT: {}}
            await exercise(client, peer, got, version)
            with anyio.move_on_after(0.3):
                await client.session.call_extension(peer.SLOW, {"seconds": 30})
            with anyio.fail_after(5):
                while "slow:cancelled" not in await heard(client, peer):
                    await anyio.sleep(0.02)


@pytest.fixture(scope="module")
def http_servers(peer: ModuleType) -> Iterator[dict[str, str]]:
    """One uvicorn server per real version's stub: the /mcp URL of each."""
    with serve_in_thread(create_app(peer.make_server("2025-11-25"))) as old:
        with serve_in_thread(create_app(peer.make_server("2026-07-28"))) as new:
            yield {"2025-11-25": old + "/mcp", "2026-07-28": new + "/mcp"}


@pytest.mark.parametrize("version", REAL)
async def test_http_round_trip(peer: ModuleType, http_servers: dict[str, str], version: str) -> None:
    url = http_servers[version]
    got: list[Any] = []
    with anyio.fail_after(LIMIT):
        # A session-less notification (stateless era) reaches the server too: its POST is answered
        # 202 once the server's notification handling has it.
        is_stateless = registry.info(version).stateless
        async with connect_http(
            url,
            client_stubs(version).Client,
            handlers=make_handlers(peer, version, got),
            protocol_version=version,
            request_timeout=10,
        ) as client:
            await exercise(client, peer, got, version)
        # The capabilities as the wire carries them: initialize (2025-11-25) or server/discover (2026-07-28).
        async with httpx.AsyncClient(timeout=10) as http:
            if is_stateless:
                reply = await http.post(
                    url, json=rpc(1, "server/discover", stateless()), headers=stateless_headers("server/discover")
                )
            else:
                params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
                reply = await http.post(url, json=rpc(1, "initialize", params), headers=ACCEPT)
            capabilities = reply.json()["result"]["capabilities"]
            if is_stateless:
                assert capabilities["extensions"] == {EXT: {}} and "experimental" not in capabilities
            else:
                assert capabilities["experimental"] == {EXT: {}} and capabilities["extensions"] == {EXT: {}}


async def test_stateless_notification_post_checks_its_method_header(http_servers: dict[str, str]) -> None:
    """A session-less POST of a notification alone is delivered (202); one whose `Mcp-Method` names
    another method is refused before it reaches the server (HTTP 400, HEADER_MISMATCH)."""
    url = http_servers["2026-07-28"]
    note = {"jsonrpc": "2.0", "method": "notifications/example/hello", "params": stateless({"text": "raw"})}
    async with httpx.AsyncClient(timeout=10) as http:
        ok = await http.post(url, json=note, headers=stateless_headers("notifications/example/hello"))
        assert ok.status_code == 202
        bad = await http.post(url, json=note, headers=stateless_headers("tools/call"))
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020


async def test_an_extension_method_whose_result_is_a_union_alias() -> None:
    """The tasks extension's `tasks/get` answers `GetTaskResult`, a union type alias (one model per
    status), not a class: a handler served through `use_extension(EXTENSION, handlers=obj)` answering
    with one of its members is sent as is (`ttlMs: null` kept), and anything else is still -32603."""
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as tm
    from mcp_bindings.ext.io_modelcontextprotocol_tasks.methods import EXTENSION
    from mcp_bindings.v2026_07_28 import client as c26
    from mcp_bindings.v2026_07_28 import server as s26

    class Tasks:
        async def get_task(self, params: Any, ctx: Any) -> Any:
            if params.task_id == "wrong":
                return tm.CancelTaskResult()  # a model, but not one of GetTaskResult's members
            return tm.GetTaskResultWorking(
                task_id=params.task_id, status="working", created_at="2026-01-01T00:00:00Z",
                last_updated_at="2026-01-01T00:00:00Z", ttl_ms=None,
            )  # fmt: skip

    server = s26.Server()
    server.use_extension(EXTENSION, handlers=Tasks())
    handlers = c26.ClientHandlers()
    handlers.use_extension(EXTENSION)
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(server, c26.Client, handlers=handlers, protocol_version="2026-07-28") as client:
            got = await raw(client, "tasks/get", {"taskId": "t1"})
            assert got["taskId"] == "t1" and got["status"] == "working" and got["resultType"] == "complete"
            assert "ttlMs" in got and got["ttlMs"] is None
            typed = await client.session.call_extension(EXTENSION["tasks/get"], tm.GetTaskRequestParams(task_id="t1"))
            assert isinstance(typed, tm.GetTaskResultWorking) and typed.ttl_ms is None
            with pytest.raises(McpError) as caught:
                await raw(client, "tasks/get", {"taskId": "wrong"})
            assert caught.value.code == INTERNAL_ERROR and "returned the wrong type" in caught.value.message
