"""What generated modules import of the shared protocol layer: the descriptors of a version's
tables (`spec`), the `_meta` type, the handler contexts and custom-method declarations."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..protocol.context import NotificationContext, RequestContext
    from ..protocol.custom_methods import Extension
    from ..protocol.meta import Meta
    from ..protocol.spec import (
        Capability,
        Crossing,
        Deferred,
        ErrorCodes,
        Gather,
        MetaKeys,
        MethodSpec,
        ParamCapability,
        ParamOutcome,
        ProtocolTables,
        Rename,
        Reshape,
        Spread,
        VersionInfo,
    )

__all__ = [
    "Capability",
    "Crossing",
    "Deferred",
    "ErrorCodes",
    "Extension",
    "Gather",
    "Meta",
    "MetaKeys",
    "MethodSpec",
    "NotificationContext",
    "ParamCapability",
    "ParamOutcome",
    "ProtocolTables",
    "Rename",
    "RequestContext",
    "Reshape",
    "Spread",
    "VersionInfo",
]


def _spec() -> ModuleType:
    from ..protocol import spec

    return spec


def _meta() -> ModuleType:
    from ..protocol import meta

    return meta


def _context() -> ModuleType:
    from ..protocol import context

    return context


def _custom_methods() -> ModuleType:
    from ..protocol import custom_methods

    return custom_methods


__getattr__ = exports(
    globals(),
    {
        **dict.fromkeys(
            (
                "Capability",
                "Crossing",
                "Deferred",
                "ErrorCodes",
                "Gather",
                "MetaKeys",
                "MethodSpec",
                "ParamCapability",
                "ParamOutcome",
                "ProtocolTables",
                "Rename",
                "Reshape",
                "Spread",
                "VersionInfo",
            ),
            _spec,
        ),
        "Meta": _meta,
        "NotificationContext": _context,
        "RequestContext": _context,
        "Extension": _custom_methods,
    },
)
