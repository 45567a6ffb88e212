"""OpenTelemetry for a server, as middleware (`middleware.chain`), following OpenTelemetry's MCP
semantic conventions: a SERVER span per request named `{mcp.method.name} {target}` (`tools/call
get_weather`), with `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id`,
`jsonrpc.request.id`, `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool` for a tool
call, `gen_ai.prompt.name`, `mcp.resource.uri`, and `error.type` on failure (`tool_error` for a
tool's `isError` result); its parent is the trace context the client put in the request's `_meta`
(`traceparent`, `tracestate`); and the `mcp.server.operation.duration` histogram (seconds).

Needs `opentelemetry-api` (the `otel` extra); the SDK and exporters are the application's choice.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

from mcp_bindings.runtime.middleware.chain import Call, Next
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["Tracing"]

_TOOL_OPERATION = "execute_tool"


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
    are given."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
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

    def _attributes(self, call: Call) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "mcp.method.name": call.method,
            "mcp.protocol.version": call.protocol_version,
            "mcp.session.id": call.session.id,
            "jsonrpc.request.id": str(call.context.request_id),
        }
        target = call.target
        if call.method == v2026.TOOLS_CALL and target is not None:
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = _TOOL_OPERATION
        elif call.method == v2026.PROMPTS_GET and target is not None:
            attributes["gen_ai.prompt.name"] = target
        elif call.method.startswith("resources/") and target is not None:
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
        attributes = self._attributes(call)
        name = f"{call.method} {call.target}" if call.target else call.method
        kind = self._trace.SpanKind.SERVER
        started = time.perf_counter()
        error: str | None = None
        with self._tracer.start_as_current_span(
            name, context=self._parent(call), kind=kind, attributes=attributes, record_exception=True
        ) as span:
            try:
                result = await call_next(call)
            except BaseException as exc:
                error = type(exc).__name__
                span.set_attribute("error.type", error)
                raise
            else:
                if getattr(result, "is_error", None) is True:
                    error = "tool_error"
                    span.set_attribute("error.type", error)
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR))
                return result
            finally:
                measured = {k: v for k, v in attributes.items() if k != "jsonrpc.request.id" and k != "mcp.session.id"}
                if error is not None:
                    measured["error.type"] = error
                self._duration.record(time.perf_counter() - started, measured)
