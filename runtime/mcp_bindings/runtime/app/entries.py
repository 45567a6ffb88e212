"""What the decorators register: tools, resources, resource templates, prompts and completions, each
checked when it is registered and turned into the app's stub version's models (its definition in
a list, and its results)."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from mcp_bindings.runtime.app import content as c
from mcp_bindings.runtime.app.arguments import Arguments, arguments_reader
from mcp_bindings.runtime.app.errors import AppDefinitionError, first_error
from mcp_bindings.runtime.app.inline import inline_refs as inline
from mcp_bindings.runtime.app.signature import (
    MISSING,
    FunctionSignature,
    analyse,
    docstring,
    json_schema,
    output_kind,
)
from mcp_bindings.runtime.app.uri_template import Template, TemplateError, is_uri
from mcp_bindings.runtime.protocol import reshape, versions
from mcp_bindings.runtime.protocol.principal import Principal
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import validation_error

__all__ = ["Completer", "Entry", "PlannedToolEntry", "PromptEntry", "ResourceEntry", "TemplateEntry", "ToolEntry"]

log = logging.getLogger("mcp_bindings.runtime.app")

# SEP-986 (2025-11-25): what a tool name should be. Enforced: a name outside it is refused.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
# `@app.tool(task=...)` -> the tool's task support.
TASK_SUPPORT: dict[bool | str, str | None] = {
    False: None,
    True: "optional",
    "optional": "optional",
    "required": "required",
}

Options = Mapping[str, Any]


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def _wire(value: Any) -> Any:
    """Options given as models (icons, annotations) or mappings, as wire JSON."""
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return versions.dump(value)
    if isinstance(value, Mapping):
        return {k: _wire(v) for k, v in cast("Mapping[str, Any]", value).items()}
    if isinstance(value, list | tuple):
        return [_wire(v) for v in cast("Sequence[Any]", value)]
    return value


def _name(options: Options, fn: Callable[..., Any]) -> str:
    """The `name` option, else the function's name."""
    return _given(options, "name", lambda: str(getattr(fn, "__name__", "")))


def _given(options: Options, key: str, default: Callable[[], Any]) -> Any:
    value = options.get(key)
    return value if value is not None else default()


def _type_name(tp: Any) -> str:
    """`int`, `Forecast`, `list[str]`: a return annotation as it was written."""
    return (
        tp.__qualname__
        if isinstance(tp, type) and not getattr(tp, "__args__", None)
        else repr(tp).replace("typing.", "")
    )


def _model(pkg: Any, name: str, data: dict[str, Any], what: str) -> Any:
    try:
        model = getattr(pkg, name)
        return model.model_validate(reshape.shape(data, model, pkg.INFO.key))
    except ValidationError as exc:
        raise AppDefinitionError(f"{what}: not a valid {name} of MCP {pkg.INFO.version}: {first_error(exc)}") from None


def errors_text(exc: ValidationError, root: str = "(arguments)") -> str:
    """One line per error, at its location (`root` for the value itself; a return value's are below
    `return value`: `return value.items.0`)."""
    lines: list[str] = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"])
        if root.startswith("("):
            where = where or root
        else:
            where = f"{root}.{where}" if where else root
        lines.append(f"- {where}: {e['msg']}")
    return "\n".join(lines)


# -- tools ----------------------------------------------------------------------------------------


def _is_object(schema: dict[str, Any]) -> bool:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        schema = schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    return schema.get("type") == "object"


