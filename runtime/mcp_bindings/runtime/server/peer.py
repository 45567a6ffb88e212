"""The server's lifecycle: which version and capabilities a request is served under (a `PeerView`).

Handshake versions (2024-11-05 .. 2025-11-25) negotiate once with `initialize`, and the view lasts
for the connection. The stateless version (2026-07-28) carries protocol version, client
capabilities and client identity in every request's `_meta`, so each request gets its own view.
Versions, `_meta` keys and error codes come from the generated tables (`registry`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache, cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel, ValidationError

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.spec import MetaKeys, ProtocolTables
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request, invalid_field, validation_error
from mcp_bindings.runtime.server.host import ServerHost, host_for, server_capabilities
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.runtime import Plan
    from mcp_bindings.runtime.server.stubs import ServerStub

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass
class PeerView:
    """What one request is served under: its version and what the client declared."""

    protocol: ProtocolTables
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    log_level: str | None
    advertised: dict[str, Any] = field(default_factory=dict)
    # Who the transport authenticated (HTTP bearer auth: `AccessToken.principal`); None: nobody.
    principal: str | None = None
    # method -> how it is served under this view (`ServerRuntime.plan`); `advertised` is fixed once
    # the view is set up, so what depends on it is decided once per view.
    plans: dict[str, Plan] = field(default_factory=dict, repr=False, compare=False)
    # A stateless view's: (a copy of) the request `_meta` it was read from (`Lifecycle.view_of`).
    meta: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    stateless: bool = field(init=False)  # plain attributes: read on every request's path
    version: str = field(init=False, repr=False, compare=False)  # the wire version (`protocol`'s)

    def __post_init__(self) -> None:
        info = self.protocol.info
        self.stateless = info.stateless
        self.version = info.version

    def session_meta(self, keys: MetaKeys) -> dict[str, Any]:
        """This view as the `_meta` of a stateless-era request, under that era's `keys` (for a server
        written against a stateless-era stub that serves a handshake-era client)."""
        pairs = (
            (keys.protocol_version, self.version),
            (keys.client_capabilities, self.client_capabilities),
            (keys.client_info, self.client_info),
        )
        return {key: value for key, value in pairs if key is not None}


def stateless_meta(request: Request) -> dict[str, Any] | None:
    """The request's `_meta` if it names a stateless-era protocol version, else None."""
    params = request.params
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and not registry.protocol_version_keys().isdisjoint(meta):
        return meta
    return None


