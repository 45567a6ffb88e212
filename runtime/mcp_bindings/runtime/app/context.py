"""The typed `Context` of the authoring layer: logging, progress, and asking the client (elicitation,
sampling, roots) with one code path for every protocol version.

For a client of a handshake version (2024-11-05 .. 2025-11-25) an ask is a real request on the
connection (`RequestContext.request`). A stateless request (2026-07-28) cannot carry requests to
its client: there the ask rides a multi-round-trip request, by deterministic replay (`app.asks`:
what that asks of a handler). Elicitation forms are built and checked in `app.forms`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Self, TypeAlias, TypeVar, Union, cast, overload

import orjson
from pydantic import BaseModel, ValidationError
from typing_extensions import TypeVar as DefaultedTypeVar

from mcp_bindings.runtime.app.asks import Boundary, Replay, StartTask, Suspend, ask_digest
from mcp_bindings.runtime.app.content import Message
from mcp_bindings.runtime.app.errors import MissingClientCapability, first_error
from mcp_bindings.runtime.app.forms import ELICIT, form_of
from mcp_bindings.runtime.app.lifespan import started_value
from mcp_bindings.runtime.app.progress import Progress
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.context import RequestContext, SessionContext
from mcp_bindings.runtime.protocol.principal import Principal, principal_of
from mcp_bindings.runtime.protocol.spec import Capability, ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError, NotExpressible
from mcp_bindings.runtime.tasks.server.context import TaskContext
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = [
    "Accepted",
    "Cancelled",
    "Context",
    "Declined",
    "Elicited",
    "LogLevel",
    "Root",
    "Sampled",
]

log = logging.getLogger("mcp_bindings.runtime.app")

T = TypeVar("T")
L = DefaultedTypeVar("L", default=Any)  # the app's lifespan value (`App(lifespan=...)`)
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

SAMPLE = v2026.SAMPLING_CREATE_MESSAGE
ROOTS = v2026.ROOTS_LIST
ELICITATION_COMPLETE = v2025.NOTIFICATIONS_ELICITATION_COMPLETE


@dataclass(frozen=True, slots=True)
class Accepted(Generic[T]):
    """The user accepted an elicitation; `data` is their answer, validated as the schema's model."""

    data: T
    action: Literal["accept"] = "accept"


@dataclass(frozen=True, slots=True)
class Declined:
    """The user explicitly declined the elicitation."""

    action: Literal["decline"] = "decline"


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The user dismissed the elicitation without choosing."""

    action: Literal["cancel"] = "cancel"


Elicited: TypeAlias = Union[Accepted[T], Declined, Cancelled]  # noqa: UP007 - a generic alias: Elicited[Model]


@dataclass(frozen=True, slots=True)
class Sampled:
    """What the client's model answered: `text` (its text, None for other content), the content
    block(s) as wire JSON, the model name and why it stopped; `result` is the whole answer as the
    app's stub version's typed `CreateMessageResult` (e.g. `v2025_11_25.models.CreateMessageResult`)."""

    text: str | None
    content: Any
    model: str
    stop_reason: str | None
    role: str = "assistant"
    result: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Root:
    """One of the client's roots; `model` is it as the app's stub version's typed `Root`."""

    uri: str
    name: str | None = None
    model: Any = field(default=None, compare=False, repr=False)


