"""What a decorated function's signature says: its arguments as a pydantic model (validation and the
JSON Schema clients see), where the `Context` goes, and what its return annotation asks for."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, PydanticUserError, TypeAdapter, create_model
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from mcp_bindings.runtime.app.content import Audio, Embedded, Image, is_content_model
from mcp_bindings.runtime.app.depends import Depends
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["MISSING", "FunctionSignature", "OutputKind", "analyse", "docstring", "json_schema", "output_kind"]

MISSING: Any = inspect.Parameter.empty


class _Schema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it makes up from field names ("Text" for `text`)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema(adapter: TypeAdapter[Any] | type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
    if isinstance(adapter, TypeAdapter):
        schema = adapter.json_schema(mode=mode, schema_generator=_Schema)
    else:
        schema = adapter.model_json_schema(mode=mode, schema_generator=_Schema)
    schema.pop("title", None)
    return schema


@dataclass(frozen=True, slots=True)
class FunctionSignature:
    fn: Callable[..., Any]
    name: str
    is_async: bool
    context: str | None  # the parameter that gets the Context
    parameters: dict[str, inspect.Parameter]  # the others, in order
    hints: dict[str, Any]  # resolved annotations (with Annotated extras)
    arguments: type[BaseModel]  # validates the arguments; its schema is the inputSchema
    returns: Any  # the resolved return annotation, or MISSING
    dependencies: dict[str, Depends[Any]]  # the parameters the app provides (`Depends`)
    needs_context: bool  # the function or one of its dependencies takes the Context

    def description(self) -> str | None:
        return docstring(self.fn)


def docstring(fn: Callable[..., Any]) -> str | None:
    """A function's docstring, cleaned (None: none, or only blanks): a tool's default description."""
    doc = inspect.getdoc(fn)
    return doc.strip() if doc and doc.strip() else None


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _is_context(tp: Any) -> bool:
    from mcp_bindings.runtime.app.context import Context

    tp = _strip(tp)
    if tp is Context or get_origin(tp) is Context:  # `Context`, `Context[State]`
        return True
    if get_origin(tp) in (Union, types.UnionType):
        args = [_strip(a) for a in get_args(tp) if a is not type(None)]
        return len(args) == 1 and (args[0] is Context or get_origin(args[0]) is Context)
    return False


def _depends(hint: Any, default: Any) -> Depends[Any] | None:
    """The `Depends` of a parameter: in its `Annotated[...]` extras, or its default."""
    if get_origin(hint) is Annotated:
        for extra in hint.__metadata__:
            if isinstance(extra, Depends):
                return cast("Depends[Any]", extra)
    return cast("Depends[Any]", default) if isinstance(default, Depends) else None


def _provider(
    dep: Depends[Any], what: str, scope: Mapping[str, Any] | None, seen: tuple[Depends[Any], ...] = ()
) -> bool:
    """Check a dependency's provider (once) and its own dependencies; whether any takes the Context."""
    if dep in seen:
        raise AppDefinitionError(f"{what}: {dep!r} depends on itself")
    if dep.needs is None:
        where = f"{what}: dependency {getattr(dep.fn, '__qualname__', dep.fn)!r}"
        if not callable(dep.fn):
            raise AppDefinitionError(f"{where} is not a function")
        hints = _hints(dep.fn, where, scope)
        needs: dict[str, Depends[Any]] = {}
        for name, parameter in inspect.signature(dep.fn).parameters.items():
            hint = hints.get(name, MISSING)
            inner = _depends(hint, parameter.default)
            if inner is not None:
                needs[name] = inner
            elif hint is not MISSING and _is_context(hint):
                if dep.scope == "app":
                    raise AppDefinitionError(
                        f"{where}: scope='app' outlives a request: it cannot take the Context ({name!r})"
                    )
                dep.context = name
            elif parameter.default is inspect.Parameter.empty:
                raise AppDefinitionError(
                    f"{where}: parameter {name!r} is neither the Context nor a dependency "
                    "(Annotated[T, Depends(...)]); a provider takes no client arguments"
                )
        dep.needs = needs
    for inner in dep.needs.values():
        if dep.scope == "app" and inner.scope == "request":
            raise AppDefinitionError(f"{what}: {dep!r} (scope='app') cannot depend on {inner!r} (scope='request')")
    return dep.context is not None or any(_provider(inner, what, scope, (*seen, dep)) for inner in dep.needs.values())


def _hints(fn: Callable[..., Any], what: str, scope: Mapping[str, Any] | None) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, localns=dict(scope) if scope else None, include_extras=True)
    except Exception as exc:
        raise AppDefinitionError(
            f"{what}: its annotations cannot be resolved ({type(exc).__name__}: {exc}); define the types it "
            "names before the function, at module level or in the scope that registers it"
        ) from None


