"""The output check of a server's results, kept cheap where results are large (`ResultChecks`).

Every result a stub's handler returns is checked against its model on the way out
(`versions.checked_json`): written to JSON, then validated again from that JSON, so that a model
built with `model_construct`, changed in place after validation, or holding NaN/Infinity (written
as null) is refused instead of sent. That check is a function of the result's type and its JSON
bytes only. For large results (`LARGE` bytes of JSON and more) two things change, neither of which
changes what is refused:

* **Content already checked is not checked again.** The digest (BLAKE2b, 128 bits) of JSON that
  passed is kept per result type (the last `KEPT` of them); the same bytes again pass without a
  second validation. A list a server answers many times (`tools/list` of thousands of tools,
  which takes the validator tens of milliseconds) costs its serialisation and a hash. Anything
  changed in the result, in place or not, changes its JSON and is checked again.
* **No copy of the content for the check.** Validating the JSON builds every string of the result
  again (a 10 MB text resource: 10 MB more at the peak). Instead the result is validated from its
  JSON-mode Python dump, which is the same data as the JSON but shares the result's strings:
  what the runtime does with every decoded request, with one difference made up for here,
  non-finite floats (the dump keeps NaN, the JSON writes null: refused as the JSON check would).

One `ResultChecks` per server object (`ServerHost.results`), shared by its connections.
"""

from __future__ import annotations

import math
from hashlib import blake2b
from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_bindings.runtime.protocol import versions

__all__ = ["KEPT", "LARGE", "MEMO_MAX", "ResultChecks"]

LARGE = 64 * 1024  # bytes of JSON from which a result takes the large-result path
MEMO_MAX = 8 * 1024 * 1024  # larger results are not hashed (a hash of 10 MB costs about what its check does)
KEPT = 32  # digests kept per server (the oldest forgotten first)


class ResultChecks:
    """The output check (`check`) with its memory of large results that passed."""

    __slots__ = ("_passed",)

    def __init__(self) -> None:
        self._passed: dict[tuple[type[Any], bytes], None] = {}  # insertion-ordered: oldest first

    def check(self, value: BaseModel, what: str) -> bytes:
        """`value`'s wire JSON, checked against its model (an internal error naming `what` if not)."""
        data = value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_none=True)
        if len(data) < LARGE:  # the usual result: its validator called here (once per result written)
            try:
                value.__pydantic_validator__.validate_json(data, by_name=False, context=versions.WIRE_CONTEXT)
            except ValidationError:
                versions.check_json(type(value), data, what)  # raises the refusal, worded in one place
                raise  # pragma: no cover - the same check fails again
            return data
        key = self._key(type(value), data)
        if key is not None and key in self._passed:
            return data
        _check_dump(value, what)
        self._keep(key)
        return data

    def check_bytes(self, model: type[BaseModel], data: bytes) -> bool:
        """Whether JSON bytes made by the runtime (a result with the server's `_meta` written in)
        pass `model`; the large ones remembered like `check`'s."""
        key = self._key(model, data) if len(data) >= LARGE else None
        if key is not None and key in self._passed:
            return True
        try:
            model.__pydantic_validator__.validate_json(data, by_name=False, context=versions.WIRE_CONTEXT)
        except ValidationError:
            return False
        if key is not None:
            self._keep(key)
        return True

    def forget(self) -> None:
        self._passed.clear()

    @staticmethod
    def _key(model: type[Any], data: bytes) -> tuple[type[Any], bytes] | None:
        if len(data) > MEMO_MAX:
            return None
        return model, blake2b(data, digest_size=16).digest()

    def _keep(self, key: tuple[type[Any], bytes] | None) -> None:
        if key is None:
            return
        passed = self._passed
        passed[key] = None
        if len(passed) > KEPT:
            del passed[next(iter(passed))]


def _check_dump(value: BaseModel, what: str) -> None:
    """`value` checked from its JSON-mode dump (its strings shared, not copied)."""
    dump = value.__pydantic_serializer__.to_python(value, mode="json", by_alias=True, exclude_none=True)
    _nulls_for_non_finite(dump)
    versions.checked(type(value), dump, what)


def _nulls_for_non_finite(root: Any) -> None:
    """Put None where the dump holds NaN or Infinity, as its JSON does (the check then refuses it
    where the schema does: a float field is never nullable on the wire)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for key, item in items:
            if type(item) is float:
                if not math.isfinite(item):
                    node[key] = None
            elif isinstance(item, (dict, list)):
                stack.append(item)
