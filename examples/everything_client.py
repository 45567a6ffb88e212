"""The conformance "everything" client, built only on `mcp_bindings`.

The official conformance harness (@modelcontextprotocol/conformance) runs it once per client
scenario as `<command> <server-url>`, naming the scenario in MCP_CONFORMANCE_SCENARIO, the protocol
revision in MCP_CONFORMANCE_PROTOCOL_VERSION (2025-11-25: initialize handshake; 2026-07-28:
stateless, `_meta` on every request) and, for some scenarios, giving MCP_CONFORMANCE_CONTEXT (JSON).
See docs/conformance.md ("Client side").

    python examples/everything_client.py http://127.0.0.1:3001/mcp
    MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 python examples/everything_client.py URL

Without a scenario it is a generic exerciser: it lists the server's tools, resources and prompts
and calls, reads and gets each of them, with arguments made up from their schemas. Most scenarios
need nothing more; the few that want particular calls are in SCENARIOS. What the protocol itself
requires (MRTR retries, the -32022 version fallback, SSE resumption, Mcp-* headers, dropping tools
with invalid x-mcp-header annotations) is the runtime's job; answering the server's questions
(elicitation with defaults, sampling, roots) is this application's, in its handlers.

Start-up matters (the harness starts ~40 clients at once): only the requested protocol version's
package is imported, and everything heavy is imported inside main().
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

DEFAULT_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "mcp-bindgen-everything-client", "version": "0.1.0"}
REQUEST_TIMEOUT = 30.0  # seconds, per request
OVERALL_TIMEOUT = 100.0  # seconds, the whole run (the harness allows 120 per client)
MAX_PAGES = 50


def log(message: str) -> None:
    print(f"everything-client: {message}", file=sys.stderr, flush=True)


# -- made-up values from JSON Schemas (arguments, elicitation answers) -----------------------------


def _resolve(schema: Any, root: Any) -> Any:
    """Follow same-document `$ref`s ("#/..."); never fetch anything (a network $ref stays as is)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {key: value for key, value in schema.items() if key != "$ref"}
        node: Any = root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return {}
        schema = {**node, **{key: value for key, value in schema.items() if key != "$ref"}}
        seen += 1
    return schema


