"""Descriptors the generated code is made of; the runtime reads nothing else about a protocol version.

Each generated version package holds one `VersionInfo` (`about.INFO`: what the runtime needs to know
before loading the version) and one `ProtocolTables` (`methods.PROTOCOL`: its methods, capabilities,
error codes and result types). Kept free of I/O and of anyio so that importing a version stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any, Generic, Literal, TypeVar, cast

Side = Literal["server", "client"]
Direction = Literal["client_to_server", "server_to_client"]
Kind = Literal["request", "notification"]
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Capability:
    """A dotted path into one side's capabilities object, e.g. server `resources.subscribe`."""

    side: Side
    path: tuple[str, ...]

    def present_in(self, capabilities: Mapping[str, Any] | None) -> bool:
        node: Any = capabilities
        for key in self.path:
            if not isinstance(node, Mapping):
                return False
            value = cast("Mapping[str, Any]", node).get(key)
            if value is None or value is False:
                return False
            node = value
        return True

    def __str__(self) -> str:
        return f"{self.side} capability `{'.'.join(self.path)}`"


@dataclass(frozen=True, slots=True)
class ParamCapability:
    """A further capability a request needs when one of its params is used (e.g. sampling with tools)."""

    param: str
    capability: Capability
    equals: Any = None
    present: bool = False

    def applies(self, params: Mapping[str, Any] | None) -> bool:
        if not params or self.param not in params:
            return False
        return self.present or params[self.param] == self.equals


@dataclass(slots=True)
class Deferred:
    """A model of a generated version package named by its models package and name, looked up (and
    so created) on first use: a process creates only the classes its traffic needs. The generated
    method tables name their models this way."""

    models: ModuleType
    name: str

    def resolve(self) -> Any:
        return getattr(self.models, self.name)

    def __repr__(self) -> str:
        return f"Deferred({self.models.__name__}.{self.name})"


def _resolved(value: Any) -> Any:
    return value.resolve() if type(value) is Deferred else value


class MethodSpec:
    """One method of a version: its direction, handler name, models, capability gates.

    `message`, `params` and `result` may be given as `Deferred`: each is resolved on first access
    (and kept), so listing a version's methods creates none of their models."""

    __slots__ = (
        "_message",
        "_params",
        "_result",
        "builtin",
        "direction",
        "gate",
        "handler",
        "input_required",
        "kind",
        "method",
        "optional_handler",
        "param_gates",
        "params_required",
        "runtime_served",
    )
    method: str
    kind: Kind
    direction: Direction
    handler: str  # snake_case name of the handler / client method
    params_required: bool
    input_required: bool  # may be answered with InputRequiredResult (2026-07-28)
    gate: Capability | None
    param_gates: tuple[ParamCapability, ...]
    optional_handler: bool  # a server may leave it unimplemented; it then answers an empty result
    builtin: bool  # implemented by the runtime itself (lifecycle, ping, ...): no stub handler
    runtime_served: bool  # a stub handler the runtime serves where the author leaves it out (tasks/*)

    def __init__(
        self,
        *,
        method: str,
        kind: Kind,
        direction: Direction,
        handler: str,
        message: Any,
        params: Any,
        params_required: bool,
        result: Any,
        input_required: bool,
        gate: Capability | None,
        param_gates: tuple[ParamCapability, ...],
        optional_handler: bool,
        builtin: bool,
        runtime_served: bool = False,
    ) -> None:
        self.method = method
        self.kind = kind
        self.direction = direction
        self.handler = handler
        self._message = message
        self._params = params
        self.params_required = params_required
        self._result = result
        self.input_required = input_required
        self.gate = gate
        self.param_gates = param_gates
        self.optional_handler = optional_handler
        self.builtin = builtin
        self.runtime_served = runtime_served

    @property
    def message(self) -> type[Any]:
        """The whole message model (e.g. CallToolRequest)."""
        if type(self._message) is Deferred:
            self._message = self._message.resolve()
        return self._message

    @property
    def params(self) -> Any:
        """The params model or type alias; None when untyped."""
        if type(self._params) is Deferred:
            self._params = self._params.resolve()
        return self._params

    @property
    def result(self) -> Any:
        """The result model (requests); None for notifications."""
        if type(self._result) is Deferred:
            self._result = self._result.resolve()
        return self._result

    def replace(self, **changes: Any) -> MethodSpec:
        """A copy with `changes` (keyword names as in the constructor)."""
        fields = {name.lstrip("_"): getattr(self, name) for name in self.__slots__}
        return MethodSpec(**{**fields, **changes})

    def __repr__(self) -> str:
        return f"MethodSpec({self.method!r}, {self.kind}, {self.direction})"

    def needed_capabilities(self, params: Mapping[str, Any] | None) -> list[Capability]:
        needed = [self.gate] if self.gate else []
        needed += [pg.capability for pg in self.param_gates if pg.applies(params)]
        return needed


