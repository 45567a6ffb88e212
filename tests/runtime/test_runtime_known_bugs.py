"""Minimal in-memory reproductions of runtime bugs found by the process tests, kept as regression
tests once fixed (an open one is `xfail(strict=True)`)."""

from __future__ import annotations

import importlib
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from tests.peers.harness import HANDSHAKE_VERSIONS

pytestmark = pytest.mark.anyio


def _package(version: str) -> str:
    return f"mcp_bindings.{registry.info(version).package}"


def subscribing_server(version: str) -> Any:
    server_module = importlib.import_module(f"{_package(version)}.server")
    m = importlib.import_module(f"{_package(version)}.models")

    class Subscribing(server_module.Server):  # type: ignore[misc, name-defined]
        declared_capabilities = {"resources": {"subscribe": True}}

        async def list_resources(self, params: Any, ctx: Any) -> Any:
            return m.ListResourcesResult(resources=[])

        async def read_resource(self, params: Any, ctx: Any) -> Any:
            raise McpError(-32002, "Resource not found")

        async def subscribe_resource(self, params: Any, ctx: Any) -> Any:
            return {}  # the stub's annotation, m.EmptyResult, is a type alias and cannot be called

        async def unsubscribe_resource(self, params: Any, ctx: Any) -> Any:
            return m.Result()

    return Subscribing()


# Regression: subscribe/unsubscribe answer an empty result at the server stub's own version (the
# generated tables name the Result model, not the EmptyResult alias).
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_subscribe_at_the_stubs_own_version(version: str) -> None:
    client_cls = importlib.import_module(f"{_package(version)}.client").Client
    with anyio.fail_after(10):
        async with connect_in_memory(subscribing_server(version), client_cls) as client:
            await client.subscribe_resource(uri="test://x")
            await client.unsubscribe_resource(uri="test://x")


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_subscribe_across_versions_works(version: str) -> None:
    """The same server, reached by a client of another version, is fine (the control case)."""
    other = "2024-11-05" if version != "2024-11-05" else "2025-11-25"
    client_cls = importlib.import_module(f"{_package(other)}.client").Client
    with anyio.fail_after(10):
        async with connect_in_memory(subscribing_server(version), client_cls) as client:
            await client.subscribe_resource(uri="test://x")
            await client.unsubscribe_resource(uri="test://x")
