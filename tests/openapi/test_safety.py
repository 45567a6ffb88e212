"""Safe by construction (issue 49, item 3), each property against the real API of api_app.py: no
argument changes the scheme, host or port of a request; path parameters are percent-encoded whole;
a redirect to another host is refused; CR/LF in a header is refused; an answer is read up to a bound."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app import ToolError
from mcp_bindings.runtime.app.openapi import Api

pytestmark = pytest.mark.anyio

HOSTILE = ["../admin", "..", ".", "a/b?c=d#e", "//evil.example:8080/x", "http://evil.example/", "%2e%2e", "@evil"]


async def _call(package: ModuleType, tool: str, arguments: dict[str, Any]) -> Any:
    async with package.app.test_client("2025-11-25") as client:
        return await client.call_tool(name=tool, arguments=arguments)


@pytest.mark.parametrize("value", HOSTILE)
async def test_a_path_parameter_stays_in_its_segment(served: tuple[str, ModuleType], value: str) -> None:
    _, package = served
    result = await _call(package, "echo_path", {"value": value})
    assert result.is_error is not True, result.content[0].text
    raw = result.structured_content["raw_path"]
    assert raw.startswith("/echo/") and "/" not in raw[len("/echo/") :] and "?" not in raw
    assert result.structured_content["value"] in (value, value.replace("%2e", "."))  # the server reads it back whole


@pytest.mark.parametrize("value", HOSTILE)
def test_no_argument_changes_the_scheme_host_or_port(served: tuple[str, ModuleType], value: str) -> None:
    url, package = served
    base = httpx.URL(url)
    for op in (package.operations.echo_path, package.operations.get_item):
        arguments = {"value": value, "item_id": value, "currency": value, "x-trace": "t"}
        request = package.server.api.request(op, arguments)
        assert (request.url.scheme, request.url.host, request.url.port) == (base.scheme, base.host, base.port)
        built = httpx.Client().build_request("GET", request.url, params=request.query)
        assert (built.url.scheme, built.url.host, built.url.port) == (base.scheme, base.host, base.port)


async def test_a_redirect_to_another_host_is_refused(served: tuple[str, ModuleType]) -> None:
    url, package = served
    assert httpx.get(f"{url}/away").headers["location"] == "http://elsewhere.invalid/steal"
    result = await _call(package, "away", {})
    assert result.is_error is True
    assert result.content[0].text == "GET /away: the API redirected to another host (elsewhere.invalid); refused"
    result = await _call(package, "home", {})  # a redirect on the same host is followed
    assert result.is_error is not True and json.loads(result.content[0].text)["id"] == 1


@pytest.mark.parametrize("value", ["t\r\nX-Injected: 1", "t\nSet-Cookie: a=b", "t\x00"])
async def test_cr_lf_in_a_header_is_refused(served: tuple[str, ModuleType], value: str) -> None:
    _, package = served
    result = await _call(package, "get_item", {"item_id": 1, "x-trace": value})
    assert result.is_error is True
    assert result.content[0].text == "header 'x-trace': a value holding CR, LF or NUL is refused"


async def test_a_credential_with_cr_lf_is_refused(served: tuple[str, ModuleType]) -> None:
    url, package = served
    api = Api(url, package.operations.SCHEMES, environ={"INVENTORY_HTTP_BEARER_TOKEN": "x\r\nHost: evil"})
    with pytest.raises(ToolError, match="INVENTORY_HTTP_BEARER_TOKEN': a value holding CR, LF or NUL"):
        await api.call(package.operations.create_item, {"body": {"name": "a", "price": 1}})


async def test_the_answer_is_read_up_to_a_bound(served: tuple[str, ModuleType]) -> None:
    url, package = served
    size = len(httpx.get(f"{url}/big").content)
    assert size > 200_000
    bounded = Api(url, max_response_bytes=100_000)
    with pytest.raises(ToolError) as refused:
        await bounded.call(package.operations.big, {})
    assert str(refused.value) == "GET /big: the answer is larger than 100000 bytes; refused"
    assert (await Api(url, max_response_bytes=size).call(package.operations.big, {}))["blob"]  # at the bound: read