class Entry:
    """What every entry of an app's tables has: its definition (the stub's model), the function's
    signature, what `app.disable` / `app.mount` set on it, and who may see and use it (`scopes`,
    `allow`: `app.access`)."""

    __slots__ = ("allow", "definition", "enabled", "lifetime", "scopes", "sig", "tags")

    definition: Any
    sig: FunctionSignature

    def __init__(self) -> None:
        self.tags: frozenset[str] = frozenset()  # the app's (`@app.tool(tags=...)`), for enable / disable
        self.enabled = True
        self.lifetime: Any = None  # a mounted app's (`app.mount`): its lifespan and dependencies; None: the app's
        # Who may see and use it: the OAuth scopes a caller needs on top of the app's (`scopes=[...]`),
        # and a predicate on the caller's principal (`allow=`); neither: everyone.
        self.scopes: tuple[str, ...] = ()
        self.allow: Callable[[Principal | None], bool] | None = None

    @property
    def key(self) -> str:
        """What names it in its table and in requests: its name, else its URI (template)."""
        template = getattr(self, "template", None)  # (a resource template's: `Template`)
        return str(getattr(self, "uri", None) or getattr(self, "name", None) or getattr(template, "template", "?"))

    @property
    def guarded(self) -> bool:
        """Whether it has an access rule (`scopes` or `allow`): not every caller may see it."""
        return bool(self.scopes) or self.allow is not None

    def missing_scopes(self, principal: Principal | None) -> tuple[str, ...]:
        """The scopes of `scopes` the caller was not granted (all of them for nobody)."""
        if not self.scopes:
            return ()
        return self.scopes if principal is None else principal.missing(self.scopes)

    def allows(self, principal: Principal | None) -> bool:
        """Whether the caller may see and use it: every scope granted and the predicate true (one
        that raises: no)."""
        if self.missing_scopes(principal):
            return False
        allow = self.allow
        if allow is None:
            return True
        try:
            return bool(allow(principal))
        except Exception:
            log.exception("the allow= predicate of %r failed: hidden from this caller", self.key)
            return False


