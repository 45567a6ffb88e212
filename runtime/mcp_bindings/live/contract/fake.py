"""Values that satisfy a JSON Schema the mock did not write: a tool's `outputSchema` from a lock file,
copied from whatever server was locked, or written by hand. The schema is untrusted input.

jsf (JSON Schema Faker) draws the values. It is a maintained generator of the usual keywords, `$ref`,
formats and patterns, but it also reads keywords of its own that run code or reach outside the
schema: `$provider`, `$state` and a string `$fixed` are `eval`-ed, and a `$ref` that is not a local
fragment is opened as a file or a URL. So jsf never sees the schema as written; it sees `for_jsf`'s
copy of it:

- every keyword that starts with `$` and is not JSON Schema's own is dropped (a JSON Schema validator
  ignores keywords it does not know, so dropping them keeps the schema's meaning);
- a `$ref` must point into the schema itself (`#...`), anything else is refused;
- sizes are bounded: `minItems` / `minLength` / `minProperties` over the bounds below are refused,
  the maxima are lowered to them, and a `pattern` whose longest match is over `MAX_LENGTH` is refused;
- an array without `items` gets `items: {}` (the same meaning; jsf fails without it);
- `uniqueItems` is left to the check below (jsf loops for ever on a domain too small to fill it).

Every value is then checked against the schema as written (jsonschema, no remote references) and
drawn again, up to `ATTEMPTS` times. Whatever jsf raises becomes `SchemaUnsatisfied` with one line
naming what failed, never a traceback."""

from __future__ import annotations

import hashlib
import importlib
import random
import re
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

ATTEMPTS = 20
MAX_ITEMS = 100  # items of an array, properties of an object
MAX_LENGTH = 10_000  # characters of a string
UNBOUNDED_REPEAT = 100  # how many times rstr repeats `*` and `+` at the most