# The `resultType` of an InputRequiredResult on the wire (a constant of that schema type, 2026-07-28 on).
INPUT_REQUIRED = "input_required"


class _Entry(Generic[V]):
    """A property reading one key of the instance's mapping `table` (None where it lacks the key)."""

    def __init__(self, table: str, key: str) -> None:
        self.table = table
        self.key = key

    def __get__(self, instance: Any, owner: type[Any] | None = None) -> V | None:
        return getattr(instance, self.table).get(self.key)


@dataclass(frozen=True, slots=True)
class MetaKeys:
    """The reserved `_meta` keys a version's schema defines (2026-07-28 on; none before), by the
    part after the prefix: `{"protocolVersion": "io.modelcontextprotocol/protocolVersion", ...}`."""

    keys: Mapping[str, str]
    protocol_version = _Entry[str]("keys", "protocolVersion")
    client_capabilities = _Entry[str]("keys", "clientCapabilities")
    client_info = _Entry[str]("keys", "clientInfo")
    log_level = _Entry[str]("keys", "logLevel")
    server_info = _Entry[str]("keys", "serverInfo")
    subscription_id = _Entry[str]("keys", "subscriptionId")


@dataclass(frozen=True, slots=True)
class ErrorCodes:
    """The error codes of a version (its schema's error constants plus policy/error_codes.json), by
    generated name: `{"METHOD_NOT_FOUND": -32601, "RESOURCE_NOT_FOUND": -32002, ...}`. The entries
    below name the MCP-specific codes the runtime acts on; None where the version has no such code."""

    codes: Mapping[str, int]
    resource_not_found = _Entry[int]("codes", "RESOURCE_NOT_FOUND")
    header_mismatch = _Entry[int]("codes", "HEADER_MISMATCH")
    missing_required_client_capability = _Entry[int]("codes", "MISSING_REQUIRED_CLIENT_CAPABILITY")
    unsupported_protocol_version = _Entry[int]("codes", "UNSUPPORTED_PROTOCOL_VERSION")


@dataclass(frozen=True, slots=True)
class Reshape:
    """A definition (`type`) whose content this version holds in the list field `field` and another
    version in the plain fields `sources` (policy/reshapes.json of the generator, which compiles its
    moves: `gather` a value into the plain fields, `spread` it into the list); applied by `protocol.reshape`."""

    type: str
    field: str
    sources: tuple[str, ...]
    gather: Callable[[Mapping[str, Any]], Any]
    spread: Callable[[Mapping[str, Any]], Any]
    # definition (its Python name) -> where a `type` sits in its values (keys from the root, "*" every item)
    places: Mapping[str, tuple[tuple[str, ...], ...]]
    listed: bool = True  # whether the version `places` are of holds the content in `field` (else: plain fields)


@dataclass(frozen=True, slots=True)
class Rename:
    """A field of definition `type` that the source version of a pair names `source` and the destination
    `destination` (policy/crossing.json `renamed_fields`); `places` as `Reshape.places`, of the destination."""

    type: str
    source: str
    destination: str
    places: Mapping[str, tuple[tuple[str, ...], ...]]


@dataclass(frozen=True, slots=True)
class Degrade:
    """A content block `type` the destination of a pair lacks: it `becomes(block)`, the generator's
    function of policy/crossing.json's template. `places` as `Reshape.places`, of the source."""

    type: str
    becomes: Callable[[Mapping[str, Any]], Any]
    places: Mapping[str, tuple[tuple[str, ...], ...]]


@dataclass(frozen=True, slots=True)
class ParamOutcome:
    """What becomes of a request param one version of a pair has and the other not: refused
    ("error"), left out ("drop", only when it `equals` that value if given), or made ("generate",
    where the params hold every field of `equals`, a mapping: the member of a union requiring it)."""

    outcome: str
    reason: str  # the policy's reason ("" for the default refusal)
    equals: Any = None


