"""Tracing learns the targets a server has from its list results (`names.LISTS`, `LISTED`,
`LIST_KEYS`: generated tables, no hand table of list methods): a prompt, resource or resource
template the server listed is recorded by name even where its request fails, while one it did not
list stays `_OTHER`; a listed URI is recorded without its query."""

from __future__ import annotations

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.rpc.errors import McpError

pytestmark = pytest.mark.anyio

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from mcp_bindings.runtime.middleware.tracing import Tracing  # noqa: E402


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_listed_targets_are_recorded_by_name_even_when_their_request_fails(version: str) -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = App("traced", middleware=[Tracing(tracer_provider)])

    @app.prompt
    def broken() -> str:
        raise RuntimeError("no prompt today")

    @app.resource("notes://today")
    def notes() -> str:
        raise RuntimeError("no notes today")

    @app.resource("files://{name}")
    def file(name: str) -> str:
        raise RuntimeError("no files today")

    async with app.test_client(version) as client:
        await client.list_prompts()
        await client.list_resources()
        await client.list_resource_templates()
        for ask in (
            lambda: client.get_prompt(name="broken"),
            lambda: client.get_prompt(name="unlisted"),
            lambda: client.read_resource(uri="notes://today"),
            lambda: client.read_resource(uri="files://a?token=s3cret"),
            lambda: client.read_resource(uri="other://x"),
        ):
            with pytest.raises(McpError):
                await ask()
    names = [s.name for s in exporter.get_finished_spans() if not s.name.endswith("list")]
    assert names == [
        "prompts/get broken",
        "prompts/get _OTHER",
        "resources/read notes://today",
        "resources/read files://{name}",
        "resources/read _OTHER",
    ]
