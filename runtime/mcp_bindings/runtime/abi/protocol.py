"""What generated modules import of the shared protocol layer: the descriptors of a version's
tables (`spec`), the `_meta` type, the handler contexts and custom-method declarations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..protocol.context import NotificationContext as NotificationContext
    from ..protocol.context import RequestContext as RequestContext
    from ..protocol.custom_methods import Extension as Extension
    from ..protocol.meta import Meta as Meta
    from ..protocol.spec import Capability as Capability
    from ..protocol.spec import Crossing as Crossing
    from ..protocol.spec import Deferred as Deferred
    from ..protocol.spec import Degrade as Degrade
    from ..protocol.spec import ErrorCodes as ErrorCodes
    from ..protocol.spec import MetaKeys as MetaKeys
    from ..protocol.spec import MethodSpec as MethodSpec
    from ..protocol.spec import ParamCapability as ParamCapability
    from ..protocol.spec import ParamOutcome as ParamOutcome
    from ..protocol.spec import ProtocolTables as ProtocolTables
    from ..protocol.spec import Rename as Rename
    from ..protocol.spec import Reshape as Reshape
    from ..protocol.spec import VersionInfo as VersionInfo


__getattr__ = exports(
    globals(),
    {
        "..protocol.spec": (
            "Capability",
            "Crossing",
            "Deferred",
            "Degrade",
            "ErrorCodes",
            "MetaKeys",
            "MethodSpec",
            "ParamCapability",
            "ParamOutcome",
            "ProtocolTables",
            "Rename",
            "Reshape",
            "VersionInfo",
        ),
        "..protocol.meta": ("Meta",),
        "..protocol.context": ("NotificationContext", "RequestContext"),
        "..protocol.custom_methods": ("Extension",),
    },
)
