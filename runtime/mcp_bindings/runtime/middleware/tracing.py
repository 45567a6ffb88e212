"""OpenTelemetry for a server, as middleware (`middleware.chain`), following OpenTelemetry's MCP
semantic conventions: a SERVER span per request named `{mcp.method.name} {target}` (`tools/call
get_weather`), with `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id`,
`jsonrpc.request.id`, `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool` for a tool
call, `gen_ai.prompt.name`, `mcp.resource.uri`, and `error.type` on failure (`tool_error` for a
tool's `isError` result); its parent is the trace context the client put in the request's `_meta`
(`traceparent`, `tracestate`); and the `mcp.server.operation.duration` histogram (seconds).

What a client chooses never becomes a name of its own (`_Names`): a tool, prompt or resource is
recorded by its name (a resource by its URI, or by a listed template it matches) only where the
server has it, as its tool catalog or a list result passing through says, or as its answer to a
tools/call, prompts/get or resources/read does (an error answer, such as an unknown tool's, says
nothing), and at most `max_names` of them (500); anything else is `_OTHER`, so that unknown names
cannot fill the SDK's series limit. A URI is recorded without its query, fragment and
userinfo (`chain.recorded_uri`), where clients put tokens.

Needs `opentelemetry-api` (the `otel` extra); the SDK and exporters are the application's choice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any, cast

from mcp_bindings.runtime.middleware.chain import Call, Next, recorded_uri
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["OTHER", "Tracing"]

_TOOL_OPERATION = "execute_tool"
OTHER = "_OTHER"  # a name the server does not have (OpenTelemetry's word for a value outside the set)
_EXPRESSION = re.compile(r"\{[^}]*\}")


def _template_pattern(template: str) -> re.Pattern[str]:
    """What URIs an RFC 6570 template names, loosely: each expression any run of characters."""
    literal = [re.escape(part) for part in _EXPRESSION.split(template)]
    return re.compile(".*?".join(literal), re.DOTALL)


def _declared(call: Call, tool: str) -> bool:
    """Whether the server's tool catalog holds `tool` (declared by the authoring layer, or listed)."""
    server = getattr(call.context, "server", None)
    return server is not None and tool in host_for(server).tool_catalog.tools


class _Names:
    """The targets (tool and prompt names, resource URIs and templates) the server has: learned
    from its list results and its answers, at most `limit` in all; what a span and the metric
    record as a request's target."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.known: dict[str, set[str]] = {}  # routed request (`tools/call`, ...) -> its targets the server has
        self.templates: dict[str, re.Pattern[str]] = {}

    def _size(self) -> int:
        return sum(len(names) for names in self.known.values()) + len(self.templates)

    def _add(self, routed: str, name: Any) -> None:
        names = self.known.setdefault(routed, set())
        if isinstance(name, str) and routed in v2026.URI_TARGETS:
            name = recorded_uri(name)
        if isinstance(name, str) and name not in names and self._size() < self.limit:
            names.add(name)

    def learn(self, method: str, result: Any) -> None:
        """A list result passing through: what the server has. The generated names say where: the
        result's list field (`LISTS`), the request whose targets the items are (`LISTED`), and each
        item's field naming one (`LIST_KEYS`: a template of them where that is no routing param)."""
        routed, key = v2026.LISTED.get(method), v2026.LIST_KEYS.get(method)
        data = versions.dump(result) if routed is not None and key is not None else None
        if routed is None or key is None or not isinstance(data, dict):
            return
        items = cast("dict[str, Any]", data).get(v2026.LISTS[method])
        for item in cast("list[Any]", items) if isinstance(items, list) else []:
            value = cast("dict[str, Any]", item).get(key) if isinstance(item, dict) else None
            if key == v2026.ROUTING[routed]:
                self._add(routed, value)
            elif isinstance(value, str) and value not in self.templates and self._size() < self.limit:
                self.templates[value] = _template_pattern(recorded_uri(value))

    def answered(self, call: Call) -> None:
        """The server answered a request for its target with a result: it has that name (a tool, a
        prompt, a resource; a template's instance by its URI, unless the template was listed)."""
        target = call.target
        if target is not None and call.method in v2026.LISTED.values():
            self._add(call.method, target)

    def target(self, call: Call) -> str | None:
        """The request's target as recorded: its name where the server has it, else `OTHER`; None
        for a method without one."""
        target = call.target
        if target is None:
            return None
        if call.method == v2026.TOOLS_CALL:
            return target if target in self.known.get(call.method, ()) or _declared(call, target) else OTHER
        if call.method == v2026.PROMPTS_GET:
            return target if target in self.known.get(call.method, ()) else OTHER
        uri = recorded_uri(target)
        if uri in self.known.get(v2026.RESOURCES_READ, ()):
            return uri
        return next((t for t, pattern in self.templates.items() if pattern.fullmatch(uri)), OTHER)


