"""OpenTelemetry tracing and metrics as middleware (issue 32, item 2): a SERVER span per request
following the MCP semantic conventions (name, `mcp.*`, `gen_ai.tool.name`, `error.type`), its parent
the trace context the client put in `_meta`, and the `mcp.server.operation.duration` histogram;
checked with the OpenTelemetry SDK's in-memory exporter and reader, at 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_bindings.runtime.app import App, ToolError
from mcp_bindings.runtime.middleware import Timing
from mcp_bindings.runtime.middleware.chain import recorded_uri
from mcp_bindings.runtime.rpc.errors import McpError

pytestmark = pytest.mark.anyio

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from mcp_bindings.runtime.middleware.tracing import Tracing  # noqa: E402

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_span_and_a_duration_per_request(version: str) -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    app = App("traced", middleware=[Tracing(tracer_provider, MeterProvider(metric_readers=[reader]))])

    @app.tool
    def weather(city: str) -> str:
        if city == "Atlantis":
            raise ToolError("no such city")
        return f"sunny in {city}"

    @app.resource("config://app")
    def config() -> str:
        return "debug=false"

    async with app.test_client(version) as client:
        await client.call_tool(name="weather", arguments={"city": "Oslo"}, meta={"traceparent": PARENT})
        await client.call_tool(name="weather", arguments={"city": "Atlantis"})
        await client.read_resource(uri="config://app")
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["tools/call weather", "tools/call weather", "resources/read config://app"]
    first, failed, read = spans
    assert first.kind is SpanKind.SERVER
    attributes: dict[str, Any] = dict(first.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call" and attributes["gen_ai.tool.name"] == "weather"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == version and attributes["mcp.session.id"]
    assert first.parent is not None and f"{first.parent.trace_id:032x}" == TRACE_ID  # from the client's _meta
    assert first.context is not None and f"{first.context.trace_id:032x}" == TRACE_ID
    assert failed.parent is None and (failed.attributes or {})["error.type"] == "tool_error"
    assert failed.status.status_code is StatusCode.ERROR
    assert (read.attributes or {})["mcp.resource.uri"] == "config://app"
    data = reader.get_metrics_data()
    assert data is not None
    metrics = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    (duration,) = [m for m in metrics if m.name == "mcp.server.operation.duration"]
    counts = {
        (p.attributes or {}).get("error.type", "ok"): getattr(p, "count", None)
        for p in duration.data.data_points
        if (p.attributes or {}).get("mcp.method.name") == "tools/call"
    }
    assert counts == {"ok": 1, "tool_error": 1}


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_client_chosen_names_and_uri_secrets_are_not_recorded(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 43, item 10: unknown tool and prompt names become `_OTHER` (before: a span name and a
    metric series each, 2,100 of them filled the SDK's 2,000-series limit), and a resource URI is
    recorded without its query, fragment and userinfo in span names, attributes, metrics and the
    `Timing` log line (before: `?token=...` in all four)."""
    exporter = InMemorySpanExporter()
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    tracing = Tracing(tracer_provider, MeterProvider(metric_readers=[reader]))
    app = App("traced", middleware=[Timing(), tracing])

    @app.tool
    def weather(city: str) -> str:
        return f"sunny in {city}"

    @app.prompt
    def greet() -> str:
        return "hello"

    @app.resource("files://{name}{?token}")
    def file(name: str, token: str = "") -> str:
        return name

    caplog.set_level(logging.INFO, logger="mcp_bindings.runtime.middleware")
    async with app.test_client(version) as client:
        for n in range(40):
            with pytest.raises(McpError):
                await client.call_tool(name=f"probe-{n}", arguments={})
            with pytest.raises(McpError):
                await client.get_prompt(name=f"probe-{n}")
        await client.call_tool(name="weather", arguments={"city": "Oslo"})
        await client.get_prompt(name="greet")
        await client.read_resource(uri="files://notes?token=s3cret")
        with pytest.raises(McpError):
            await client.read_resource(uri="https://user:s3cret@example.com/x?token=s3cret")
    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} == {
        "tools/call _OTHER",
        "tools/call weather",
        "prompts/get _OTHER",
        "prompts/get greet",
        "resources/read files://notes",
        "resources/read _OTHER",
    }
    recorded = [repr(s.name) + repr(dict(s.attributes or {})) + repr(s.events) + repr(s.status) for s in spans]
    data = reader.get_metrics_data()
    assert data is not None
    points: list[dict[str, Any]] = [
        dict(p.attributes or {})
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for p in m.data.data_points
    ]
    assert {p.get("gen_ai.tool.name") for p in points} == {None, "_OTHER", "weather"}
    assert {p.get("gen_ai.prompt.name") for p in points} == {None, "_OTHER", "greet"}
    assert {p.get("mcp.resource.uri") for p in points} == {None, "files://notes", "_OTHER"}
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_bindings.runtime.middleware"]
    assert any(line.startswith("resources/read files://notes: ") for line in lines), lines
    for text in [*recorded, repr(points), *lines]:
        assert "s3cret" not in text, text
    for text in [*recorded, repr(points)]:
        assert "probe-" not in text, text


def test_recorded_uri_drops_query_fragment_and_userinfo() -> None:
    assert recorded_uri("files://notes?token=s3cret#part") == "files://notes"
    assert recorded_uri("https://user:s3cret@example.com:8443/x?token=s3cret") == "https://example.com:8443/x"
    assert recorded_uri("config://app") == "config://app"
    assert recorded_uri("http://[::1?token=s3cret") == "http://[::1"  # urllib cannot split it: cut all the same