def sample(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A plausible value for `schema`: its default, const or first enum member, else one by type."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return "test"
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf"):  # titled enums ({const, title} options) or alternatives
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and ((isinstance(options[0], dict) and "const" in options[0]) or "type" not in schema)
        ):
            return sample(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        count = int(schema.get("minItems", 0) or 0)
        return [sample(schema.get("items"), root, depth + 1) for _ in range(max(count, 1))]
    if kind == "object" or "properties" in schema:
        return required_values(schema, root, depth + 1)
    text = {
        "email": "user@example.com",
        "uri": "https://example.com",
        "date": "2026-01-01",
        "date-time": "2026-01-01T00:00:00Z",
    }.get(schema.get("format", ""), "test")
    return text.ljust(int(schema.get("minLength", 0) or 0), "x")


def _member(schema: dict[str, Any], key: str, kind: type[Any]) -> Any:
    """`schema[key]` if it is a `kind` (dict or list), else an empty one."""
    value = schema.get(key)
    return value if isinstance(value, kind) else kind()


def required_values(schema: Any, root: Any = None, depth: int = 0) -> dict[str, Any]:
    """Values for an object schema's required properties."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return {}
    properties = _member(schema, "properties", dict)
    return {name: sample(properties.get(name, {}), root, depth) for name in _member(schema, "required", list)}


def form_with_defaults(schema: Any) -> dict[str, Any]:
    """An elicitation form accepted as offered: every field's default (SEP-1034), and a made-up
    value for a required field that has none."""
    if not isinstance(schema, dict):
        return {}
    properties = _member(schema, "properties", dict)
    required = set(_member(schema, "required", list))
    content: dict[str, Any] = {}
    for name, prop in properties.items():
        if isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
        elif name in required:
            content[name] = sample(prop, schema)
    return content


# -- the client ------------------------------------------------------------------------------------


def wire(value: Any) -> Any:
    """A model as wire JSON (aliases, no unset fields); plain JSON as is."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump is not None else value


def make_handlers(client_module: Any, models: Any) -> Any:
    """Handlers for the chosen version's stub: declaring them declares the capabilities."""

    class Handlers(client_module.ClientHandlers):  # type: ignore[misc, name-defined]
        async def elicit(self, params: Any, ctx: Any) -> Any:
            request = wire(params)
            if request.get("mode") == "url":
                return models.ElicitResult.model_validate({"action": "accept"})
            content = form_with_defaults(request.get("requestedSchema"))
            return models.ElicitResult.model_validate({"action": "accept", "content": content})

        async def create_message(self, params: Any, ctx: Any) -> Any:
            return models.CreateMessageResult.model_validate(
                {
                    "role": "assistant",
                    "content": {"type": "text", "text": "This is a response from the everything client."},
                    "model": "everything-client",
                    "stopReason": "endTurn",
                }
            )

        async def list_roots(self, params: Any, ctx: Any) -> Any:
            root = {"uri": "file:///tmp/everything-client", "name": "Everything client root"}
            return models.ListRootsResult.model_validate({"roots": [root]})

    return Handlers()


class Run:
    """One client run: the typed client plus a record of the steps that failed."""

    def __init__(self, client: Any, context: dict[str, Any]) -> None:
        self.client = client
        self.context = context
        self.failures: list[str] = []

    async def step(
        self, label: str, call: Callable[..., Awaitable[Any]], /, probe: bool = False, **arguments: Any
    ) -> Any:
        """`await call(**arguments)`, logging the outcome; None if it failed. A `probe` (a feature
        the server may well not have) answered with method-not-found is not a failure."""
        from mcp_bindings.runtime.errors import METHOD_NOT_FOUND, McpError

        try:
            result = await call(**arguments)
        except McpError as exc:
            if probe and exc.code == METHOD_NOT_FOUND:
                log(f"{label}: not offered")
                return None
            self.failures.append(label)
            log(f"{label}: error {exc.code}: {exc.message}")
            return None
        log(f"{label}: ok")
        return result

    def offers(self, capability: str) -> bool:
        """Whether to try a feature: the server offers it, or we cannot know (a stateless session
        that did not probe with server/discover)."""
        session = self.client.session
        return not session.capabilities_known or capability in (session.peer_capabilities or {})

    async def _paged(self, label: str, method: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
        items: list[Any] = []
        cursor = None
        for _ in range(MAX_PAGES):
            probe = not self.client.session.capabilities_known
            page = await self.step(label, method, probe=probe, cursor=cursor)
            if page is None:
                break
            items += getattr(page, field)
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    async def list_tools(self) -> list[Any]:
        return await self._paged("tools/list", self.client.list_tools, "tools")

    def tool_schema(self, tool: Any) -> dict[str, Any]:
        """The input schema exactly as the server sent it (the runtime keeps it from tools/list)."""
        return self.client.session.tool_schemas.get(tool.name) or wire(tool.input_schema)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> Any:
        return await self.step(f"tools/call {name}", self.client.call_tool, name=name, arguments=arguments)

    async def exercise(self) -> None:
        """List everything the server offers and use each of it once."""
        if self.offers("tools"):
            for tool in await self.list_tools():
                await self.call_tool(tool.name, required_values(self.tool_schema(tool)))
        if self.offers("resources"):
            resources = await self._paged("resources/list", self.client.list_resources, "resources")
            for resource in resources:
                uri = resource.uri
                await self.step(f"resources/read {uri}", self.client.read_resource, uri=uri)
        if self.offers("prompts"):
            for prompt in await self._paged("prompts/list", self.client.list_prompts, "prompts"):
                arguments = {a.name: "test" for a in prompt.arguments or [] if a.required}
                label = f"prompts/get {prompt.name}"
                await self.step(label, self.client.get_prompt, name=prompt.name, arguments=arguments or None)


# -- scenarios that want particular calls ----------------------------------------------------------


async def tools_call(run: Run) -> None:
    """Call add_numbers with two numbers."""
    names = [tool.name for tool in await run.list_tools()]
    if "add_numbers" not in names:
        log(f"no add_numbers tool among {names}")
    await run.call_tool("add_numbers", {"a": 5, "b": 3})


async def context_tool_calls(run: Run) -> None:
    """List tools (so their x-mcp-header annotations are known), then make the context's calls."""
    await run.list_tools()
    for call in run.context.get("toolCalls") or []:
        await run.call_tool(call["name"], call.get("arguments"))


async def json_schema_echo(run: Run) -> None:
    """Send a tool's input schema back, exactly as received."""
    tools = {tool.name: tool for tool in await run.list_tools()}
    fixture = tools.get("json_schema_2020_12_tool")
    if fixture is not None and "json_schema_echo" in tools:
        await run.call_tool("json_schema_echo", {"schema": run.tool_schema(fixture)})


SCENARIOS: dict[str, Callable[[Run], Awaitable[None]]] = {
    "tools_call": tools_call,
    "http-custom-headers": context_tool_calls,
    "json-schema-2020-12-preservation": json_schema_echo,
}


# -- start-up --------------------------------------------------------------------------------------


async def run_client(url: str, scenario: str, version: str, context: dict[str, Any]) -> int:
    import importlib

    import anyio

    from mcp_bindings.runtime import registry
    from mcp_bindings.runtime.errors import McpError
    from mcp_bindings.runtime.http_client import connect_http

    package = f"mcp_bindings.{registry.info(version).package}"
    client_module = importlib.import_module(f"{package}.client")
    models = importlib.import_module(f"{package}.models")
    handlers = make_handlers(client_module, models)
    action = SCENARIOS.get(scenario, Run.exercise)
    auth = make_auth(scenario, context) if scenario.startswith("auth/") else None
    try:
        with anyio.fail_after(OVERALL_TIMEOUT):
            async with connect_http(
                url,
                client_module.Client,
                handlers=handlers,
                protocol_version=version,
                request_timeout=REQUEST_TIMEOUT,
                client_info=CLIENT_INFO,
                auth=auth,
            ) as client:
                session = client.session
                log(f"connected: {session.version}, server {session.server_info or '(unknown)'}")
                run = Run(client, context)
                await action(run)
    except TimeoutError:
        log(f"gave up after {OVERALL_TIMEOUT} s")
        return 1
    except McpError as error:
        log(f"connection failed: error {error.code}: {error.message}")
        return 1
    if run.failures:
        log(f"{len(run.failures)} step(s) failed: {', '.join(run.failures)}")
        return 1
    return 0


def make_auth(scenario: str, context: dict[str, Any]) -> Any:
    """OAuth for the auth/* scenarios. The machine-client extensions get their grant from the
    harness's context: client credentials (`private_key_pem` -> private_key_jwt, else
    client_secret_basic), enterprise-managed authorization (`idp_id_token`), workload identity
    (`valid_jwt`). Otherwise the authorization code flow: pre-registered credentials from the
    context when it gives them, else Client ID Metadata Documents or Dynamic Client Registration;
    the authorization step is headless (the test authorization server redirects at once). DPoP is
    used where the authorization server advertises it."""
    from mcp_bindings.runtime.auth import (
        ClientCredentials,
        ClientCredentialsGrant,
        ClientSecretBasic,
        EnterpriseManagedGrant,
        HeadlessAuthorizationHandler,
        JwtBearerGrant,
        OAuthClientAuth,
        PrivateKeyJwt,
        PublicClient,
    )

    grant: Any = None
    if scenario.startswith("auth/client-credentials") and context.get("private_key_pem"):
        key = PrivateKeyJwt(
            context["client_id"], context["private_key_pem"], algorithm=context.get("signing_algorithm") or "ES256"
        )
        grant = ClientCredentialsGrant(key)
    elif scenario.startswith("auth/client-credentials") and context.get("client_secret"):
        grant = ClientCredentialsGrant(ClientSecretBasic(context["client_id"], context["client_secret"]))
    elif context.get("idp_id_token"):
        grant = EnterpriseManagedGrant(
            identity_assertion=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_issuer=context.get("idp_issuer"),
            idp_client=PublicClient(context["idp_client_id"]),
            client=ClientSecretBasic(context["client_id"], context["client_secret"]),
        )
    elif context.get("valid_jwt"):
        grant = JwtBearerGrant(context["valid_jwt"])  # workload identity: no client_id, no client secret
    if grant is not None:
        return OAuthClientAuth(grant=grant)

    pre_registered = None
    if context.get("client_id"):
        pre_registered = ClientCredentials(
            client_id=context["client_id"], client_secret=context.get("client_secret"), issuer=context.get("issuer")
        )
    return OAuthClientAuth(
        HeadlessAuthorizationHandler(),
        client=pre_registered,
        client_metadata_url="https://conformance-test.local/client-metadata.json",
        client_name="mcp-bindgen everything-client",
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[-1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    url = args[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or DEFAULT_VERSION
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    from mcp_bindings.runtime import registry

    if version not in registry.versions():
        log(f"unknown protocol version {version!r}; known: {', '.join(registry.versions())}")
        return 2
    if os.environ.get("MCP_CLIENT_DEBUG"):
        import logging

        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    log(f"scenario {scenario or '(none)'}, protocol {version}, server {url}")
    import anyio

    return anyio.run(run_client, url, scenario, version, context)


if __name__ == "__main__":
    sys.exit(main())
