"""Client handlers made from plain callables, for `App.test_client` (any protocol version)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pydantic import BaseModel

from mcp_bindings.runtime.client.stub import ClientHandlerStub
from mcp_bindings.runtime.protocol import registry, versions

__all__ = ["client_handlers"]


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    return await value if inspect.isawaitable(value) else value


def _elicit_result(value: Any) -> dict[str, Any]:
    """None declines; a dict with "action" is the result; a dict or model of content accepts; a single
    value accepts a single-value form (`ctx.elicit(message, bool)`)."""
    if value is None:
        return {"action": "decline"}
    if isinstance(value, BaseModel):
        value = versions.dump(value)
    if not isinstance(value, Mapping):
        return {"action": "accept", "content": {"value": value}}
    data = dict(cast("Mapping[str, Any]", value))
    return data if "action" in data else {"action": "accept", "content": data}


def _sample_result(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"role": "assistant", "content": {"type": "text", "text": value}, "model": "test-client"}
    return dict(cast("Mapping[str, Any]", versions.dump(value)))


def _notification_handler(method: str, callback: Callable[[str, Any], Any]) -> Any:
    async def handler(self: Any, params: Any, ctx: Any) -> None:
        await _call(callback, method, versions.dump(params) if params is not None else None)

    return handler


def client_handlers(
    version: str,
    *,
    elicit: Callable[[str, dict[str, Any]], Any] | None = None,
    sample: Callable[[dict[str, Any]], Any] | None = None,
    roots: Sequence[str | Mapping[str, Any]] | None = None,
    on_log: Callable[[dict[str, Any]], Any] | None = None,
    on_notification: Callable[[str, Any], Any] | None = None,
) -> ClientHandlerStub:
    """An instance of `version`'s generated `ClientHandlers` answering with the given callables
    (what it overrides is what the client declares)."""
    package = registry.load_version(version).__name__
    base: type[ClientHandlerStub] = importlib.import_module(f"{package}.client").ClientHandlers
    namespace: dict[str, Any] = {"__module__": __name__}
    if elicit is not None:
        answer = elicit

        async def elicit_handler(self: Any, params: Any, ctx: Any) -> Any:
            data: dict[str, Any] = versions.dump(params)
            return _elicit_result(await _call(answer, data.get("message", ""), data.get("requestedSchema") or {}))

        namespace["elicit"] = elicit_handler
    if sample is not None:
        model = sample

        async def create_message(self: Any, params: Any, ctx: Any) -> Any:
            return _sample_result(await _call(model, versions.dump(params)))

        namespace["create_message"] = create_message
    if roots is not None:
        listed = [{"uri": r} if isinstance(r, str) else dict(r) for r in roots]

        async def list_roots(self: Any, params: Any, ctx: Any) -> Any:
            return {"roots": listed}

        namespace["list_roots"] = list_roots
    if on_log is not None:
        logged = on_log

        async def on_logging_message(self: Any, params: Any, ctx: Any) -> None:
            await _call(logged, versions.dump(params))

        namespace["on_logging_message"] = on_logging_message
    if on_notification is not None:
        for spec in base.protocol.server_notifications.values():
            if spec.builtin or spec.handler in namespace or not hasattr(base, spec.handler):
                continue
            namespace[spec.handler] = _notification_handler(spec.method, on_notification)
    cls = type("TestClientHandlers", (base,), namespace)
    return cls()
