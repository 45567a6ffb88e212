"""Writing a server's results of its stub's own version as JSON: checked on the way out unless the
server's class says its results are validated as they are built, and, for a stateless-era client,
stamped with the server's identity (`_meta`) and its caching policy (`ttlMs`, `cacheScope`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.result_checks import ResultChecks
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.server.peer import PeerView, server_info

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.stubs import ServerStub


class ResultWriter:
    def __init__(
        self,
        server: ServerStub,
        identity: Callable[[ProtocolTables], Any] | None = None,
        results: ResultChecks | None = None,
    ) -> None:
        self.server = server
        # The server's identity per version (`peer.ServerIdentity`: built once, shared).
        self.identity: Callable[[ProtocolTables], Any] = identity or partial(server_info, server)
        # result type -> whether it has the fields stamped (ttl_ms, cache_scope, meta); protocol -> _meta JSON
        self._stamp_fields: dict[type[BaseModel], tuple[bool, ...]] = {}
        self._meta_bytes: dict[ProtocolTables, tuple[Any, tuple[bytes, set[type[BaseModel]]] | None]] = {}
        # Whether results are re-validated as they are written (`ServerStub.check_results`; every
        # result, whatever the server class says, with `MCP_BINDINGS_CHECK_RESULTS=1`: tests, debugging).
        self.check_results = server.check_results or os.environ.get("MCP_BINDINGS_CHECK_RESULTS") == "1"
        # The output check, with what it remembers of large results (shared by the server's connections).
        self.results = results or ResultChecks()

    def result_json(self, result: BaseModel, what: str) -> bytes:
        """A result of the stub's own type, as JSON: checked on the way out unless the server's
        class says its results are validated as they are built."""
        if self.check_results:
            return self.results.check(result, what)
        return result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True)

    def stamped_json(self, method: str, result: BaseModel, view: PeerView) -> bytes:
        """A stateless-era result of the stub's own version (and the client's): stamped with the
        server's identity and caching policy, checked, as JSON."""
        stamped = self._stamped_json(result, view)
        if stamped is not None:
            return stamped
        return self.result_json(self.stamped(result, view), f"the {method} result")

    def _stamped_json(self, result: BaseModel, view: PeerView) -> bytes | None:
        """The common case of `stamped` without copying the model: the result has no `_meta` of its
        own and its caching fields already hold the server's settings (or the version has none), so
        the server's identity is written into the result's JSON as its `_meta`, and the result is
        checked on the way out as `versions.checked_json` does (with the identity the first time a
        type is written under it, `_stamp`). None where that does not apply, or the check fails
        (`stamped` then does it the long way, and reports it)."""
        model: Any = result
        cls = type(result)
        has = self._stamp_fields.get(cls)
        if has is None:
            has = self._stamp_fields[cls] = tuple(
                name in cls.model_fields for name in ("ttl_ms", "cache_scope", "meta")
            )
        if (has[0] or has[1]) and (
            (has[0] and model.ttl_ms != self.server.cache_ttl_ms and "ttl_ms" not in model.model_fields_set)
            or (has[1] and model.cache_scope != self.server.cache_scope and "cache_scope" not in model.model_fields_set)
        ):
            return None
        if has[2]:
            try:
                stamp = self._stamp(view.protocol)
            except (TypeError, ValueError):  # not JSON (an icon's value): the long way says what
                return None
            if stamp is not None and model.meta is not None:
                return None
        else:
            stamp = None
        data = result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True)
        if stamp is None:
            return data if not self.check_results or self.results.check_bytes(cls, data) else None
        meta, checked = stamp
        stamped = meta + b"}" if data == b"{}" else meta + b"," + data[1:]  # `_meta` comes first in the models
        if self.check_results:  # the whole the first time a type is written under this identity, then its own JSON
            if not self.results.check_bytes(cls, data if cls in checked else stamped):
                return None
            checked.add(cls)
        return stamped

    def _stamp(self, protocol: ProtocolTables) -> tuple[bytes, set[type[BaseModel]]] | None:
        """`{"_meta":{<serverInfo key>:<the server's identity>}` (open: the result's JSON follows; None
        where the version has no such key), kept while the identity (`peer.ServerIdentity`, rebuilt
        when it changes) is the same, with the result types it was checked in: a result's fields are
        checked independently of one another, so once the identity passed as a type's `_meta`, a
        result of that type is checked without it."""
        identity = self.identity(protocol)
        kept = self._meta_bytes.get(protocol)
        if kept is not None and kept[0] is identity:
            return kept[1]
        key = protocol.meta.server_info
        stamp = None if key is None else (b'{"_meta":' + jsonrpc.dumps({key: identity}), set[type[BaseModel]]())
        self._meta_bytes[protocol] = (identity, stamp)
        return stamp

    def stamped(self, result: Any, view: PeerView) -> Any:
        """Stateless-era results carry the server's identity and its caching policy."""
        updates: dict[str, Any] = {}
        if not isinstance(result, BaseModel):
            return result
        model: Any = result
        fields = type(result).model_fields
        key = view.protocol.meta.server_info
        if "meta" in fields and key is not None:
            meta = dict(versions.dump(model.meta) if model.meta is not None else {})
            meta.setdefault(key, self.identity(view.protocol))
            updates["meta"] = versions.checked(fields["meta"].annotation, meta, "the result's _meta")
        for name, value in (("ttl_ms", self.server.cache_ttl_ms), ("cache_scope", self.server.cache_scope)):
            if name in fields and name not in result.model_fields_set:
                updates[name] = value
        if not updates:
            return result
        # Not validated here as a whole: the result is checked when it is written (`versions.checked_json`),
        # which also checks the server's cache settings (`cache_ttl_ms`, `cache_scope`) against the schema.
        return result.model_copy(update=updates)