def analyse(
    fn: Callable[..., Any],
    what: str,
    *,
    model_name: str,
    lax_strings: bool = False,
    scope: Mapping[str, Any] | None = None,
) -> FunctionSignature:
    """`fn`'s signature, checked: every parameter (but the Context) annotated, passed by keyword, and
    expressible as JSON Schema. `AppDefinitionError` otherwise, naming the parameter."""
    if not callable(fn):
        raise AppDefinitionError(f"{what}: {fn!r} is not a function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise AppDefinitionError(f"{what}: no signature to read ({exc})") from None
    hints = _hints(fn, what, scope)
    context: str | None = None
    parameters: dict[str, inspect.Parameter] = {}
    fields: dict[str, Any] = {}
    dependencies: dict[str, Depends[Any]] = {}
    needs_context = False
    for name, parameter in signature.parameters.items():
        hint = hints.get(name, MISSING)
        dep = _depends(hint, parameter.default)
        if dep is not None:
            needs_context = _provider(dep, what, scope) or needs_context
            dependencies[name] = dep
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise AppDefinitionError(
                f"{what}: *{name} / **{name} cannot be described as JSON Schema; name each argument"
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise AppDefinitionError(f"{what}: parameter {name!r} is positional-only; arguments are passed by name")
        if hint is not MISSING and _is_context(hint):
            if context is not None:
                raise AppDefinitionError(f"{what}: two Context parameters ({context!r}, {name!r})")
            context = name
            continue
        if hint is MISSING:
            raise AppDefinitionError(f"{what}: parameter {name!r} has no type annotation")
        if name.startswith("_"):
            raise AppDefinitionError(f"{what}: parameter {name!r}: argument names must not start with '_'")
        parameters[name] = parameter
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (hint, default)
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False, coerce_numbers_to_str=lax_strings)
    try:
        model = create_model(model_name, __config__=config, **fields)
        json_schema(model, "validation")
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
        culprit = _culprit(fields)
        where = f"parameter {culprit!r}" if culprit else "its parameters"
        raise AppDefinitionError(f"{what}: {where} cannot be expressed as JSON Schema: {_first_line(exc)}") from None
    returns = hints.get("return", MISSING)
    return FunctionSignature(
        fn,
        getattr(fn, "__name__", model_name),
        inspect.iscoroutinefunction(fn),
        context,
        parameters,
        hints,
        model,
        returns,
        dependencies,
        needs_context or context is not None,
    )


def _culprit(fields: dict[str, Any]) -> str | None:
    """The first field that fails on its own (to name it in the error)."""
    for name, spec in fields.items():
        try:
            json_schema(create_model("Probe", **{name: spec}), "validation")
        except Exception:  # noqa: BLE001 - any failure names the field
            return name
    return None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# -- return annotations --------------------------------------------------------------------------

OutputKind = Literal["content", "result", "structured"]


def _is_call_tool_result(tp: Any) -> bool:
    """Whether `tp` is the `tools/call` result model of the version it was generated for (the one
    `tp` comes from, found by its package: no other version's models are loaded)."""
    if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return False
    for info in registry.names().values():
        if tp.__module__.startswith(f"mcp_bindings.{info.package}."):
            spec = registry.protocol(info.key).client_requests.get(v2026.TOOLS_CALL)
            return spec is not None and spec.result is tp
    return False


def _content_leaf(tp: Any) -> bool:
    return tp is Image or tp is Audio or tp is Embedded or is_content_model(tp)


def _leaves(tp: Any) -> list[Any]:
    """The member types of `tp` through unions and sequences (a sequence's items)."""
    tp = _strip(tp)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType, list, tuple) or origin is Sequence or origin is typing.Sequence:
        return [leaf for arg in get_args(tp) if arg is not Ellipsis for leaf in _leaves(arg)]
    return [tp]


def _content_only(tp: Any) -> bool:
    """Whether values of `tp` are content rather than data for structured output: text (a `str`
    alone), images, audio, content blocks, and unions or lists of those (a list of only strings is
    data: `list[str]` is structured)."""
    leaves = _leaves(tp)
    if not all(leaf in (str, type(None), None) or _content_leaf(leaf) for leaf in leaves):
        return False
    origin = get_origin(_strip(tp))
    if origin in (list, tuple) or origin is Sequence or origin is typing.Sequence:
        return any(_content_leaf(leaf) for leaf in leaves)
    return True


def output_kind(returns: Any) -> OutputKind:
    """ "content" (made into content blocks, no output schema), "result" (a CallToolResult, passed
    on) or "structured" (an output schema and structuredContent)."""
    if returns is MISSING or returns is Any:
        return "content"
    if _is_call_tool_result(_strip(returns)):
        return "result"
    return "content" if _content_only(returns) else "structured"
