"""The typed `Context` of the authoring layer: logging, progress, and asking the client (elicitation,
sampling, roots) with one code path for every protocol version.

For a client of a handshake version (2024-11-05 .. 2025-11-25) an ask is a real request on the
connection (`RequestContext.request`). A stateless request (2026-07-28) cannot carry requests to
its client: there the ask rides a multi-round-trip request, by deterministic replay. The first
time the handler asks, the ask is recorded and the handler is unwound (`Suspend`, a
`BaseException`, so an `except Exception` in the handler does not swallow it); the app answers with
an `InputRequiredResult` holding the ask, and a `requestState` (sealed by the runtime) recording
every ask so far with the answers already given. The client answers and retries; the handler runs
again from the top, and its asks are answered in order from the record, until it asks something
new (the next round) or returns. Asks started concurrently (`asyncio.gather`, a task group) before
the handler is unwound go out in the same round.

What that asks of a handler: up to its last ask, it must ask the same things in the same order
on every run (an ask that differs from the record is an internal error naming it); side effects
before an ask run once per round. Logs and progress sent while replaying recorded asks are not
sent again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Literal, TypeAlias, TypeVar, Union, cast, overload

import orjson
from pydantic import BaseModel, ValidationError, create_model
from typing_extensions import TypeVar as DefaultedTypeVar

from mcp_bindings.runtime.app.content import Message
from mcp_bindings.runtime.app.errors import AppDefinitionError, MissingClientCapability
from mcp_bindings.runtime.app.lifespan import NOT_STARTED
from mcp_bindings.runtime.app.progress import Progress
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.context import RequestContext, SessionContext
from mcp_bindings.runtime.protocol.spec import Capability, ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError, NotExpressible
from mcp_bindings.runtime.tasks.service import TaskContext

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

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"
ELICITATION_COMPLETE = "notifications/elicitation/complete"
STATE_KEY = "mcp-bindgen/app"  # marks a requestState as the replay record of this layer


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


class Suspend(BaseException):
    """An ask without an answer yet, on a stateless request: unwinds the handler (see the module doc)."""


class StartTask(BaseException):
    """`ctx.start_task()` reached by a call that asked its input first: unwinds the handler, which
    starts the task; the task runs the function again from the top, its asks answered from the record."""


# Where a tool declared `input_first=True` calls `ctx.start_task()`, what happens (`Context.boundary`):
#   "unwind": the call's input rounds are over; unwind the handler (`StartTask`) to start the task;
#   "pass":   the task's run: the asks before it were answered from the record; later asks are live;
#   "stay":   nothing (the call is a task from its start, or its work runs at once);
#   None:     the tool did not declare `input_first=True` (an error).
Boundary = Literal["unwind", "pass", "stay"] | None


def _digest(method: str, params: Any) -> str:
    import hashlib

    return hashlib.sha256(orjson.dumps([method, params], option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


class Replay:
    """The asks of one stateless request across its rounds: the record from `requestState`, the
    answers from `inputResponses`, and the asks of this run that have no answer yet."""

    __slots__ = ("answers", "asks", "pending", "position", "stub")

    def __init__(
        self, stub: ProtocolTables, request_state: str | None, input_responses: Mapping[str, Any] | None
    ) -> None:
        self.stub = stub
        self.asks: list[tuple[str, str, str]] = []  # (method, digest, key) of each answered ask, in order
        self.answers: list[Any] = []  # the answers (the stub's result JSON)
        self.pending: list[tuple[str, Any, str, str]] = []  # unanswered asks: (method, params, digest, key)
        self.position = 0
        if request_state is None:
            return
        record = self._record(request_state)
        asks = [(str(a[0]), str(a[1]), str(a[2])) for a in record["asks"]]
        answers: list[Any] = list(record["answers"])
        for index in range(len(answers), len(asks)):  # the last round's asks, answered now (in order)
            response = (input_responses or {}).get(asks[index][2])
            if response is None:
                break  # unanswered: asked again when the handler gets there
            answers.append(self._answer(asks[index][0], asks[index][2], response))
        self.asks, self.answers = asks[: len(answers)], answers

    @staticmethod
    def _record(request_state: str) -> dict[str, Any]:
        try:
            record = orjson.loads(request_state)
        except orjson.JSONDecodeError:
            record = None
        if (
            not isinstance(record, dict)
            or cast("dict[str, Any]", record).get(STATE_KEY) != 1
            or not isinstance(cast("dict[str, Any]", record).get("asks"), list)
            or not isinstance(cast("dict[str, Any]", record).get("answers"), list)
            or not all(
                isinstance(a, list) and len(cast("list[Any]", a)) == 3 for a in cast("dict[str, Any]", record)["asks"]
            )
        ):
            raise McpError(INVALID_PARAMS, "Invalid params: params.requestState was not issued by this server's app")
        return cast("dict[str, Any]", record)

    def _answer(self, method: str, key: str, response: Any) -> Any:
        spec = self.stub.input_requests.get(method)
        data = versions.dump(response)
        if spec is None:
            return data
        try:
            versions.validate(spec.result, data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses.{key} is not a {method} result: {first['msg']}",
            ) from None
        return data

    @property
    def replaying(self) -> bool:
        """Whether the handler is still before its first unanswered ask (what it sends is a repeat)."""
        return self.position < len(self.answers)

    def ask(self, method: str, params: Any, key: str | None = None) -> Any:
        index = self.position
        self.position += 1
        digest = _digest(method, params)
        key = key if key is not None else f"ask{index}"
        if index < len(self.answers):
            if self.asks[index] != (method, digest, key):
                raise McpError(
                    INTERNAL_ERROR,
                    f"Internal error: ask #{index + 1} of this handler ({method}) differs from the one it made in "
                    f"the previous round ({self.asks[index][0]}); a handler that asks for input must ask the same "
                    "things in the same order on every run",
                )
            return self.answers[index]
        if any(k == key for *_, k in self.asks) or any(k == key for *_, k in self.pending):
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: two asks of this handler use the key {key!r}; give each ask its own key=",
            )
        self.pending.append((method, params, digest, key))
        raise Suspend

    def input_required(self) -> Any:
        """The InputRequiredResult (the stub's model) for this run's unanswered asks."""
        requests = {k: {"method": m, "params": p} if p is not None else {"method": m} for m, p, _, k in self.pending}
        record = {
            STATE_KEY: 1,
            "asks": [list(a) for a in self.asks] + [[m, d, k] for m, _, d, k in self.pending],
            "answers": self.answers,
        }
        model = self.stub.input_required_result
        assert model is not None
        return versions.validator(model)(
            {"inputRequests": requests, "requestState": orjson.dumps(record).decode()}, by_name=False
        )


def elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The `requestedSchema` of an elicitation form for a pydantic model: a flat object of primitive
    properties (what MCP allows), with `Optional` fields not required and enums inlined."""
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.get("$defs", {})
    properties: dict[str, Any] = {}
    for name, prop in cast("dict[str, Any]", schema.get("properties", {})).items():
        prop = dict(prop)
        options = prop.pop("anyOf", None)
        if isinstance(options, list):
            kept = [o for o in cast("list[dict[str, Any]]", options) if o.get("type") != "null"]
            if len(kept) != 1:
                raise AppDefinitionError(f"elicitation schema {model.__name__}: field {name!r} must have one type")
            prop = {**kept[0], **prop}
        ref = prop.pop("$ref", None)
        if isinstance(ref, str):
            prop = {**defs.get(ref.rsplit("/", 1)[-1], {}), **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]  # an Optional field's None default: no default for the form
        properties[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


@dataclass(frozen=True, slots=True)
class _Form:
    schema: dict[str, Any]  # the requestedSchema
    model: type[BaseModel] | None  # validates the answer (None: a requestedSchema given as JSON, answered as a dict)
    wrapped: bool  # a single value asked as a form with one field, `value`


_FORMS: dict[tuple[ProtocolTables, Any], _Form] = {}
_SINGLE = (bool, int, float, str)


def _form(stub: ProtocolTables, kind: Any) -> _Form:
    """The elicitation form of `kind` (a pydantic model, one bool / int / float / str / Enum value, or
    a requestedSchema as JSON), checked once against what the stub's version allows."""
    if isinstance(kind, Mapping):
        schema = dict(cast("Mapping[str, Any]", kind))
        _check_form(stub, schema, "the requestedSchema")
        return _Form(schema, None, False)
    key = (stub, kind)
    form = _FORMS.get(key)
    if form is None:
        model: type[BaseModel]
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            model, wrapped = kind, False
        elif kind in _SINGLE or (isinstance(kind, type) and issubclass(kind, Enum)):
            model, wrapped = create_model("Answer", value=(kind, ...)), True
        else:
            raise AppDefinitionError(
                "ctx.elicit(schema=...) takes a pydantic model class, bool, int, float, str, an Enum, or a "
                f"requestedSchema as a dict; not {kind!r}"
            )
        schema = elicitation_schema(model)
        _check_form(stub, schema, getattr(kind, "__name__", repr(kind)))
        form = _FORMS[key] = _Form(schema, model, wrapped)
    return form


def _check_form(stub: ProtocolTables, schema: dict[str, Any], what: str) -> None:
    spec = stub.server_requests.get(ELICIT) or stub.input_requests.get(ELICIT)
    if spec is None or spec.params is None:
        return
    try:
        versions.validate(spec.params, {"message": "?", "requestedSchema": schema})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise AppDefinitionError(
            f"{what} cannot be an elicitation form in MCP {stub.version} (forms hold flat string, number, "
            f"integer, boolean and enum fields): {where}: {first['msg']}"
        ) from None


class Context(Generic[L]):
    """What a tool, resource, prompt or completion function gets by annotating a parameter with
    `Context`: the client's identity and capabilities, logging, progress, and asks to the client
    that work the same on every protocol version. `Context[State]`: `ctx.lifespan` is the value of
    the app's lifespan (`App(lifespan=...)`), typed `State`."""

    __slots__ = ("_boundary", "_ctx", "_lifespan", "_method", "_replay", "_stateless", "_stub")

    def __init__(
        self,
        ctx: RequestContext,
        stub: ProtocolTables,
        method: str,
        replay: Replay | None,
        boundary: Boundary = None,
        *,
        lifespan: Any = None,
    ) -> None:
        self._lifespan = lifespan
        self._ctx = ctx
        self._stub = stub
        self._method = method
        self._replay = replay
        self._boundary: Boundary = boundary
        self._stateless = registry.info(ctx.protocol_version).stateless

    @property
    def lifespan(self) -> L:
        """What the app's lifespan yielded (`App(lifespan=...)`; None without one)."""
        if self._lifespan is NOT_STARTED:
            raise RuntimeError(
                "the app's lifespan has not started: serve it with app.run(), app.asgi() (mounted: pass "
                "lifespan=mcp.lifespan to the application) or app.test_client()"
            )
        return cast("L", self._lifespan)

    # -- who is asking ------------------------------------------------------------------------

    @property
    def principal(self) -> str | None:
        """Who the HTTP bearer token speaks for (`App(auth=...)`: issuer, subject and client id as
        one string); None without auth."""
        principal = getattr(self._ctx, "principal", None)
        return principal if isinstance(principal, str) else None

    @property
    def raw(self) -> RequestContext:
        """The runtime's request context (`ctx.raw.request(...)` in the stub version's terms)."""
        return self._ctx

    @property
    def request_id(self) -> str | int:
        return self._ctx.request_id

    @property
    def protocol_version(self) -> str:
        """The client's protocol version."""
        return self._ctx.protocol_version

    @property
    def session(self) -> SessionContext:
        """The client: `id`, `client_info`, a per-client `state` dict, ..."""
        return self._ctx.session

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._ctx.peer_capabilities

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
            await self._ctx.log(level, data, logger)

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
            await self._ctx.report_progress(progress, total, message)

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
        form = _form(self._stub, schema)
        answer = await self._ask(ELICIT, {"message": message, "requestedSchema": form.schema}, key)
        action = answer.get("action")
        if action == "accept":
            if form.model is None:
                return Accepted(dict(answer.get("content") or {}))
            try:
                # As JSON, strictly: the answer must be what the form asked for ("yes" is no boolean).
                data: Any = form.model.model_validate_json(orjson.dumps(answer.get("content") or {}), strict=True)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"]) or "(root)"
                raise McpError(
                    INVALID_PARAMS,
                    f"the client's elicitation answer does not fit {getattr(schema, '__name__', schema)}: "
                    f"{where}: {first['msg']}",
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
            elicitation_id = _digest("url", [message, url])
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        answer = await self._ask(ELICIT, params, key)
        action = answer.get("action")
        return Accepted(None) if action == "accept" else Declined() if action == "decline" else Cancelled()

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """`notifications/elicitation/complete`: the URL-mode elicitation `elicitation_id` is done."""
        if not self._replaying:
            await self._ctx.notify(ELICITATION_COMPLETE, {"elicitationId": elicitation_id})

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
        version = self._ctx.protocol_version
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
        if self._stateless and self._replay is None and not isinstance(self._ctx, TaskContext):
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
            typed = await self._ctx.request(method, params)  # crossed back into the stub's version
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