class _Raw(Generic[T]):
    """An attribute of the request context (`ctx.raw`), read through: `ctx.request_id`."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, context: None, owner: type) -> Self: ...
    @overload
    def __get__(self, context: Context[Any], owner: type) -> T: ...
    def __get__(self, context: Context[Any] | None, owner: type) -> Self | T:
        return self if context is None else getattr(context.raw, self.name)


@dataclass(slots=True, eq=False)
class Context(Generic[L]):
    """What a tool, resource, prompt or completion function gets by annotating a parameter with
    `Context`: the client's identity and capabilities, logging, progress, and asks to the client
    that work the same on every protocol version. `Context[State]`: `ctx.lifespan` is the value of
    the app's lifespan (`App(lifespan=...)`), typed `State`. `raw`: the runtime's request context
    (`ctx.raw.request(...)` in the stub version's terms)."""

    raw: RequestContext
    _stub: ProtocolTables
    _method: str
    _replay: Replay | None
    _boundary: Boundary = None
    _lifespan: Any = field(default=None, kw_only=True)
    _stateless: bool = field(init=False)

    request_id = _Raw[str | int]("request_id")
    protocol_version = _Raw[str]("protocol_version")  # the client's
    session = _Raw[SessionContext]("session")  # the client: `id`, `client_info`, a per-client `state` dict, ...
    client_capabilities = _Raw[dict[str, Any]]("peer_capabilities")

    def __post_init__(self) -> None:
        self._stateless = registry.info(self.raw.protocol_version).stateless

    @property
    def lifespan(self) -> L:
        """What the app's lifespan yielded (`App(lifespan=...)`; None without one)."""
        return cast("L", started_value(self._lifespan))

    # -- who is asking ------------------------------------------------------------------------

    @property
    def principal(self) -> Principal | None:
        """Who the HTTP bearer token speaks for (`App(auth=...)`), typed: issuer, subject, client id,
        scopes, expiry and the verified claims (`protocol.principal.Principal`; `.key` is the one
        string it was before, what sessions and tasks are bound to); None without auth."""
        return principal_of(getattr(self.raw, "principal", None))

    @property
    def suspended(self) -> bool:
        """Whether the handler asked (on a stateless request) for input it has no answer to yet."""
        return self._replay is not None and bool(self._replay.pending)

    def input_required(self) -> Any:
        """The InputRequiredResult that asks the client for this run's unanswered asks."""
        if self._replay is None:  # pragma: no cover - only a replaying context suspends
            raise McpError(INTERNAL_ERROR, "Internal error: input was asked for outside an input round")
        return self._replay.input_required()

    # -- telling ------------------------------------------------------------------------------

    @property
    def _replaying(self) -> bool:
        return self._replay is not None and self._replay.replaying

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """`notifications/message`, where the client's log level lets it through."""
        if not self._replaying:
            await self.raw.log(level, data, logger)

    async def debug(self, message: str) -> None:
        await self.log("debug", message)

    async def info(self, message: str) -> None:
        await self.log("info", message)

    async def warning(self, message: str) -> None:
        await self.log("warning", message)

    async def error(self, message: str) -> None:
        await self.log("error", message)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """`notifications/progress`, if the request asked for progress (else nothing)."""
        if not self._replaying:
            await self.raw.report_progress(progress, total, message)

    def progress(self, total: float | None = None) -> Progress:
        """This request's progress as a counter (`mcp_bindings.runtime.app.progress`):
        `await progress.advance(message=...)` per step, each one reported like `report_progress`."""
        return Progress(self.report_progress, total)

    # -- becoming a task ----------------------------------------------------------------------

    async def start_task(self) -> None:
        """For a tool declared `@app.tool(task=..., input_first=True)`: the asks before this are
        the call's own (input rounds at 2026-07-28), and the rest of the function runs as the task
        (whose asks go through its `inputRequests`). At 2026-07-28, for a client that declared the
        tasks extension, the call is answered here with the task; the task runs the function again
        from the top, its asks up to here answered from the record (so the code before this line
        runs once more, as on each input round). Elsewhere nothing happens here: the call is a task
        from its start (2025-11-25), or its work runs at once."""
        if self._boundary is None:
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: ctx.start_task() was called by a {self._method} handler that was not declared "
                "with @app.tool(task=..., input_first=True)",
            )
        if self._boundary == "unwind":
            if self.suspended:  # asks started together with this one still wait for their round
                raise Suspend
            raise StartTask
        if self._boundary == "pass":
            self._replay, self._boundary = None, "stay"  # asks from here on are the task's own

    # -- asking -------------------------------------------------------------------------------

    @property
    def can_elicit(self) -> bool:
        """Whether `elicit` can reach this client (its version and declared capabilities)."""
        return self._refusal(ELICIT, None) is None

    @property
    def can_sample(self) -> bool:
        return self._refusal(SAMPLE, None) is None

    @property
    def can_list_roots(self) -> bool:
        return self._refusal(ROOTS, None) is None

    @overload
    async def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> Elicited[T]: ...

    @overload
    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited[dict[str, Any]]: ...

    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Elicited[Any]:
        """Ask the user to fill in `schema`: a pydantic model of flat primitive fields, a single
        `bool`, `int`, `float`, `str` or `Enum` value, or a `requestedSchema` written as JSON (a dict;
        the answer is then the content dict). Returns `Accepted(data)` with the answer validated as
        `schema`, `Declined()` or `Cancelled()`. `key` names the ask in a 2026-07-28 `inputRequests`
        (default `ask<n>`)."""
        form = form_of(self._stub, schema)
        answer = await self._ask(ELICIT, {"message": message, "requestedSchema": form.schema}, key)
        action = answer.get("action")
        if action == "accept":
            if form.model is None:
                return Accepted(dict(answer.get("content") or {}))
            try:
                # As JSON, strictly: the answer must be what the form asked for ("yes" is no boolean).
                data: Any = form.model.model_validate_json(orjson.dumps(answer.get("content") or {}), strict=True)
            except ValidationError as exc:
                fit = getattr(schema, "__name__", schema)
                raise McpError(
                    INVALID_PARAMS, f"the client's elicitation answer does not fit {fit}: {first_error(exc)}"
                ) from None
            return Accepted(data.value if form.wrapped else data)
        return Declined() if action == "decline" else Cancelled()

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None, key: str | None = None
    ) -> Elicited[None]:
        """URL-mode elicitation (MCP 2025-11-25 on; the client must declare `elicitation.url`): ask
        the user to open `url` (for what must not pass through the client: credentials, payments).
        Returns `Accepted(None)` once the user agreed to open it, `Declined()` or `Cancelled()`; tell
        the client when the out-of-band interaction is done with `elicitation_complete(id)`.
        `elicitation_id` defaults to one derived from the message and URL (stable across the rounds
        of a 2026-07-28 request)."""
        if elicitation_id is None:
            elicitation_id = ask_digest("url", [message, url])
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        answer = await self._ask(ELICIT, params, key)
        action = answer.get("action")
        return Accepted(None) if action == "accept" else Declined() if action == "decline" else Cancelled()

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """`notifications/elicitation/complete`: the URL-mode elicitation `elicitation_id` is done."""
        if not self._replaying:
            await self.raw.notify(ELICITATION_COMPLETE, {"elicitationId": elicitation_id})

    async def sample(
        self,
        messages: str | Message | Sequence[str | Message],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        tool_choice: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> Sampled:
        """Ask the client's model (`sampling/createMessage`): a prompt, or messages (strings are
        user messages). `tools` (Tool definitions as JSON or the stub's models) and `tool_choice`
        (`{"mode": "auto" | "required" | "none"}`) let the model call tools (MCP 2025-11-25 on; the
        client must declare `sampling.tools`): its tool calls are in `Sampled.content`, and
        `stop_reason` is "toolUse"."""
        items = [messages] if isinstance(messages, str | Message) else list(messages)
        params: dict[str, Any] = {
            "messages": [(m if isinstance(m, Message) else Message("user", m)).to_json() for m in items],
            "maxTokens": max_tokens,
        }
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
            "modelPreferences": dict(model_preferences) if model_preferences is not None else None,
            "metadata": dict(metadata) if metadata is not None else None,
            "tools": [versions.dump(t) if isinstance(t, BaseModel) else dict(t) for t in tools] if tools else None,
            "toolChoice": dict(tool_choice) if tool_choice is not None else None,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        answer, typed = await self._ask_typed(SAMPLE, params, key)
        content = answer.get("content")
        blocks: list[Any] = cast("list[Any]", content) if isinstance(content, list) else [content]
        text: str | None = None
        for block in blocks:
            if isinstance(block, dict) and cast("dict[str, Any]", block).get("type") == "text":
                text = str(cast("dict[str, Any]", block).get("text", ""))
                break
        stop = answer.get("stopReason")
        return Sampled(text, content, str(answer.get("model", "")), stop, str(answer.get("role", "assistant")), typed)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (`roots/list`)."""
        answer, typed = await self._ask_typed(ROOTS, None, key)
        models: list[Any] = list(getattr(typed, "roots", None) or [None] * len(answer.get("roots", [])))
        return [Root(r["uri"], r.get("name"), model) for r, model in zip(answer.get("roots", []), models, strict=True)]

    def _refusal(self, method: str, params: Any) -> NotExpressible | None:
        """Why `method` cannot be asked of this client now (None: it can)."""
        version = self.raw.protocol_version
        client = registry.protocol(version)
        spec = client.server_requests.get(method) or client.input_requests.get(method)
        if spec is None:
            return NotExpressible(
                f"cannot ask {method}: the client speaks MCP {version}, which has no {method}", version=version
            )
        feature = _feature(method, params)
        if feature is not None and not any(g.param == feature[0] for g in spec.param_gates):
            return NotExpressible(
                f"cannot ask {method} with {feature[1]}: the client speaks MCP {version}, which has none",
                version=version,
            )
        if self._stateless and self._replay is None and not isinstance(self.raw, TaskContext):
            if self._stub.input_required_result is None:
                why = f"this app is written against MCP {self._stub.version}, which has no InputRequiredResult"
            else:
                why = f"{self._method} cannot ask for input in MCP {version}"
            return NotExpressible(f"cannot ask {method} of a stateless (MCP {version}) client: {why}", version=version)
        missing = [
            c
            for c in spec.needed_capabilities(params)
            if c.side == "client" and not c.present_in(self.client_capabilities)
        ]
        if missing:
            return MissingClientCapability(
                f"cannot ask {method}: it needs the {missing[0]}, which this client did not declare",
                version=version,
                code=client.error_codes.missing_required_client_capability,
                required=_tree(missing),
            )
        return None

    async def _ask(self, method: str, params: Any, key: str | None = None) -> dict[str, Any]:
        return (await self._ask_typed(method, params, key))[0]

    async def _ask_typed(self, method: str, params: Any, key: str | None = None) -> tuple[dict[str, Any], Any]:
        """The answer as wire JSON and as the stub version's typed result model."""
        refusal = self._refusal(method, params)
        if refusal is not None:
            raise refusal
        if self._replay is not None:
            if self._boundary == "pass" and not self._replay.replaying:
                raise McpError(
                    INTERNAL_ERROR,
                    f"Internal error: this task asked {method} before ctx.start_task() where the call's input "
                    "rounds did not; a handler must ask the same things in the same order on every run",
                )
            data: Any = self._replay.ask(method, params, key)
            spec = self._stub.server_requests.get(method) or self._stub.input_requests.get(method)
            typed = versions.validate(spec.result, data) if spec is not None and isinstance(data, dict) else None
        else:
            typed = await self.raw.request(method, params)  # crossed back into the stub's version
            data = versions.dump(typed)
        return (cast("dict[str, Any]", data) if isinstance(data, dict) else {}), typed


def _feature(method: str, params: Any) -> tuple[str, str] | None:
    """(param, what) of a later-version feature this ask uses (URL mode, tools in sampling), if any."""
    if not isinstance(params, dict):
        return None
    data = cast("dict[str, Any]", params)
    if method == ELICIT and data.get("mode") == "url":
        return "mode", "URL-mode elicitation"
    if method == SAMPLE and data.get("tools"):
        return "tools", "tools in sampling"
    return None


def _tree(capabilities: list[Capability]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for capability in capabilities:
        node = tree
        for key in capability.path:
            node = node.setdefault(key, {})
    return tree
