"""The typed requests a server's handler sends its client: each version's generated `ClientCalls`
(`self.client(ctx)` on the `Server` stub), one method per request of the version's server-to-client
table, gated on what the client declared and typed so that pyright strict knows the results.

Against our own client, in memory at every handshake version and across versions, and over stdio.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import NotExpressible
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.support import REPO_ROOT
from tests.support.pyright_snippet import strict_errors

pytestmark = pytest.mark.anyio

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def mod(version: str, kind: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.{kind}")


def _calls(version: str) -> set[str]:
    cls = mod(version, "server").ClientCalls
    return {name for name, member in vars(cls).items() if inspect.iscoroutinefunction(member)}


@pytest.mark.parametrize("version", [*HANDSHAKE, "2026-07-28"])
def test_one_typed_call_per_server_request_of_the_table(version: str) -> None:
    protocol = mod(version, "methods").PROTOCOL
    expected = {spec.handler for spec in protocol.server_requests.values()}
    assert _calls(version) == expected
    if version == "2026-07-28":
        assert expected == set()  # stateless: no server-to-client requests (asks ride InputRequiredResult)
    else:
        assert {"ping", "list_roots", "create_message"} <= expected


def asking_server(version: str) -> Any:
    """A server of `version` whose tools ask the client through the typed calls and report what came back."""
    m = mod(version, "models")
    has_elicit = "elicitation/create" in mod(version, "methods").SERVER_REQUESTS

    class Asking(mod(version, "server").Server):  # type: ignore[misc]
        name, version_ = "asking", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            names = ["roots", "sample", "ping", "elicit"]
            return m.ListToolsResult(
                tools=[m.Tool(name=n, input_schema=m.ToolInputSchema(type="object")) for n in names]
            )

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            calls = self.client(ctx)
            try:
                if params.name == "roots":
                    result: Any = await calls.list_roots()
                    assert type(result) is m.ListRootsResult
                    text = ",".join(str(r.uri) for r in result.roots)
                elif params.name == "sample":
                    message = m.SamplingMessage(role="user", content=m.TextContent(text="hello"))
                    result = await calls.create_message(messages=[message], max_tokens=5, system_prompt="be brief")
                    assert type(result) is m.CreateMessageResult
                    text = f"{result.model}:{result.content.text}"
                elif params.name == "ping":
                    text = f"ping:{await calls.ping(timeout=5)}"
                else:
                    assert has_elicit
                    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                    if version == "2025-11-25":
                        form = m.ElicitRequestFormParams.model_validate({"message": "ok?", "requestedSchema": schema})
                        result = await calls.elicit(form)
                    else:
                        requested = m.ElicitRequestParamsRequestedSchema.model_validate(schema)
                        result = await calls.elicit(message="ok?", requested_schema=requested)
                    assert type(result) is m.ElicitResult
                    text = f"{result.action}:{json.dumps(result.content)}"
            except NotExpressible as exc:
                return m.CallToolResult(content=[m.TextContent(text=f"refused: {exc.message}")], is_error=True)
            return m.CallToolResult(content=[m.TextContent(text=text)])

    return Asking()


def answering_handlers(version: str, *, sampling: bool = True) -> Any:
    m = mod(version, "models")

    class Answering(mod(version, "client").ClientHandlers):  # type: ignore[misc]
        async def list_roots(self, params: Any, ctx: Any) -> Any:
            return m.ListRootsResult(roots=[m.Root(uri="file:///work", name="work")])

        if sampling:

            async def create_message(self, params: Any, ctx: Any) -> Any:
                assert params.system_prompt == "be brief"
                return m.CreateMessageResult(role="assistant", content=m.TextContent(text="hi"), model="tiny")

        if version not in ("2024-11-05", "2025-03-26"):

            async def elicit(self, params: Any, ctx: Any) -> Any:
                return m.ElicitResult(action="accept", content={"ok": True})

    return Answering()


async def ask(server: Any, client_version: str, handlers: Any, tool: str) -> tuple[bool, str]:
    with anyio.fail_after(10):
        async with connect_in_memory(
            server, mod(client_version, "client").Client, handlers=handlers, protocol_version=client_version
        ) as client:
            result = await client.call_tool(name=tool, arguments={})
    return bool(result.is_error), str(result.content[0].text)


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_typed_calls_reach_our_client(version: str) -> None:
    server, handlers = asking_server(version), answering_handlers(version)
    assert await ask(server, version, handlers, "roots") == (False, "file:///work")
    assert await ask(server, version, handlers, "sample") == (False, "tiny:hi")
    assert await ask(server, version, handlers, "ping") == (False, "ping:None")
    if "elicit" in _calls(version):
        assert await ask(server, version, handlers, "elicit") == (False, 'accept:{"ok": true}')


async def test_a_call_the_client_did_not_declare_is_refused_naming_the_capability() -> None:
    version = "2025-06-18"
    error, text = await ask(asking_server(version), version, answering_handlers(version, sampling=False), "sample")
    assert error
    assert text.startswith("refused: cannot send sampling/createMessage")
    assert "`sampling`" in text and "did not declare" in text


async def test_a_call_to_a_stateless_client_is_refused_like_the_others() -> None:
    # A 2025-11-25 server serving a 2026-07-28 client: no request can reach it (NotExpressible, caught).
    error, text = await ask(asking_server("2025-11-25"), "2026-07-28", answering_handlers("2026-07-28"), "roots")
    assert error
    assert text.startswith("refused: roots/list: a stateless (2026-07-28) request cannot send requests")


async def test_a_call_crosses_into_an_older_client_and_answers_in_the_stubs_version() -> None:
    # A 2025-11-25 server's typed call to a 2024-11-05 client: its answer comes back as the stub's model.
    server = asking_server("2025-11-25")
    assert await ask(server, "2024-11-05", answering_handlers("2024-11-05"), "sample") == (False, "tiny:hi")
    error, text = await ask(server, "2024-11-05", answering_handlers("2024-11-05"), "elicit")
    assert error and "which has no elicitation/create" in text


async def test_calls_of_another_version_than_the_servers_are_refused() -> None:
    m = mod("2025-11-25", "models")
    other = mod("2025-06-18", "server").ClientCalls
    seen: list[str] = []

    class Mixed(mod("2025-11-25", "server").Server):  # type: ignore[misc]
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[m.Tool(name="x", input_schema=m.ToolInputSchema(type="object"))])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            with pytest.raises(TypeError) as caught:
                other(ctx)
            seen.append(str(caught.value))
            return m.CallToolResult(content=[m.TextContent(text="ok")])

    assert await ask(Mixed(), "2025-11-25", answering_handlers("2025-11-25"), "x") == (False, "ok")
    assert seen and "ClientCalls of MCP 2025-06-18 cannot serve a handler of an MCP 2025-11-25 server" in seen[0]


STDIO_SERVER = """
import sys
sys.path[:0] = {paths!r}
from tests.client.test_client_calls import asking_server
from mcp_bindings.runtime.stdio.serve import serve_stdio
serve_stdio(asking_server("2025-11-25"))
"""


async def test_typed_calls_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(STDIO_SERVER.format(paths=[str(REPO_ROOT), *sys.path]))
    version = "2025-06-18"
    with anyio.fail_after(30):
        async with connect_stdio(
            [sys.executable, str(script)],
            mod(version, "client").Client,
            handlers=answering_handlers(version),
            protocol_version=version,
        ) as client:
            for tool, expected in [("roots", "file:///work"), ("sample", "tiny:hi"), ("elicit", 'accept:{"ok": true}')]:
                result = await client.call_tool(name=tool, arguments={})
                assert not result.is_error
                assert result.content[0].text == expected


# -- pyright strict knows the result types ---------------------------------------------------------

SNIPPET = """
from typing import assert_type

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import ClientCalls, Server