class MetaModels:
    """A stateless request's params validated with its `_meta` validated once: a client sends the same
    `_meta` (its version, capabilities and identity) with every request, and validating it into the
    same models again is more than half of validating a small request's params. The `_meta` model
    made from the last `_meta` of each params type is kept, and passed in its place (pydantic takes a
    model instance of the field's class as it is) while the next request's `_meta` is equal; any other
    `_meta` is validated in full. Requests of equal `_meta` share that model: read it, never change it."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        # a params validator -> (a copy of the last `_meta` it validated, the model made of it)
        self._last: dict[Any, tuple[dict[str, Any], BaseModel]] = {}

    def typed(self, validate: Any, params: dict[str, Any], seen: dict[str, Any] | None = None) -> Any:
        """`params` validated by `validate` (a params model's cached `validate_python`). `seen`: a
        dict known to equal their `_meta` (the request's view's `meta`), kept in its place, so that
        the next request of that view is matched by identity instead of compared again."""
        meta = params.get("_meta")
        kept = self._last.get(validate)
        if kept is not None and (kept[0] is seen or kept[0] == meta):
            return validate({**params, "_meta": kept[1]}, by_name=False, context=versions.WIRE_CONTEXT)
        typed = validate(params, by_name=False, context=versions.WIRE_CONTEXT)
        model = getattr(typed, "meta", None)
        if type(meta) is dict and isinstance(model, BaseModel):
            self._last[validate] = (seen if seen is not None else dict(meta), model)
        return typed


_IDENTITY = attrgetter("name", "version", "title", "description", "website_url", "icons")


class ServerIdentity:
    """The server's identity per version (`server_info`), built once and rebuilt only when one of
    the server's identity attributes has changed since (they are compared on every call: cheap).
    The dict returned is shared: read it, never change it."""

    def __init__(self, server: ServerStub) -> None:
        self.server = server
        self._built: dict[ProtocolTables, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def __call__(self, protocol: ProtocolTables) -> dict[str, Any]:
        key = _IDENTITY(self.server)
        built = self._built.get(protocol)
        if built is not None and built[0] == key:
            return built[1]
        info = server_info(self.server, protocol)
        self._built[protocol] = (copy.deepcopy(key), info)  # a copy: an icon changed in place is seen
        return info


class Lifecycle:
    """Builds the views of one server: limits its capabilities to each version, answers
    `initialize` and `server/discover`, and reads the `_meta` of stateless requests.

    What a server advertises to a version is built once and kept with what it was built from (the
    server's `capabilities` and the extensions and methods registered on it, `extensions`); a view
    reuses it, and the gate checks of its plans, while those are unchanged, so a stateless request
    (a view each) does not recompute them, and a method or extension registered at run time, or a
    capability changed, shows in the next request's view."""

    def __init__(self, server: ServerStub, supported_versions: list[str] | None = None) -> None:
        self.server = server
        self.identity = ServerIdentity(server)
        self._host: ServerHost | None = None  # `host_for(server)`, found on first use
        self._ready: set[ProtocolTables] = set()  # versions whose validators were prepared (`prepared`)
        self._pending: dict[ProtocolTables, list[set[Any]]] = {}  # what `prepare` has left to build
        # The last stateless view made (its `meta`: a copy of the `_meta` it was read from; `view_of`).
        self._last: PeerView | None = None
        # protocol -> (what it was built from, the advertised capabilities, the gate-checked plans)
        self._advertised: dict[ProtocolTables, tuple[tuple[Any, Any, Any], dict[str, Any], dict[str, Plan]]] = {}
        # stateless version served -> (its tables, its `_meta` keys of capabilities, identity, log level)
        self._stateless_keys: dict[Any, tuple[ProtocolTables, str, str | None, str | None]] = {}
        # By name or wire version; an unknown one is the caller's mistake: say so now. Every version
        # (the default) is listed when first needed: a handshake with a version of the `mcp_bindings`
        # namespace is answered without reading the entry points (`registry`).
        self._every = not supported_versions
        if supported_versions:
            self._split([registry.wire_version(v) for v in supported_versions])

    def _split(self, supported: list[str]) -> tuple[list[str], list[str]]:
        self.__dict__["handshake_supported"] = [v for v in supported if not registry.info(v).stateless]
        self.__dict__["stateless_supported"] = [v for v in supported if registry.info(v).stateless]
        return self.__dict__["handshake_supported"], self.__dict__["stateless_supported"]

    @cached_property
    def handshake_supported(self) -> list[str]:
        """Wire versions served with a handshake, oldest first."""
        return self._split(list(registry.versions()))[0]

    @cached_property
    def stateless_supported(self) -> list[str]:
        """Wire versions served without one (each request's `_meta`), oldest first."""
        return self._split(list(registry.versions()))[1]

    @cached_property
    def serves_handshake(self) -> bool:
        """Whether any handshake version is served (read before a first request's `initialize`)."""
        if self._every and any(not i.stateless for i in registry.on_path().values()):
            return True
        return bool(self.handshake_supported)

    def _handshake_version(self, requested: str) -> str:
        """The version `initialize` settles on: the requested one where served, else the newest."""
        if self._every and "handshake_supported" not in self.__dict__:
            found = registry.on_path().get(requested)  # every version is served: one on the path is
            if found is not None and found.version == requested and not found.stateless:
                return requested
        return requested if requested in self.handshake_supported else self.handshake_supported[-1]

    # -- handshake era -----------------------------------------------------------------------

    def initialize(self, request: Request) -> tuple[PeerView, bytes]:
        """The view `initialize` negotiates, and its result JSON."""
        params = request.params or {}
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_field("params.protocolVersion", "must be a string", "string_type")
        version = self._handshake_version(requested)
        protocol = registry.protocol(version, own=self.server.protocol)
        try:
            versions.validate(protocol.client_requests[v2025.INITIALIZE].params, params)
        except ValidationError as exc:
            raise validation_error(exc) from None
        view = self._view(protocol, params.get("capabilities") or {}, params.get("clientInfo") or {}, None)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": view.advertised,
            "serverInfo": self.identity(protocol),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return view, jsonrpc.dumps(result)

    # -- stateless era -----------------------------------------------------------------------

    def stateless_view(self, request: Request, principal: str | None = None) -> PeerView:
        return self.view_of(request, stateless_meta(request), principal)

    def view_of(self, request: Request, meta: dict[str, Any] | None, principal: str | None = None) -> PeerView:
        """The view of a stateless request whose `stateless_meta` is `meta`, for `principal`.

        A client sends the same `_meta` with every request: the last view is returned again while
        the `_meta`, the principal and what the server advertises (`advertised`, which notices what
        changed at run time) are the same. A view is not changed once made, so requests (concurrent
        ones too) share it: read it, never change it."""
        view = self._again(meta, principal)
        if view is not None:
            return view
        view = self._stateless_view(request, meta)
        view.principal = principal
        if meta is not None:
            view.meta = dict(meta)
            self._last = view
        return view

    def repeated(self, params: Any, principal: str | None) -> PeerView | None:
        """`view_of`'s common case read straight from a request's params: the last view, where their
        `_meta` equals the one it was read from (which named a stateless version, so no
        `stateless_meta` is needed) and the version's validators are prepared; else None (the full
        path: `stateless_meta`, then `view_of`)."""
        if type(params) is not dict:
            return None
        view = self._again(params.get("_meta"), principal)
        return view if view is not None and view.protocol in self._ready else None

    def _again(self, meta: Any, principal: str | None) -> PeerView | None:
        """The last stateless view while `meta`, the principal and what the server advertises are
        what it was made with."""
        view = self._last
        if view is None or view.principal != principal or view.meta != meta:
            return None
        return view if self.advertised(view.protocol)[0] is view.advertised else None

    def _stateless_view(self, request: Request, meta: dict[str, Any] | None) -> PeerView:
        if meta is not None:  # a version served before: its tables and `_meta` keys are known
            version = meta.get(self._version_key)
            known = self._stateless_keys.get(version) if isinstance(version, str) else None
            if known is not None:
                protocol, capabilities_key, info_key, level_key = known
                capabilities = meta.get(capabilities_key)
                if isinstance(capabilities, dict):
                    info = meta.get(info_key) if info_key else None
                    level = meta.get(level_key) if level_key else None
                    return self._view(
                        protocol,
                        capabilities,
                        info if isinstance(info, dict) else {},
                        level if level in LOG_LEVELS else None,
                    )
        return self._read_view(request, meta)

    @cached_property
    def _version_key(self) -> str:
        """The `_meta` key of the protocol version, as the newest stateless version names it."""
        newest = registry.newest_stateless()
        return (newest.meta.protocol_version if newest is not None else None) or ""

    def _read_view(self, request: Request, meta: dict[str, Any] | None) -> PeerView:
        newest = registry.newest_stateless()
        key = newest.meta.protocol_version if newest is not None else None
        if meta is None or newest is None:
            if self.stateless_supported and not self.handshake_supported:
                raise McpError(INVALID_PARAMS, f"Invalid params: params._meta[{key!r}] is required")
            if not self.stateless_supported:
                raise McpError(INVALID_REQUEST, f"Invalid Request: {request.method} before initialize")
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {request.method} needs params._meta[{key!r}] (stateless) "
                "or an initialize handshake first",
            )
        version = meta.get(key) if key else None
        if not isinstance(version, str):
            raise McpError(INVALID_PARAMS, f"Invalid params: params._meta[{key!r}] is required")
        if version not in self.stateless_supported:
            code = newest.error_codes.unsupported_protocol_version or INVALID_PARAMS
            raise McpError(
                code,
                f"Unsupported protocol version {version!r}",
                {"supported": self.stateless_supported, "requested": version},
            )
        protocol = registry.protocol(version, own=self.server.protocol)
        keys = protocol.meta
        if keys.client_capabilities:  # `view_of` reads the next request of this version by these keys
            self._stateless_keys[version] = (protocol, keys.client_capabilities, keys.client_info, keys.log_level)
        capabilities = meta.get(keys.client_capabilities) if keys.client_capabilities else None
        if not isinstance(capabilities, dict):
            raise McpError(
                INVALID_PARAMS, f"Invalid params: params._meta[{keys.client_capabilities!r}] must be an object"
            )
        info = meta.get(keys.client_info) if keys.client_info else None
        level = meta.get(keys.log_level) if keys.log_level else None
        return self._view(
            protocol, capabilities, info if isinstance(info, dict) else {}, level if level in LOG_LEVELS else None
        )

    def discover(self, view: PeerView) -> bytes:
        """The `server/discover` result for a view."""
        spec = view.protocol.client_requests[v2026.SERVER_DISCOVER]
        data: dict[str, Any] = {
            "supportedVersions": self.stateless_supported + list(reversed(self.handshake_supported)),
            "capabilities": view.advertised,
            "serverInfo": self.identity(view.protocol),
            "resultType": "complete",
            "ttlMs": self.server.cache_ttl_ms,
            "cacheScope": self.server.cache_scope,
        }
        if view.protocol.meta.server_info:
            data["_meta"] = {view.protocol.meta.server_info: self.identity(view.protocol)}
        if self.server.instructions:
            data["instructions"] = self.server.instructions
        try:
            return versions.to_json(versions.validate(spec.result, data))
        except ValidationError:
            data.pop("serverInfo")  # only in versions whose DiscoverResult has it
            return versions.to_json(versions.validate(spec.result, data))

    # -- both --------------------------------------------------------------------------------

    def _view(
        self, protocol: ProtocolTables, capabilities: dict[str, Any], info: dict[str, Any], level: str | None
    ) -> PeerView:
        advertised, plans = self.advertised(protocol)
        return PeerView(protocol, capabilities, info, level, advertised, plans=plans)

    def advertised(self, protocol: ProtocolTables) -> tuple[dict[str, Any], dict[str, Plan]]:
        """What the server advertises to `protocol` (shared: read it, never change it), and the plans
        gate-checked against it (`ServerRuntime.plan` fills them); rebuilt when what it is built from
        changed: the server's `capabilities`, the extensions and methods registered on it."""
        host = self._host
        if host is None:  # the server object's own host, which keeps what is registered on it
            host = self._host = host_for(self.server)
        methods = host.methods
        inputs = (
            self.server.capabilities,
            methods.extensions if methods is not None else None,
            methods.handlers if methods is not None else None,
        )
        built = self._advertised.get(protocol)
        if built is not None and built[0] == inputs:
            return built[1], built[2]
        advertised = self.capabilities_for(protocol)
        plans: dict[str, Plan] = {}
        # Copies: a capability or setting changed in place must not change what is compared against.
        kept = (copy.deepcopy(inputs[0]), copy.deepcopy(inputs[1]), dict(inputs[2]) if inputs[2] is not None else None)
        self._advertised[protocol] = (kept, advertised, plans)
        return advertised, plans

    def capabilities_for(self, protocol: ProtocolTables) -> dict[str, Any]:
        """The server's capabilities limited to what a version defines and the server implements."""
        known = protocol.server_capability_paths
        out: dict[str, Any] = {}
        for key, value in self.server.capabilities.items():
            if key not in known:
                continue
            if isinstance(value, dict):
                out[key] = {
                    k: v for k, v in value.items() if f"{key}.{k}" in known or key in ("experimental", "extensions")
                }
            else:
                out[key] = value
        return server_capabilities(self.server, protocol, out)  # where the version puts extensions

    def prepared(self, protocol: ProtocolTables) -> bool:
        if protocol in self._ready:
            return True
        if (type(self.server), protocol.version) in _PREPARED:
            self._ready.add(protocol)
            return True
        return False

    def prepare(self, protocol: ProtocolTables) -> None:
        """Build the validators and serializers of the next method this server implements: one
        method a call, until all are built (once per process and version). Models are built on first
        use (import stays cheap and a process never pays for methods it does not serve); the runtime
        calls this after each answer (`Session.defer`) until it is done, which keeps the build off the
        answers and off most methods' first call, and out of the steady state's memory profile. One
        method a call: a request that arrives meanwhile (the first `tools/list` after the handshake)
        waits for one method's build at most, not for every method's."""
        key = (type(self.server), protocol.version)
        if key in _PREPARED:
            return
        pending = self._pending.get(protocol)
        if pending is None:
            pending = self._pending[protocol] = self._to_prepare(protocol)
        if pending:
            for target in pending.pop():
                versions.prepare(target)
        if not pending:
            _PREPARED.add(key)
            self._ready.add(protocol)
            del self._pending[protocol]

    def _to_prepare(self, protocol: ProtocolTables) -> list[set[Any]]:
        """What `prepare` builds, per method this server implements (the last first)."""
        stub = self.server.protocol
        out: list[set[Any]] = []
        for spec in protocol.client_requests.values():
            stub_spec = stub.client_requests.get(spec.method)
            if spec.builtin or stub_spec is None or stub_spec.builtin or not self.server.implements(stub_spec):
                continue
            out.append({spec.params, spec.result, stub_spec.params, stub_spec.result} - {None})
        out.reverse()
        return out


_PREPARED: set[tuple[type[ServerStub], str]] = set()  # (server class, version) pairs already prepared


def server_info(server: ServerStub, protocol: ProtocolTables) -> dict[str, Any]:
    """The server's identity as `protocol` can carry it (its `Implementation` type's fields)."""
    full = {
        "name": server.name,
        "version": server.version,
        "title": server.title,
        "description": server.description,
        "websiteUrl": server.website_url,
        "icons": [dict(icon) for icon in server.icons] if server.icons is not None else None,
    }
    keys = _implementation_keys(protocol)
    return {key: value for key, value in full.items() if value is not None and key in keys}


@cache
def _implementation_keys(protocol: ProtocolTables) -> frozenset[str]:
    """Wire names of the version's `Implementation` fields, found where the version reports the
    server's identity: `InitializeResult.serverInfo`, else the serverInfo key of a result's `_meta`."""
    initialize = protocol.client_requests.get(v2025.INITIALIZE)
    model: Any = None
    if initialize is not None:
        model = _field_model(initialize.result, "serverInfo")
    elif protocol.meta.server_info is not None:
        discover = protocol.client_requests.get(v2026.SERVER_DISCOVER)
        meta_model = _field_model(discover.result, "_meta") if discover is not None else None
        model = _field_model(meta_model, protocol.meta.server_info)
    if model is None:
        return frozenset(("name", "version"))
    return frozenset(info.alias or name for name, info in model.model_fields.items())


def _field_model(model: Any, wire_name: str) -> type[BaseModel] | None:
    """The model class a model's field (by wire name) holds, through `X | None` and `Annotated`."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for name, info in model.model_fields.items():
        if (info.alias or name) == wire_name:
            candidates = [info.annotation, *get_args(info.annotation)]
            return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return None