@dataclass(frozen=True, slots=True)
class Crossing:
    """What a value of one version loses or becomes in another: generated per pair of versions into
    the later one's `crossing.py` (the generator's `crossing.py` and policy/crossing.json)."""

    # model a value crosses as -> path in it -> the wire keys the source defines there and the destination does not
    dropped: Mapping[str, Mapping[tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # content blocks the destination lacks, and what each becomes there
    degrade: tuple[Degrade, ...] = ()
    # request method -> param -> its outcome
    params: Mapping[str, Mapping[str, ParamOutcome]] = field(default_factory=lambda: MappingProxyType({}))
    # source error code -> the destination's code of the same error
    codes: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    # (method, data key, code, becomes): a code the source overloads that the destination tells apart
    overloaded: tuple[tuple[str, str, int, int], ...] = ()
    # what moves where the two versions hold content differently: reshaped definitions, renamed fields
    reshapes: tuple[Reshape, ...] = ()
    renames: tuple[Rename, ...] = ()


NO_CROSSING = Crossing()


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """What the runtime knows of a generated version without loading its models."""

    version: str  # the wire protocol version, e.g. "2025-11-25"
    package: str  # the subpackage of `mcp_bindings`, e.g. "v2025_11_25"
    stateless: bool  # no initialize handshake: every request carries its own `_meta` (2026-07-28 on)
    batches: bool  # JSON-RPC batches are part of the version (2025-03-26 only)
    schema_sha256: str
    meta: MetaKeys
    # The name it was generated under (the registry's key for it): the wire version for a pinned
    # version, another name for one generated later (e.g. "draft", whose wire version may be a pinned
    # one's). Empty: the same as `version`.
    name: str = ""
    # The JSON Schema dialect the version's schema.json is written in ("draft-07", "2020-12"): also
    # the default of a tool schema without `$schema` (SEP-1613 made 2020-12 both, with 2025-11-25).
    schema_dialect: str = "draft-07"
    # A released protocol version (its name is a protocol version and it speaks that version), not a
    # draft or a version generated under another name: only these are ever a default.
    released: bool = False

    @property
    def key(self) -> str:
        """The name the registry knows this version by."""
        return self.name or self.version


@dataclass(frozen=True, slots=True, eq=False)  # one object per version: compared and hashed by identity
class ProtocolTables:
    """Everything about one protocol version that the runtime acts on, generated from its schema."""

    info: VersionInfo
    client_requests: Mapping[str, MethodSpec]  # what a client sends (a server handles them)
    client_notifications: Mapping[str, MethodSpec]
    server_requests: Mapping[str, MethodSpec]  # what a server sends on the wire (handshake era)
    server_notifications: Mapping[str, MethodSpec]
    input_requests: Mapping[str, MethodSpec]  # asks embedded in an InputRequiredResult (2026-07-28 on)
    error_codes: ErrorCodes
    server_capability_paths: frozenset[str]  # every dotted path of the capabilities object
    client_capability_paths: frozenset[str]
    # The InputRequiredResult model (or a `Deferred` naming it), where the version has one.
    input_required_model: Any
    # Stateless HTTP routing: request method -> the params field `Mcp-Name` mirrors (policy/routing.json).
    routing: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # subscriptions/listen: filter key -> the server notification it opts in to (policy/listen_filters.json);
    # the capability it needs is that notification's gate.
    listen_filters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # definition name -> how its content crosses to a version that holds it in other fields
    reshapes: Mapping[str, Reshape] = field(default_factory=lambda: MappingProxyType({}))
    _input_required: Any = field(default=None, init=False, repr=False)

    @property
    def input_required_result(self) -> type[Any] | None:
        """The InputRequiredResult model, where the version has one (created on first use)."""
        if self._input_required is None and self.input_required_model is not None:
            object.__setattr__(self, "_input_required", _resolved(self.input_required_model))
        return self._input_required

    @property
    def version(self) -> str:
        return self.info.version

    @property
    def stateless(self) -> bool:
        return self.info.stateless

    @property
    def meta(self) -> MetaKeys:
        return self.info.meta

    def handled_by(self, side: Side) -> tuple[Mapping[str, MethodSpec], ...]:
        """The tables whose methods `side` handles: a server the client's, a client the server's."""
        if side == "server":
            return (self.client_requests, self.client_notifications)
        return (self.server_requests, self.input_requests, self.server_notifications)

    def capability_paths(self, side: Side) -> frozenset[str]:
        return self.server_capability_paths if side == "server" else self.client_capability_paths

    def stated_server_info(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The server's identity as an `initialize` or `server/discover` result of this version
        states it: its `serverInfo`, else (2026-07-28 on, where the discover result has no such
        field) its `_meta[<serverInfo key>]`; {} where it states none. What a client learns of the
        server, and what a recording of either era says of its server (`recording.crossed_replay`)."""
        info = result.get("serverInfo")
        if not isinstance(info, Mapping):
            meta = result.get("_meta")
            key = self.meta.server_info
            info = cast("Mapping[str, Any]", meta).get(key) if key and isinstance(meta, Mapping) else None
        return dict(cast("Mapping[str, Any]", info)) if isinstance(info, Mapping) else {}

    def is_input_required(self, result: object) -> bool:
        """Whether a handler's result asks the client for input (an InputRequiredResult)."""
        model = self.input_required_model
        if model is None:
            return False
        # By name first: a version whose InputRequiredResult was never used has not created it.
        name = model.name if type(model) is Deferred else model.__name__
        return type(result).__name__ == name and type(result) is self.input_required_result