class Mine(Server):
    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        calls = self.client(ctx)
        assert_type(calls, ClientCalls)
        roots = await calls.list_roots()
        assert_type(roots, m.ListRootsResult)
        sampled = await calls.create_message(messages=[], max_tokens=5)
        assert_type(sampled, m.CreateMessageResult)
        elicited = await ClientCalls(ctx).elicit(m.ElicitRequestFormParams.model_validate({{}}))
        assert_type(elicited, m.ElicitResult)
        assert_type(await calls.ping(), None)
        {extra}
        return m.CallToolResult(content=[])
"""


def _pyright_errors(tmp_path: Path, extra: str) -> list[str]:
    return strict_errors(tmp_path, textwrap.dedent(SNIPPET.format(extra=extra)))


@pytest.mark.slow
def test_pyright_strict_knows_the_result_types(tmp_path: Path) -> None:
    assert _pyright_errors(tmp_path, "") == []
    # Not vacuous: a wrong result type is an error.
    wrong = _pyright_errors(tmp_path, "assert_type(await calls.list_roots(), m.CreateMessageResult)")
    assert len(wrong) == 1 and "assert_type" in wrong[0]


# -- the authoring layer's Context answers with the app's stub version's models ------------------


@pytest.mark.parametrize(
    ("stub", "client"), [("2025-11-25", "2025-06-18"), ("2026-07-28", "2026-07-28"), ("2026-07-28", "2025-11-25")]
)
async def test_app_context_answers_carry_the_stub_versions_models(stub: str, client: str) -> None:
    from mcp_bindings.runtime.app import App, Context

    m = mod(stub, "models")
    probe = App("probe", protocol=stub)
    got: dict[str, Any] = {}

    @probe.tool
    async def ask(ctx: Context) -> str:
        got["sampled"] = await ctx.sample("hello", max_tokens=5)
        got["roots"] = await ctx.list_roots()
        return "done"

    def model(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m", "stopReason": "endTurn"}

    with anyio.fail_after(10):
        async with probe.test_client(client, sample=model, roots=[{"uri": "file:///r", "name": "r"}]) as c:
            assert (await c.call_tool(name="ask")).content[0].text == "done"
    sampled = got["sampled"]
    assert (sampled.text, sampled.model) == ("ok", "m")
    assert type(sampled.result) is m.CreateMessageResult and sampled.result.model == "m"
    [root] = got["roots"]
    assert (root.uri, root.name) == ("file:///r", "r")
    assert type(root.model) is m.Root and str(root.model.uri) == "file:///r"
