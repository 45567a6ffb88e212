"""What a proxy `App` (`app.proxy`) registers for each tool, prompt, resource and resource template
the remote server lists: entries of the authoring layer's tables (so that the app serves, pages,
enables, mounts and checks them as its own) whose function forwards the request to the remote and
whose result is the remote's, passed through as it came (content, structuredContent, isError)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from typing import Any

from mcp_bindings.runtime.app.context import Context
from mcp_bindings.runtime.app.entries import Entry, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry
from mcp_bindings.runtime.app.signature import FunctionSignature, analyse
from mcp_bindings.runtime.app.uri_template import Template
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["RemotePrompt", "RemoteResource", "RemoteTemplate", "RemoteTool"]

# forward(method, params, ctx) -> the remote's result (the app's version's model)
Forward = Callable[[str, dict[str, Any], Context[Any]], Awaitable[Any]]


async def _with_arguments(arguments: dict[str, Any], ctx: Context[Any]) -> Any:  # pragma: no cover - a signature
    raise NotImplementedError


async def _with_uri(uri: str, ctx: Context[Any]) -> Any:  # pragma: no cover - a signature
    raise NotImplementedError


async def _plain(ctx: Context[Any]) -> Any:  # pragma: no cover - a signature
    raise NotImplementedError


@cache
def _signature(kind: str) -> FunctionSignature:
    """The signature every remote entry of a kind shares (analysed once; each entry replaces `fn`)."""
    fn = {"arguments": _with_arguments, "uri": _with_uri, "plain": _plain}[kind]
    return analyse(fn, f"the proxy's {kind} forwarder", model_name=f"Proxy{kind.capitalize()}Arguments")


def _bound(kind: str, fn: Callable[..., Awaitable[Any]]) -> FunctionSignature:
    return dataclasses.replace(_signature(kind), fn=fn)


def _forwarding(forward: Forward, method: str, name: str) -> Callable[..., Awaitable[Any]]:
    """What a remote tool or prompt runs: its request, with the arguments as given, to the remote."""

    async def call(arguments: dict[str, Any], ctx: Context[Any]) -> Any:
        return await forward(method, {"name": name, "arguments": arguments}, ctx)

    return call


async def _read(forward: Forward, uri: str, ctx: Context[Any]) -> Any:
    return (await forward(v2026.RESOURCES_READ, {"uri": uri}, ctx)).contents


class RemoteTool(ToolEntry):
    """A remote tool: its arguments go to the remote as they are, its result comes back as it is."""

    __slots__ = ()

    def __init__(self, definition: Any, forward: Forward) -> None:
        Entry.__init__(self)
        self.name, self.definition = definition.name, definition
        self.fn = _forwarding(forward, v2026.TOOLS_CALL, self.name)
        self.sig = _bound("arguments", self.fn)
        self.arguments = _as_given
        self.output, self.wrap, self.result = "content", False, None
        schema = getattr(definition, "output_schema", None)
        self.output_schema = versions.dump(schema) if schema is not None else None
        self.task, self.input_first, self.scopes = None, False, ()

    def content(self, value: Any) -> dict[str, Any]:
        """The remote's CallToolResult, as it came (crossed into the app's version by the client),
        but for its result type, which the runtime writes for each client's version."""
        data: dict[str, Any] = versions.dump(value)
        data.pop("resultType", None)
        return data


def _as_given(arguments: Any) -> dict[str, Any]:
    return {"arguments": dict(arguments or {})}


class RemotePrompt(PromptEntry):
    __slots__ = ()

    def __init__(self, definition: Any, forward: Forward) -> None:
        Entry.__init__(self)
        self.name, self.definition = definition.name, definition
        self.sig = _bound("arguments", _forwarding(forward, v2026.PROMPTS_GET, self.name))

    def arguments(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        return _as_given(given)


class RemoteResource(ResourceEntry):
    __slots__ = ()

    def __init__(self, definition: Any, forward: Forward) -> None:
        Entry.__init__(self)
        self.uri, self.definition, self.mime_type = definition.uri, definition, getattr(definition, "mime_type", None)
        self.sig = _bound("plain", functools.partial(_read, forward, self.uri))


class RemoteTemplate(TemplateEntry):
    """A remote resource template: a URI it matches is read from the remote (the remote's own URI
    where the app is mounted under a namespace: the template's values put into the remote's)."""

    __slots__ = ("remote",)

    def __init__(self, definition: Any, forward: Forward) -> None:
        Entry.__init__(self)
        self.remote = Template(definition.uri_template)  # TemplateError for one this runtime cannot match
        self.template, self.definition = self.remote, definition
        self.mime_type = getattr(definition, "mime_type", None)
        self.sig = _bound("uri", functools.partial(_read, forward))

    def arguments(self, uri: str, values: dict[str, Any]) -> dict[str, Any]:
        if self.template.template == self.remote.template:
            return {"uri": uri}
        return {"uri": self.remote.expand(values)}  # mounted: the remote's URI for the same values