class ToolEntry(Entry):
    """One tool: its definition (the stub's `Tool`) and how its results are made. `options` are
    `@app.tool`'s (`app.registration.ToolOptions`)."""

    __slots__ = (
        "arguments",
        "fn",
        "input_first",
        "name",
        "output",
        "output_schema",
        "result",
        "task",
        "wrap",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        pkg: Any,
        options: Options,
        scope: Mapping[str, Any] | None = None,
        inline_refs: bool = False,
    ) -> None:
        super().__init__()
        self._named(fn, options)
        schemas = self._analyse(pkg, options, scope, inline_refs)
        self.definition = self._definition(pkg, options, *schemas, self.sig.description())

    def _named(self, fn: Callable[..., Any], options: Options) -> str:
        """Set the name, the function and how it runs as a task, checked; what names the tool in errors."""
        name = _name(options, fn)
        if TOOL_NAME.fullmatch(name) is None:
            raise AppDefinitionError(f"tool {name!r}: a tool name is 1-128 of A-Z a-z 0-9 _ - . (SEP-986)")
        what = f"tool {name!r}"
        task, input_first = options.get("task", False), bool(options.get("input_first", False))
        if task not in TASK_SUPPORT:
            raise AppDefinitionError(f'{what}: task={task!r}; use False, True (= "optional") or "required"')
        # How the tool runs as a task: None (never), "optional" (when the client asks), "required".
        self.task: str | None = TASK_SUPPORT[task]
        if input_first and self.task is None:
            raise AppDefinitionError(f'{what}: input_first=True needs task=True or task="required"')
        # Whether the call asks for input first and becomes a task where it calls `ctx.start_task()`.
        self.input_first = input_first
        self.name = name
        self.fn = fn
        return what

    def _analyse(
        self, pkg: Any, options: Options, scope: Mapping[str, Any] | None, inline_refs: bool
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Read the function's signature: set `sig`, `arguments` and how results are made (`output`,
        `output_schema`, `wrap`, `result`); the inputSchema and outputSchema it gives."""
        what = f"tool {self.name!r}"
        structured, input_schema = options.get("structured"), options.get("input_schema")
        model_name = f"{self.name.replace('.', '_').replace('-', '_')}Arguments"
        self.sig = analyse(self.fn, what, model_name=model_name, scope=scope)
        if self.input_first and self.sig.context is None:
            raise AppDefinitionError(f"{what}: input_first=True needs a Context parameter (to call ctx.start_task())")
        # The call's arguments -> the function's keyword arguments (`arguments`; ValidationError).
        self.arguments: Arguments
        if input_schema is not None:  # the advertised schema checks the call; the function picks its parameters
            validate = self.sig.arguments.__pydantic_validator__.validate_python
            known = frozenset(self.sig.parameters)

            def validate_known(arguments: Any) -> dict[str, Any]:
                given = cast("dict[str, Any]", arguments)
                return dict(validate({k: v for k, v in given.items() if k in known}).__dict__)

            self.arguments = validate_known
        else:
            self.arguments = arguments_reader(self.sig.arguments)
        kind = output_kind(self.sig.returns)
        if structured is False and kind == "structured":
            kind = "content"
        elif structured is True and kind == "content":
            if self.sig.returns is MISSING:
                raise AppDefinitionError(f"{what}: structured=True needs a return annotation")
            kind = "structured"
        self.output: str = kind
        self.output_schema: dict[str, Any] | None = None
        self.wrap = False
        self.result: TypeAdapter[Any] | None = None
        if kind == "structured":
            try:
                self.result = TypeAdapter(self.sig.returns)
                schema = json_schema(self.result, "serialization")
            except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
                raise AppDefinitionError(
                    f"{what}: its return type {self.sig.returns!r} cannot be expressed as JSON Schema: "
                    f"{str(exc).strip().splitlines()[0]}"
                ) from None
            if not _is_object(schema):  # structuredContent is an object: anything else is {"result": ...}
                self.wrap = True
                defs = schema.pop("$defs", None)
                schema = _clean(
                    {"type": "object", "properties": {"result": schema}, "required": ["result"], "$defs": defs}
                )
            self.output_schema = inline(schema, f"{what}: output schema") if inline_refs else schema
        arguments_schema = (
            dict(input_schema) if input_schema is not None else json_schema(self.sig.arguments, "validation")
        )
        if inline_refs:
            arguments_schema = inline(arguments_schema, f"{what}: input schema")
        output_schema = self.output_schema
        if not reshape.carries(pkg.Tool, "outputSchema", pkg.INFO.key):
            self.output_schema = None  # the stub's version has no structured output: content only
        return arguments_schema, output_schema

    def _definition(
        self,
        pkg: Any,
        options: Options,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        doc: str | None,
    ) -> Any:
        """The stub's `Tool` listing it (`doc`: the function's docstring, the default description)."""
        tool = pkg.Tool
        definition = _clean(
            {
                "name": self.name,
                "title": options.get("title"),
                "description": _given(options, "description", lambda: doc),
                "inputSchema": input_schema,
                "outputSchema": output_schema if reshape.carries(tool, "outputSchema", pkg.INFO.key) else None,
                "annotations": _wire(options.get("annotations")),
                "icons": _wire(options.get("icons")),
                "_meta": _wire(options.get("meta")),
                # Tool-level task negotiation, where the stub's version has it (2025-11-25); at
                # 2026-07-28 the tasks extension lets the server decide per call.
                "execution": {"taskSupport": self.task} if self.task and "execution" in tool.model_fields else None,
            }
        )
        return _model(pkg, "Tool", definition, f"tool {self.name!r}")

    def content(self, value: Any) -> dict[str, Any]:
        """The CallToolResult JSON for what the function returned."""
        if self.result is None:
            if isinstance(value, str):
                return {"content": [{"type": "text", "text": value}]}
            return {"content": c.to_content(value)}
        try:
            data = self.result.dump_python(self.result.validate_python(value), mode="json", by_alias=True)
        except (ValidationError, ValueError, TypeError) as exc:
            if isinstance(exc, ValidationError):
                detail = errors_text(exc, "return value")
            else:
                detail = f"- return value: {str(exc).strip().splitlines()[0]}"
            expected = f"its return type {_type_name(self.sig.returns)}"
            message = f"tool {self.name!r} returned a value that does not match {expected}:\n{detail}"
            raise McpError(INTERNAL_ERROR, message, {"tool": self.name}) from None
        structured = {"result": data} if self.wrap else data
        out: dict[str, Any] = {"content": [{"type": "text", "text": orjson.dumps(structured).decode()}]}
        if self.output_schema is not None:
            out["structuredContent"] = structured
        return out

    def invalid(self, exc: ValidationError) -> dict[str, Any]:
        text = f"Input validation error: invalid arguments for tool {self.name!r}:\n{errors_text(exc)}"
        return {"content": [{"type": "text", "text": text}], "isError": True}

    @staticmethod
    def error(text: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": text}], "isError": True}


# What a planned tool's analysis sets: reading one of them first analyses the function.
_ANALYSED = frozenset({"sig", "arguments", "output", "output_schema", "result", "wrap"})


class PlannedToolEntry(ToolEntry):
    """A tool listed from its schemas computed ahead of time (`@app.tool(schemas=...)`; a package
    `mcp-bindgen openapi` generates writes them from this same analysis): registering and listing it
    build no model. Its function is analysed, and its arguments and return models built, when a call
    first reads what the analysis sets (`_ANALYSED`: `sig`, `arguments`, ...); from then on it is a
    `ToolEntry` like any other, the call validated and answered the same way."""

    __slots__ = ("_plan",)

    def __init__(
        self,
        fn: Callable[..., Any],
        pkg: Any,
        options: Options,
        scope: Mapping[str, Any] | None,
        inline_refs: bool,
        schemas: Mapping[str, Any],
    ) -> None:
        Entry.__init__(self)
        what = self._named(fn, options)
        self._plan: tuple[Any, Options, Mapping[str, Any] | None, bool] | None = (pkg, options, scope, inline_refs)
        input_schema, output = dict(schemas["inputSchema"]), schemas.get("outputSchema")
        output_schema = dict(output) if output is not None else None
        if inline_refs:
            input_schema = inline(input_schema, f"{what}: input schema")
            output_schema = inline(output_schema, f"{what}: output schema") if output_schema is not None else None
        self.definition = self._definition(pkg, options, input_schema, output_schema, docstring(fn))

    def __getattr__(self, name: str) -> Any:
        """Only for what is not set yet: the analysis, done once (again where it failed)."""
        plan = self._plan if name in _ANALYSED else None
        if plan is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._analyse(*plan)
        self._plan = None
        return object.__getattribute__(self, name)

    def __copy__(self) -> PlannedToolEntry:
        """A copy (`app.mount`) of what is set, without analysing the function to read the rest."""
        new = object.__new__(type(self))
        for cls in type(self).__mro__:
            for slot in cast("tuple[str, ...]", getattr(cls, "__slots__", ())):
                try:
                    object.__setattr__(new, slot, object.__getattribute__(self, slot))
                except AttributeError:
                    continue
        return new


# -- resources ------------------------------------------------------------------------------------


def _default_mime(returns: Any) -> str | None:
    if returns is str:
        return "text/plain"
    if returns is bytes:
        return "application/octet-stream"
    if returns is MISSING:
        return None
    return "application/json"


def _resource(
    options: Options, fn: Callable[..., Any], sig: FunctionSignature, mime_type: str | None, key: str, uri: str
) -> dict[str, Any]:
    """A resource's (`key` "uri") or a resource template's ("uriTemplate") definition, as wire JSON."""
    definition = {
        key: uri,
        "name": options.get("name") or getattr(fn, "__name__", uri),
        "title": options.get("title"),
        "description": options.get("description") or sig.description(),
        "mimeType": mime_type,
        "size": options.get("size"),  # (refused for a template: `Registration.resource`)
        "annotations": _wire(options.get("annotations")),
        "icons": _wire(options.get("icons")),
        "_meta": _wire(options.get("meta")),
    }
    return _clean(definition)


def contents(uri: str, value: Any, mime_type: str | None) -> list[dict[str, Any]]:
    """A resource function's return value as `contents` entries (wire JSON)."""
    if isinstance(value, str):
        return [_clean({"uri": uri, "mimeType": mime_type or "text/plain", "text": value})]
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(bytes(cast("bytes", value))).decode("ascii")
        return [_clean({"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob})]
    if isinstance(value, BaseModel):
        data = versions.dump(value)
        if isinstance(data, dict) and "uri" in data and ("text" in data or "blob" in data):
            return [cast("dict[str, Any]", data)]  # a TextResourceContents / BlobResourceContents
    items: list[Any] = cast("list[Any]", value) if isinstance(value, list) else []
    if items and all(isinstance(v, BaseModel) and {"uri"} <= set(versions.dump(v)) for v in items):
        return [cast("dict[str, Any]", versions.dump(v)) for v in items]
    data = cast("object", value)
    return [_clean({"uri": uri, "mimeType": mime_type or "application/json", "text": c.json_text(data)})]


class ResourceEntry(Entry):
    """A resource with a fixed URI."""

    __slots__ = ("mime_type", "uri")

    def __init__(
        self, uri: str, fn: Callable[..., Any], pkg: Any, options: Options, scope: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        what = f"resource {uri!r}"
        if not is_uri(uri):
            raise AppDefinitionError(f"{what}: not a URI (it needs a scheme, like 'file:' or 'config://')")
        self.uri = uri
        self.sig = analyse(fn, what, model_name="ResourceArguments", scope=scope)
        if self.sig.parameters:
            raise AppDefinitionError(
                f"{what}: a resource with a fixed URI takes no arguments (got {', '.join(self.sig.parameters)}); "
                "for a resource template put them in the URI: 'scheme://{name}'"
            )
        self.mime_type: str | None = options.get("mime_type") or _default_mime(self.sig.returns)
        definition = _resource(options, fn, self.sig, self.mime_type, "uri", uri)
        self.definition = _model(pkg, "Resource", definition, what)


class TemplateEntry(Entry):
    """A resource template: RFC 6570 URI template whose variables are the function's arguments."""

    __slots__ = ("mime_type", "template")

    def __init__(
        self,
        uri_template: str,
        fn: Callable[..., Any],
        pkg: Any,
        options: Options,
        scope: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        what = f"resource template {uri_template!r}"
        try:
            self.template = Template(uri_template)
            self.template.check()
        except TemplateError as exc:
            raise AppDefinitionError(f"{what}: {exc}") from None
        self.sig = analyse(fn, what, model_name="TemplateArguments", lax_strings=True, scope=scope)
        names = self.template.names
        extra = [p for p, param in self.sig.parameters.items() if p not in names and param.default is param.empty]
        if extra:
            raise AppDefinitionError(
                f"{what}: parameter {extra[0]!r} is not a variable of the template (variables: {', '.join(names)})"
            )
        unknown = [n for n in names if n not in self.sig.parameters]
        if unknown:
            raise AppDefinitionError(
                f"{what}: variable {unknown[0]!r} is not a parameter of {getattr(fn, '__name__', 'the function')}"
            )
        properties: dict[str, Any] = json_schema(self.sig.arguments, "validation").get("properties", {})
        for var in self.template.variables:
            is_list = properties.get(var.name, {}).get("type") == "array"
            if var.explode and not is_list:
                raise AppDefinitionError(f"{what}: {{{var.name}*}} is a list: annotate {var.name!r} as list[str]")
            if is_list and not var.explode:
                raise AppDefinitionError(f"{what}: {var.name!r} is a list: explode it in the template, {{{var.name}*}}")
        self.mime_type: str | None = options.get("mime_type") or _default_mime(self.sig.returns)
        definition = _resource(options, fn, self.sig, self.mime_type, "uriTemplate", uri_template)
        self.definition = _model(pkg, "ResourceTemplate", definition, what)

    def arguments(self, uri: str, values: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(self.sig.arguments.__pydantic_validator__.validate_python(values).__dict__)
        except ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {uri} does not fit resource template {self.template.template}:\n{errors_text(exc)}",
                {"template": self.template.template, **validation_error(exc, "uri").data},
            ) from None


# -- prompts --------------------------------------------------------------------------------------


def messages(value: Any) -> list[dict[str, Any]]:
    """A prompt function's return value as `messages` (wire JSON)."""
    items = cast("list[Any]", value) if isinstance(value, list | tuple) else [value]
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, c.Message):
            out.append(item.to_json())
        elif isinstance(item, BaseModel) and {"role", "content"} <= set(type(item).model_fields):
            out.append(cast("dict[str, Any]", versions.dump(item)))  # a PromptMessage
        elif isinstance(item, Mapping) and "role" in item:
            out.append(dict(cast("Mapping[str, Any]", item)))
        else:
            block = cast("Any", item)
            out.append(c.Message("user", block).to_json())
    return out


class PromptEntry(Entry):
    __slots__ = ("name",)

    def __init__(
        self, fn: Callable[..., Any], pkg: Any, options: Options, scope: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.name = name = _name(options, fn)
        what = f"prompt {name!r}"
        self.sig = analyse(fn, what, model_name="PromptArguments", lax_strings=True, scope=scope)
        fields = self.sig.arguments.model_fields
        arguments = [
            _clean({"name": arg, "description": fields[arg].description, "required": fields[arg].is_required()})
            for arg in self.sig.parameters
        ]
        definition = {
            "name": name,
            "title": options.get("title"),
            "description": options.get("description") or self.sig.description(),
            "arguments": arguments or None,
            "icons": _wire(options.get("icons")),
            "_meta": _wire(options.get("meta")),
        }
        self.definition = _model(pkg, "Prompt", _clean(definition), what)

    def arguments(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        try:
            return dict(self.sig.arguments.__pydantic_validator__.validate_python(dict(given or {})).__dict__)
        except ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: arguments of prompt {self.name!r}:\n{errors_text(exc)}",
                validation_error(exc, "params.arguments").data,
            ) from None


# -- completions ----------------------------------------------------------------------------------


class Completer:
    """`fn(value)` or `fn(value, arguments)` (plus a Context) -> candidate values."""

    __slots__ = ("arguments", "context", "fn", "is_async", "value")

    def __init__(self, fn: Callable[..., Any], what: str, scope: Mapping[str, Any] | None = None) -> None:
        sig = analyse(fn, what, model_name="CompletionArguments", scope=scope)
        self.fn = fn
        self.is_async = sig.is_async
        self.context = sig.context
        names = list(sig.parameters)
        self.arguments = "arguments" if "arguments" in names else None
        rest = [n for n in names if n != "arguments"]
        if len(rest) != 1:
            raise AppDefinitionError(
                f"{what}: a completion function takes the partial value (one parameter), and optionally "
                f"`arguments: dict[str, str]` and a Context; got {', '.join(names) or 'nothing'}"
            )
        self.value = rest[0]

    def kwargs(self, value: str, arguments: dict[str, str]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {self.value: value}
        if self.arguments is not None:
            kwargs[self.arguments] = arguments
        return kwargs


def completion(values: Any) -> dict[str, Any]:
    """A completion function's result as CompleteResult JSON (at most 100 values, as the spec says)."""
    found = [str(v) for v in cast("Sequence[Any]", values or [])]
    return {"completion": {"values": found[:100], "total": len(found), "hasMore": len(found) > 100}}
