"""JSON Schemas compiled once and checked many times: the `jsonschema` library's verdict, with a fast path.

`compiled(source, default_dialect)` turns a schema (its JSON bytes) into a `CompiledSchema`, once per
distinct schema and default dialect (an LRU cache: `compiled.cache_info()` counts the compilations).
The dialect is the schema's `$schema`, else the default the caller names (MCP: the protocol
version's). A schema that cannot be used (not a schema, a dialect `jsonschema` does not know, invalid
under its dialect's metaschema, a `$ref` that cannot be resolved) gets a `problem` and checks nothing.

`CompiledSchema.violations(value)` lists what is wrong with a value (at most `MAX_VIOLATIONS` + 1,
path and message each cut to `MAX_MESSAGE` characters). `jsonschema` alone costs tens of
microseconds even for a schema of three keywords, so a value first meets `CompiledSchema.fast`: a
Python function generated from the schema for the common keywords (type, properties, required,
additionalProperties, items, enum, const, the length/size/range bounds, pattern, anyOf, allOf, local
`$ref`). It returns True only when the value is valid under the dialect (it is exact for what it
covers, and says "not sure" for a subschema with any other keyword, or for an integral float where
`integer` is asked); whenever it is not sure, `jsonschema` decides and writes the messages. A `$ref`
resolves inside the schema only: nothing is ever fetched (jsonschema's default would still fetch a
remote one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import islice
from typing import Any, NamedTuple, cast
from urllib.parse import unquote

import orjson

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_VIOLATIONS = 10  # listed per value; one more is looked for, to say that there are more
MAX_MESSAGE = 200  # characters of one violation's message (they quote the offending value)
CACHED_SCHEMAS = 1024  # compiled schemas kept (least recently used dropped first)

Check = Callable[[Any], bool]


class Violation(NamedTuple):
    path: str  # where in the checked value, as a JSON path: "$", "$.text", "$.items[0]"
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def describe(violations: Iterable[Violation]) -> str:
    """One violation per line, at most `MAX_VIOLATIONS`, then a line saying more were found."""
    found = list(violations)
    lines = [f"- {v}" for v in found[:MAX_VIOLATIONS]]
    if len(found) > MAX_VIOLATIONS:
        lines.append("- (further violations not listed)")
    return "\n".join(lines)


class CompiledSchema:
    """One JSON Schema, ready to check values (make it with `compiled`)."""

    __slots__ = ("_validator", "dialect", "fast", "problem", "reported", "schema")

    def __init__(self, schema: Any, default_dialect: str) -> None:
        # Imported here: `jsonschema` takes a while to import, and only processes that check schemas pay it.
        from jsonschema import exceptions, validators
        from referencing import Registry

        self.schema = schema
        self.dialect = default_dialect
        self.problem: str | None = None
        self.reported = False  # whether the problem was told (by whoever uses the schema)
        self.fast: Check | None = None  # True: valid for sure; False: ask `violations`
        self._validator: Any = None
        if isinstance(schema, orjson.JSONDecodeError):
            self.problem = f"not readable as JSON: {_short(str(schema))}"
            return
        if not isinstance(schema, dict | bool):
            self.problem = f"not a JSON Schema (a {type(schema).__name__}, not an object)"
            return
        uri = schema.get("$schema", default_dialect) if isinstance(schema, dict) else default_dialect
        cls = validators.validator_for({"$schema": uri}, default=cast(Any, None)) if isinstance(uri, str) else None
        if cls is None:
            self.problem = f"unsupported JSON Schema dialect {_short(repr(uri))}"
            return
        self.dialect = uri
        try:
            cls.check_schema(cast(Any, schema))
            # An empty registry: `$ref`s resolve within the schema only. (jsonschema's default registry
            # still fetches a remote `$ref` over the network, deprecated: a peer's schema must not make us.)
            self._validator = cls(schema, registry=Registry())
        except exceptions.SchemaError as exc:
            where = exc.json_path if exc.path else "the schema's root"
            self.problem = f"invalid under its dialect ({uri}): {_short(exc.message)} (at {_short(where)})"
            return
        except Exception as exc:  # noqa: BLE001 - e.g. nested too deep to check: unusable, not a crash
            self.problem = f"not checkable: {_short(repr(exc))}"
            return
        self.fast = _fast_check(schema, cls)

    @property
    def usable(self) -> bool:
        return self.problem is None

    def violations(self, value: Any) -> list[Violation]:
        """What is wrong with `value` (decoded JSON): [] when it is valid, or the schema unusable (a
        `$ref` that cannot be resolved makes it so, on the first value that reaches it: see `problem`)."""
        fast = self.fast
        if fast is not None and fast(value):
            return []
        validator = self._validator
        if validator is None:
            return []
        try:
            errors = list(islice(validator.iter_errors(value), MAX_VIOLATIONS + 1))
        except Exception as exc:  # noqa: BLE001 - e.g. a $ref to a remote document (never fetched)
            self.problem = f"cannot be evaluated: {_short(str(exc))}"
            self.fast = self._validator = None
            return []
        return [Violation(_short(error.json_path), _short(error.message)) for error in errors]


@lru_cache(maxsize=CACHED_SCHEMAS)
def compiled(source: bytes, default_dialect: str) -> CompiledSchema:
    """The schema whose JSON is `source`, compiled once per distinct (source, default dialect)."""
    try:
        schema = orjson.loads(source)
    except orjson.JSONDecodeError as exc:
        schema = exc  # not JSON: CompiledSchema reports it as not a schema
    return CompiledSchema(schema, default_dialect)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


# -- the fast check ---------------------------------------------------------------------------------
#
# Generated Python: one function per schema (plus one per `anyOf` branch and per `$ref` target), whose
# statements `return False` ("not sure") as soon as the value might be invalid. Three plain closures a
# level cost about three times as much as the same tests in one function, and this runs on every call.
# The source holds only generated names and fixed text: every value from the schema (property names,
# bounds, enums, patterns) is passed in as a constant of the function's namespace.

_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "string": frozenset({str}),
    "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
    "number": frozenset({int, float}),
    "integer": frozenset({int}),  # 1.0 is an integer too: the fast check is unsure, jsonschema says yes
}
_NUMBER = frozenset({int, float})
_MISSING = object()
_OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "minProperties", "maxProperties")
_COMPARISONS = {"minimum": "<", "maximum": ">", "exclusiveMinimum": "<=", "exclusiveMaximum": ">="}  # as jsonschema
_SIZES = {"minLength": (str, "<"), "maxLength": (str, ">"), "minItems": (list, "<"), "maxItems": (list, ">")}


class _Unsupported(Exception):
    """A subschema the fast check does not cover: it answers "not sure" for it."""


def _fast_check(schema: Any, cls: Any) -> Check | None:
    """A function that returns True only for values `schema` accepts; None when it could never say so."""
    from jsonschema import Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator

    if cls not in (Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator):
        return None  # draft-04 and older: other `exclusiveMaximum`, `type` and `$ref` rules
    generator = _Generator(schema, cls, ref_overrides=cls in (Draft6Validator, Draft7Validator))
    try:
        body = generator.statements(schema, "v", 1)
        if body == ["    return False"]:
            return None
        return cast(Check, generator.compile(generator.define(body))[0])
    except (RecursionError, SyntaxError):  # nested too deep for the parser (20 loops) or for us
        return None


class _Generator:
    def __init__(self, root: Any, cls: Any, *, ref_overrides: bool) -> None:
        self.root = root
        self.asserting: frozenset[str] = frozenset(cls.VALIDATORS) - {"format"}  # format: annotation only
        self.ref_overrides = ref_overrides  # up to draft-07, `$ref` makes its siblings ignored
        self.local_refs = not _nested_ids(root)  # "#/..." names the root's subschemas only without nested $id
        self.namespace: dict[str, Any] = {"_MISSING": _MISSING, "_NUMBER": _NUMBER}
        self.namespace.update(dict=dict, list=list, str=str, bool=bool, type=type, len=len)  # found before builtins
        self.sources: list[str] = []
        self.refs: dict[str, str] = {}
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any) -> str:
        name = self.name("_c")
        self.namespace[name] = value
        return name

    def function(self, schema: Any) -> str:
        """Generate `def _fN(v)`: True when sure that `schema` accepts v. Returns the name."""
        return self.define(self.statements(schema, "v", 1))

    def define(self, body: list[str], name: str | None = None) -> str:
        name = name or self.name("_f")
        self.sources.append("\n".join([f"def {name}(v):", *body, "    return True", ""]))
        return name

    def compile(self, root: str) -> tuple[Check, dict[str, Any]]:
        source = "\n".join(self.sources)
        exec(compile(source, "<json-schema fast check>", "exec"), self.namespace)  # noqa: S102 - generated, constants apart
        return self.namespace[root], self.namespace

    def statements(self, schema: Any, v: str, depth: int) -> list[str]:
        """Lines (indented `depth` levels) that return False unless sure that `schema` accepts `v`."""
        if schema is True:
            return []
        try:
            if not isinstance(schema, dict):
                raise _Unsupported("false")  # nothing is valid: let jsonschema say why
            return self._statements(cast("dict[str, Any]", schema), v, depth)
        except _Unsupported:
            return ["    " * depth + "return False"]

    def _statements(self, schema: dict[str, Any], v: str, depth: int) -> list[str]:
        at = "    " * depth
        if self.ref_overrides and "$ref" in schema:
            return [f"{at}if not {self.ref(schema['$ref'])}({v}): return False"]
        types: frozenset[type] | None = None
        lines: list[str] = []
        for key, value in schema.items():
            if key not in self.asserting or key in _OBJECT_KEYWORDS:
                continue  # annotations and unknown keywords assert nothing; object keywords: below
            if key == "type":
                types = _types(value)
            elif key == "items":
                lines += self._items(value, v, depth, types == _TYPES["array"])
            else:
                lines += self._keyword(key, value, v, depth)
        if any(key in schema for key in _OBJECT_KEYWORDS):
            lines = self._object(schema, v, depth, types == _TYPES["object"]) + lines
        if types is not None:
            if len(types) == 1:
                (only,) = types
                test = f"type({v}) is not {self.const(only)}"
            else:
                test = f"type({v}) not in {self.const(types)}"
            lines.insert(0, f"{at}if {test}: return False")
        return lines

    def _keyword(self, key: str, value: Any, v: str, depth: int) -> list[str]:
        """The lines of one keyword that needs no other (all but type, items and the object keywords)."""
        at = "    " * depth
        if key in _SIZES:
            kind, op = _SIZES[key]
            return [f"{at}if type({v}) is {kind.__name__} and len({v}) {op} {self.const(_bound(value))}: return False"]
        if key in _COMPARISONS:
            return [
                f"{at}if type({v}) in _NUMBER and {v} {_COMPARISONS[key]} {self.const(_bound(value))}: return False"
            ]
        if key == "pattern":
            return [f"{at}if type({v}) is str and {self.const(_search(value))}({v}) is None: return False"]
        if key in ("enum", "const"):
            allowed = self.const(_values(value if key == "enum" else [value]))
            unhashable = f"type({v}) is dict or type({v}) is list"
            return [f"{at}if {unhashable} or (type({v}) is bool, {v}) not in {allowed}: return False"]
        if key == "anyOf":
            alternatives = " or ".join(f"{self.function(sub)}({v})" for sub in _schemas(value))
            return [f"{at}if not ({alternatives}): return False"]
        if key == "allOf":
            return [line for sub in _schemas(value) for line in self.statements(sub, v, depth)]
        if key == "$ref":
            return [f"{at}if not {self.ref(value)}({v}): return False"]
        raise _Unsupported(key)

    def _object(self, schema: dict[str, Any], v: str, depth: int, sure: bool) -> list[str]:
        """properties, required, additionalProperties, min/maxProperties; `sure`: v is known to be a dict."""
        properties, required = schema.get("properties", {}), schema.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            raise _Unsupported("properties")
        named = cast("dict[str, Any]", properties)
        inner = depth if sure else depth + 1
        at = "    " * inner
        needed = list(dict.fromkeys(cast("list[str]", required)))  # strings: the metaschema says so
        body = [f"{at}if {self.const(name)} not in {v}: return False" for name in needed]
        for name, sub in named.items():
            item = self.name("_v")
            if name in needed:  # present (tested above): read directly
                checks = self.statements(sub, item, inner)
                if checks:
                    body += [f"{at}{item} = {v}[{self.const(name)}]", *checks]
                continue
            checks = self.statements(sub, item, inner + 1)
            if checks:
                body += [
                    f"{at}{item} = {v}.get({self.const(name)}, _MISSING)",
                    f"{at}if {item} is not _MISSING:",
                    *checks,
                ]
        if "additionalProperties" in schema:
            extra = schema["additionalProperties"]
            names = self.const(frozenset(named))
            if extra is False:
                body.append(f"{at}if not {names}.issuperset({v}): return False")
            else:
                key, item = self.name("_k"), self.name("_v")
                checks = self.statements(extra, item, inner + 2)
                if checks:
                    body += [f"{at}for {key}, {item} in {v}.items():", f"{at}    if {key} not in {names}:", *checks]
        for keyword, op in (("minProperties", "<"), ("maxProperties", ">")):
            if keyword in schema:
                body.append(f"{at}if len({v}) {op} {self.const(_bound(schema[keyword]))}: return False")
        if sure or not body:
            return body
        return ["    " * depth + f"if type({v}) is dict:", *body]

    def _items(self, items: Any, v: str, depth: int, sure: bool) -> list[str]:
        if isinstance(items, list):
            raise _Unsupported("items")  # the draft-07 tuple form
        item = self.name("_v")
        inner = depth if sure else depth + 1
        checks = self.statements(items, item, inner + 1)
        if not checks:
            return []
        loop = ["    " * inner + f"for {item} in {v}:", *checks]
        return loop if sure else ["    " * depth + f"if type({v}) is list:", *loop]

    def ref(self, ref: Any) -> str:
        """The function checking a local `$ref` target (made once; refs may be recursive)."""
        if not isinstance(ref, str) or not self.local_refs or not (ref == "#" or ref.startswith("#/")):
            raise _Unsupported("$ref")
        name = self.refs.get(ref)
        if name is None:
            target = _pointer(self.root, ref)
            if target is _MISSING:
                raise _Unsupported("$ref")
            name = self.refs[ref] = self.name("_r")  # named before it is made: it may refer to itself
            self.define(self.statements(target, "v", 1), name)
        return name


def _types(value: Any) -> frozenset[type]:
    names = cast("list[Any]", value) if isinstance(value, list) else [value]
    out: set[type] = set()
    for name in names:
        if not isinstance(name, str) or name not in _TYPES:
            raise _Unsupported("type")
        out |= _TYPES[name]
    return frozenset(out)


def _bound(limit: Any) -> Any:
    if type(limit) not in _NUMBER:
        raise _Unsupported("bound")  # e.g. draft-04's boolean exclusiveMaximum
    return limit


def _search(pattern: Any) -> Callable[[str], Any]:
    if not isinstance(pattern, str):
        raise _Unsupported("pattern")
    try:
        return re.compile(pattern).search  # what jsonschema does: re.search, unanchored
    except re.error:
        raise _Unsupported("pattern") from None


def _values(values: Any) -> frozenset[tuple[bool, Any]]:
    """`enum`/`const` values as (is a boolean, value): JSON equality, where 1 == 1.0 and true != 1."""
    if not isinstance(values, list):
        raise _Unsupported("enum")
    allowed: set[tuple[bool, Any]] = set()
    for item in cast("list[Any]", values):
        if type(item) not in (str, int, float, bool, type(None)):
            raise _Unsupported("enum")  # arrays and objects: left to jsonschema
        allowed.add((type(item) is bool, item))
    return frozenset(allowed)


def _schemas(value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _Unsupported("anyOf/allOf")
    return cast("list[Any]", value)


def _pointer(root: Any, ref: str) -> Any:
    """The subschema a local `$ref` ("#" or "#/a/b") names, or _MISSING."""
    node = root
    for part in ref[2:].split("/") if ref != "#" else ():
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = cast("dict[str, Any]", node)[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(cast("list[Any]", node)):
            node = cast("list[Any]", node)[int(key)]
        else:
            return _MISSING
    return node


def _nested_ids(schema: Any) -> bool:
    """Whether anything below the root holds `$id` or an anchor, which re-base or name `$ref` targets
    (a property so named counts too: the fast check then just leaves `$ref` to jsonschema)."""
    stack: list[tuple[Any, bool]] = [(schema, True)]
    while stack:
        node, is_root = stack.pop()
        if isinstance(node, dict):
            mapping = cast("dict[str, Any]", node)
            if not is_root and any(key in mapping for key in ("$id", "$anchor", "$dynamicAnchor")):
                return True
            stack.extend((child, False) for child in mapping.values())
        elif isinstance(node, list):
            stack.extend((child, False) for child in cast("list[Any]", node))
    return False