# JSON Schema's own `$` keywords (2020-12 and draft-07); every other `$` keyword is a generator's.
STANDARD_DOLLAR = frozenset(
    {
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
        "$comment",
    }
)
# Where a schema holds schemas: one, a list of them, or a map of names to them.
ONE = ("additionalItems", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else")
ONE += ("unevaluatedItems", "unevaluatedProperties", "contentSchema", "items")
MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
# (lower, upper, what the mock draws at the most, jsf's upper when the schema has none)
BOUNDS = (("minItems", "maxItems", MAX_ITEMS, 5), ("minProperties", "maxProperties", MAX_ITEMS, 5))
BOUNDS += (("minLength", "maxLength", MAX_LENGTH, 50),)


class SchemaUnsatisfied(Exception):
    pass


def require_extra() -> None:
    """Import what `generate` draws with now: without the `mock` extra a command fails at its start,
    with the extra named (`cli.main`), rather than on every call."""
    importlib.import_module("faker")
    importlib.import_module("jsf")


def generate(schema: dict[str, Any], seed: str) -> Any:
    """A value satisfying `schema`, the same for the same `seed`."""
    from faker import Faker
    from jsf import JSF

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise SchemaUnsatisfied(f"the schema is not valid JSON Schema: {exc.message}") from None
    validator = Draft202012Validator(schema)
    safe = for_jsf(schema)
    for attempt in range(ATTEMPTS):
        number = int.from_bytes(hashlib.sha256(f"{seed}/{attempt}".encode()).digest()[:8], "big")
        random.seed(number)
        Faker.seed(number)
        try:
            value = JSF(safe).generate()
            valid = validator.is_valid(value)
        except RecursionError:
            raise SchemaUnsatisfied("the schema nests too deeply to draw a value from") from None
        except Exception as exc:  # jsf's own failures: one line, never a traceback
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise SchemaUnsatisfied(f"no value could be drawn ({type(exc).__name__}: {first[:200]})") from None
        if valid:
            return value
    raise SchemaUnsatisfied(f"no value satisfying the schema was found in {ATTEMPTS} draws")


def for_jsf(schema: Any, where: str = "#") -> Any:
    """The copy of `schema` jsf may see (the module's doc says what changes and why)."""
    if not isinstance(schema, dict):
        return schema
    source = cast("dict[str, Any]", schema)
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key.startswith("$") and key not in STANDARD_DOLLAR:
            continue
        if key == "uniqueItems":
            continue
        if key == "$ref" and not (isinstance(value, str) and value.startswith("#") and value.count("#") == 1):
            raise SchemaUnsatisfied(f"{where}: the mock follows only a $ref into the schema itself, not {value!r}")
        out[key] = _children(key, value, f"{where}/{key}")
    if out.get("type") == "array" and "items" not in out and "prefixItems" not in out:
        out["items"] = {}  # any items, as the schema says; jsf needs the keyword to draw an array
    for low, high, limit, default in BOUNDS:
        _bound(out, (low, high), limit, default, where)
    if isinstance(out.get("pattern"), str):
        _check_pattern(out["pattern"], f"{where}/pattern")
    for name in cast("dict[str, Any]", out.get("patternProperties") or {}):
        _check_pattern(name, f"{where}/patternProperties")
    return out


def _children(key: str, value: Any, where: str) -> Any:
    if key in ONE and isinstance(value, dict):
        return for_jsf(value, where)
    if key in MANY and isinstance(value, list):
        return [for_jsf(v, f"{where}/{i}") for i, v in enumerate(cast("list[Any]", value))]
    if key in NAMED and isinstance(value, dict):
        return {name: for_jsf(v, f"{where}/{name}") for name, v in cast("dict[str, Any]", value).items()}
    return value


def _bound(schema: dict[str, Any], keys: tuple[str, str], limit: int, default: int, where: str) -> None:
    low, high = keys
    least, most = schema.get(low), schema.get(high)
    least = least if isinstance(least, (int, float)) and not isinstance(least, bool) else None
    most = most if isinstance(most, (int, float)) and not isinstance(most, bool) else None
    if least is not None and least > limit:
        raise SchemaUnsatisfied(f"{where}: {low} {least} is over what the mock draws ({limit})")
    if most is not None and most > limit:
        schema[high] = max(limit, int(least or 0))
    elif most is None and least is not None and least > default:
        schema[high] = int(least)  # jsf's own upper bound would be under the lower one


def _check_pattern(pattern: str, where: str) -> None:
    try:
        longest = _longest(re.compile(pattern).pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise SchemaUnsatisfied(f"{where}: {pattern[:80]!r} is not a pattern the mock can draw from ({exc})") from None
    if longest > MAX_LENGTH:
        raise SchemaUnsatisfied(f"{where}: {pattern[:80]!r} matches strings longer than the mock draws ({MAX_LENGTH})")


def _longest(pattern: str) -> int:
    """An upper bound of the length of what rstr draws from `pattern` (`*` and `+` repeat at most
    `UNBOUNDED_REPEAT` times there)."""
    from re import _parser as parser  # type: ignore[attr-defined]  # the stdlib's own regex parser

    return _span(parser.parse(pattern))


def _span(items: Any) -> int:
    from re import _constants as const  # type: ignore[attr-defined]

    total = 0
    for op, arg in items:
        if op in (const.MAX_REPEAT, const.MIN_REPEAT, const.POSSESSIVE_REPEAT):
            _, most, sub = arg
            times = UNBOUNDED_REPEAT if most == const.MAXREPEAT else most
            total += times * _span(sub)
        elif op == const.SUBPATTERN:
            total += _span(arg[-1])
        elif op in (const.BRANCH,):
            total += max((_span(b) for b in arg[1]), default=0)
        elif op in (const.ASSERT, const.ASSERT_NOT, const.AT):
            continue
        else:
            total += 1
        if total > MAX_LENGTH:
            return total
    return total
