"""How an `App` answers: the handlers its server class calls (`serve_call_tool`, ...), each running
the registered function with its typed arguments and context, tasks and input rounds included. A
collaborator `App` holds (`app.core`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from mcp_bindings.ext.io_modelcontextprotocol_tasks.names import IDENTIFIER as TASKS_EXTENSION
from mcp_bindings.runtime.app.asks import Boundary, Replay, StartTask, Suspend
from mcp_bindings.runtime.app.context import Context
from mcp_bindings.runtime.app.dependencies import provide
from mcp_bindings.runtime.app.entries import (
    ResourceEntry,
    TemplateEntry,
    ToolEntry,
    completion,
    contents,
    messages,
)
from mcp_bindings.runtime.app.errors import AppDefinitionError, ResourceNotFound, ToolError
from mcp_bindings.runtime.app.lifespan import Lifetime
from mcp_bindings.runtime.app.signature import FunctionSignature
from mcp_bindings.runtime.protocol import registry, reshape, versions
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.custom_methods import peer_declares
from mcp_bindings.runtime.protocol.pagination import invalid_cursor, paginate
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.tasks.api import run_as_task
from mcp_bindings.runtime.tasks.server.context import TaskContext
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.core import App

__all__ = ["START_TASK", "Serving"]

log = logging.getLogger("mcp_bindings.runtime.app")

START_TASK = object()  # what `_call_tool` returns where the function reached `ctx.start_task()`


def _task_later(ctx: RequestContext) -> bool:
    """Whether a call that asks for input first becomes a task at `ctx.start_task()`: a stateless
    (2026-07-28) request whose client capabilities declare the tasks extension."""
    return registry.info(ctx.protocol_version).stateless and peer_declares(ctx.peer_capabilities, TASKS_EXTENSION)


def _input_required(context: Context | None) -> Any:
    if context is None:  # pragma: no cover - only a Context asks
        raise McpError(INVALID_PARAMS, "input was asked for outside an input round")
    return context.input_required()


def _suspended(group: BaseExceptionGroup[BaseException], context: Context | None) -> Any:
    """Asks made concurrently (a task group) suspend the handler together."""
    suspended, rest = group.split(Suspend)
    if suspended is None or rest is not None:
        raise group
    return _input_required(context)


async def _release(stack: AsyncExitStack, failure: BaseException | None) -> None:
    """Close a tool's dependencies, telling them how the call ended: a failure is thrown into each
    yield dependency (so that it can roll back), as leaving a `with` block by an exception would."""
    if failure is None:
        await stack.aclose()
    else:
        await stack.__aexit__(type(failure), failure, failure.__traceback__)


class Serving:
    """The handlers of an `App`'s server class, over what the app registered: a collaborator the
    app holds (`app._serving`), whose server class calls it."""

    def __init__(self, app: App, pkg: Any, lifetime: Lifetime) -> None:
        self.app, self.registries, self.protocol = app, app.registries, app.protocol
        self.pkg = pkg  # the version package whose models the answers are
        self.lifetime = lifetime
        self.not_found = app.protocol.error_codes.resource_not_found or INVALID_PARAMS
        call = app.protocol.client_requests[v2026.TOOLS_CALL]
        self.call_result: Callable[[Any], Any] = reshape.shaped(call.result, app.protocol_version)
        self.input_required = {m for m, s in app.protocol.client_requests.items() if s.input_required}

    def page(self, kind: str, params: Any) -> tuple[list[Any], str | None]:
        cursor = getattr(params, "cursor", None) if params is not None else None
        items = self.registries.listed(kind)
        if self.app.page_size is None:
            if cursor is not None:
                raise invalid_cursor(cursor)
            return items, None
        return paginate(items, cursor, self.app.page_size, scope=kind)

    def _context(
        self,
        sig: FunctionSignature,
        ctx: RequestContext,
        method: str,
        params: Any,
        boundary: Boundary = None,
        lifetime: Lifetime | None = None,
    ) -> Context | None:
        """The function's `Context` (None where it takes none)."""
        if not sig.needs_context:
            return None
        replay = None
        # A task's work asks the client through the task (`inputRequests`), not by replaying rounds;
        # except the asks its call made before `ctx.start_task()`, answered again from the record.
        in_task = isinstance(ctx, TaskContext) and boundary != "pass"
        if method in self.input_required and registry.info(ctx.protocol_version).stateless and not in_task:
            replay = Replay(
                self.protocol, getattr(params, "request_state", None), getattr(params, "input_responses", None)
            )
        return Context(ctx, self.protocol, method, replay, boundary, _lifespan=(lifetime or self.lifetime).value)

    def _unexpected(self, name: str, exc: Exception) -> str:
        """What the client (and the model) is told of an exception a tool did not mean to raise:
        that the tool failed; its type and message only with `App(error_details=True)`, or when it
        is the runtime's own word on a mistake in the app (`AppDefinitionError`: no data in it)."""
        if self.app.error_details or isinstance(exc, AppDefinitionError):
            return f"Error executing tool {name}: {type(exc).__name__}: {exc}"
        return f"Error executing tool {name} (an unexpected error; the server's log has the details)"

    async def _run(
        self, sig: FunctionSignature, kwargs: dict[str, Any], context: Context | None, lifetime: Lifetime | None
    ) -> tuple[Any, Any]:
        """(the function's value, None), or (None, the input round) where it asked for input that the
        request has no answer to yet (a stateless request's asks, `app.asks`)."""
        if context is not None and sig.context is not None:
            kwargs[sig.context] = context
        try:
            async with AsyncExitStack() as stack:
                if sig.dependencies:
                    kwargs.update(await provide(sig.dependencies, context, stack, lifetime or self.lifetime))
                value = sig.fn(**kwargs)
                value = await value if sig.is_async else value
        except Suspend:
            return None, _input_required(context)
        except BaseExceptionGroup as group:
            return None, _suspended(group, context)
        if context is not None and context.suspended:
            return None, context.input_required()
        return value, None

    async def serve_call_tool(self, params: Any, ctx: RequestContext) -> Any:
        entry = self.registries.tools.get(params.name)
        if entry is None or not entry.enabled:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}", {"name": params.name})
        arguments = params.arguments
        try:
            kwargs = entry.arguments(arguments if arguments is not None else {})
        except ValidationError as exc:
            return self.call_result(entry.invalid(exc))
        if entry.task is None:
            return await self._call_tool(entry, kwargs, params, ctx)
        required = entry.task == "required"
        if entry.input_first and _task_later(ctx):
            # 2026-07-28, a client with the tasks extension: the asks before `ctx.start_task()` are
            # input rounds of the call; there the task starts and runs the function from the top.
            first = await self._call_tool(entry, dict(kwargs), params, ctx, "unwind")
            if first is not START_TASK:
                return first
            return await run_as_task(
                ctx, lambda task_ctx: self._call_tool(entry, kwargs, params, task_ctx, "pass"), required=required
            )
        # A task where the client asked for one (2025-11-25: a task-augmented call; 2026-07-28: the
        # tasks extension declared), run by the runtime's task service; otherwise the call at once.
        boundary: Boundary = "stay" if entry.input_first else None
        return await run_as_task(
            ctx, lambda task_ctx: self._call_tool(entry, kwargs, params, task_ctx, boundary), required=required
        )

    async def _call_tool(
        self, entry: ToolEntry, kwargs: dict[str, Any], params: Any, ctx: RequestContext, boundary: Boundary = None
    ) -> Any:
        """The tool's result (or an input round); `START_TASK` where it unwound at `ctx.start_task()`."""
        sig = entry.sig
        target = sig.context
        lifetime: Lifetime = entry.lifetime or self.lifetime
        context = self._context(sig, ctx, v2026.TOOLS_CALL, params, boundary, lifetime)
        stack = AsyncExitStack() if sig.dependencies else None
        failure: BaseException | None = None  # what the dependencies' clean-up is told (None: success)
        # The order of the except clauses is load-bearing. `Suspend` and `StartTask` are control flow,
        # not failures: BaseExceptions (app/asks.py), so that no `except Exception`, the tool's own
        # or the one here, takes them for an error. `ToolError` and `McpError` are Exceptions: they
        # must come before `except Exception`. And `except Exception` must come before `except
        # BaseExceptionGroup`: a group of Exceptions is an ExceptionGroup, hence an Exception (the tool
        # failed), while a group that is only a BaseExceptionGroup holds a BaseException, e.g. the
        # `Suspend`s of asks made concurrently, for `_suspended`.
        try:
            if target is not None:
                kwargs[target] = context
            if stack is not None:  # the dependencies' clean-up runs once the call has its answer
                await stack.__aenter__()
                kwargs.update(await provide(sig.dependencies, context, stack, lifetime))
            value = sig.fn(**kwargs)
            if sig.is_async:
                value = await value
        except ToolError as exc:  # expected: one line, no traceback (any other exception: with it)
            failure = exc
            log.info("tool %r answered an error: %s", entry.name, exc)
            return self.call_result(entry.error(str(exc)))
        except McpError as exc:
            failure = exc
            raise
        except Suspend:
            return _input_required(context)
        except StartTask:
            return START_TASK
        except Exception as exc:  # an ExceptionGroup too (a Suspend makes a BaseExceptionGroup: below)
            failure = exc
            log.exception("tool %r failed", entry.name)
            return self.call_result(entry.error(self._unexpected(entry.name, exc)))
        except BaseExceptionGroup as group:
            return _suspended(group, context)
        except BaseException as exc:  # cancelled: the dependencies are told, as a `with` block would be
            failure = exc
            raise
        finally:
            if stack is not None:
                await _release(stack, failure)
        if context is not None and context.suspended:
            return context.input_required()
        try:
            return self.call_result(entry.content(value))
        except McpError as exc:  # the tool returned what its annotation does not allow: a bug to see here
            log.error("%s", exc.message)
            raise

    async def serve_read_resource(self, params: Any, ctx: RequestContext) -> Any:
        uri: str = params.uri
        entry: ResourceEntry | TemplateEntry | None = self.registries.resources.get(uri)
        kwargs: dict[str, Any] = {}
        if entry is not None and not entry.enabled:
            raise McpError(self.not_found, f"Resource not found: {uri}", {"uri": uri})
        if entry is None:
            for template in self.registries.templates.values():
                if not template.enabled:
                    continue
                values = template.template.match(uri)
                if values is not None:
                    entry, kwargs = template, template.arguments(uri, values)
                    break
            else:
                raise McpError(self.not_found, f"Resource not found: {uri}", {"uri": uri})
        sig = entry.sig
        context = self._context(sig, ctx, v2026.RESOURCES_READ, params, None, entry.lifetime)
        try:
            value, asking = await self._run(sig, kwargs, context, entry.lifetime)
        except ResourceNotFound as exc:
            raise McpError(self.not_found, exc.message, exc.data) from None
        if asking is not None:
            return asking
        return self.pkg.ReadResourceResult.model_validate({"contents": contents(uri, value, entry.mime_type)})

    async def serve_get_prompt(self, params: Any, ctx: RequestContext) -> Any:
        entry = self.registries.prompts.get(params.name)
        if entry is None or not entry.enabled:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}", {"name": params.name})
        kwargs = entry.arguments(params.arguments)
        sig = entry.sig
        context = self._context(sig, ctx, v2026.PROMPTS_GET, params, None, entry.lifetime)
        value, asking = await self._run(sig, kwargs, context, entry.lifetime)
        if asking is not None:
            return asking
        if isinstance(value, BaseModel) and "messages" in type(value).model_fields:
            return value  # a GetPromptResult
        result: dict[str, Any] = {"messages": messages(value)}
        if entry.definition.description is not None:
            result["description"] = entry.definition.description
        return self.pkg.GetPromptResult.model_validate(result)

    async def serve_complete(self, params: Any, ctx: RequestContext) -> Any:
        data: dict[str, Any] = versions.dump(params)
        ref: dict[str, Any] = data.get("ref") or {}
        argument: dict[str, Any] = data.get("argument") or {}
        if ref.get("type") == "ref/prompt":
            key = ("prompt", str(ref.get("name")), str(argument.get("name")))
        else:
            key = ("template", str(ref.get("uri")), str(argument.get("name")))
        completer = self.registries.completers.get(key)
        if completer is None and self.app.remote is not None:  # a proxy: the remote's completion, as it answered
            return await self.app.remote.forward(
                v2026.COMPLETION_COMPLETE, data, Context(ctx, self.protocol, v2026.COMPLETION_COMPLETE, None)
            )
        values: Any = []
        if completer is not None:
            extra: dict[str, Any] = data.get("context") or {}
            given: dict[str, str] = extra.get("arguments") or {}
            kwargs = completer.kwargs(str(argument.get("value", "")), given)
            if completer.context is not None:
                kwargs[completer.context] = Context(ctx, self.protocol, v2026.COMPLETION_COMPLETE, None)
            values = completer.fn(**kwargs)
            if completer.is_async:
                values = await values
        return self.pkg.CompleteResult.model_validate(completion(values))