class _MetaGetter:
    """Reads trace context from a request's `_meta` (a dict of strings)."""

    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(key)
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:
        return list(carrier)


class Tracing:
    """`App(middleware=[Tracing()])` / `use_middleware(server, Tracing())`: spans and the duration
    metric of every request, from the global providers unless `tracer_provider` / `meter_provider`
    are given. `max_names`: how many targets learned from list results and answers are recorded by
    name (the server's tool catalog comes on top); the rest are `_OTHER`."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, *, max_names: int = 500) -> None:
        try:
            from opentelemetry import metrics, propagate, trace
        except ImportError:
            raise ImportError(
                "Tracing needs the OpenTelemetry API: pip install 'mcp-bindgen[otel]' (opentelemetry-api)"
            ) from None
        package = "mcp_bindings.runtime.middleware"
        self._trace = trace
        self._propagate = propagate
        self._tracer = trace.get_tracer(package, tracer_provider=tracer_provider)
        meter = metrics.get_meter(package, meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            "mcp.server.operation.duration", unit="s", description="Duration of MCP requests on the server"
        )
        self._getter = _MetaGetter()
        self._names = _Names(max_names)

    def _attributes(self, call: Call, target: str | None) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "mcp.method.name": call.method,
            "mcp.protocol.version": call.protocol_version,
            "mcp.session.id": call.session.id,
            "jsonrpc.request.id": str(call.context.request_id),
        }
        if target is None:
            return attributes
        if call.method == v2026.TOOLS_CALL:
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = _TOOL_OPERATION
        elif call.method == v2026.PROMPTS_GET:
            attributes["gen_ai.prompt.name"] = target
        elif call.method.startswith("resources/"):
            attributes["mcp.resource.uri"] = target
        return attributes

    def _parent(self, call: Call) -> Any:
        raw = call.raw
        meta = cast("dict[str, Any]", raw).get("_meta") if isinstance(raw, dict) else None
        if not isinstance(meta, dict) or "traceparent" not in meta:
            return None
        getter: Any = self._getter  # a textmap Getter (duck-typed: the API is imported on use)
        return self._propagate.extract(cast("dict[str, Any]", meta), getter=getter)

    async def __call__(self, call: Call, call_next: Next) -> Any:
        target = self._names.target(call)
        attributes = self._attributes(call, target)
        kind = self._trace.SpanKind.SERVER
        started = time.perf_counter()
        error: str | None = None
        # Exceptions are recorded by hand: an McpError's message often repeats what the client sent
        # (`Unknown tool: ...`, `Resource not found: <uri with its query>`), so only its type is kept.
        with self._tracer.start_as_current_span(
            _span_name(call.method, target),
            context=self._parent(call),
            kind=kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(call)
            except BaseException as exc:
                error = type(exc).__name__
                self._failed(span, exc, error)
                raise
            else:
                if target == OTHER:  # the server answered: it has that name
                    attributes = self._known(call, span, attributes)
                if getattr(result, "is_error", None) is True:
                    error = "tool_error"
                    span.set_attribute("error.type", error)
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR))
                self._names.learn(call.method, result)
                return result
            finally:
                measured = {k: v for k, v in attributes.items() if k != "jsonrpc.request.id" and k != "mcp.session.id"}
                if error is not None:
                    measured["error.type"] = error
                self._duration.record(time.perf_counter() - started, measured)

    def _failed(self, span: Any, exc: BaseException, error: str) -> None:
        span.set_attribute("error.type", error)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error))
        if not isinstance(exc, McpError) and isinstance(exc, Exception):
            span.record_exception(exc)  # the server's own failure: its traceback helps, it holds no client input

    def _known(self, call: Call, span: Any, attributes: dict[str, Any]) -> dict[str, Any]:
        """After an answer to a target recorded as `OTHER`: its name, if the server has it now."""
        self._names.answered(call)
        target = self._names.target(call)
        if target == OTHER:
            return attributes
        span.update_name(_span_name(call.method, target))
        known = self._attributes(call, target)
        span.set_attributes(known)
        return known


def _span_name(method: str, target: str | None) -> str:
    return f"{method} {target}" if target else method
