"""What generated modules import of the server side: the bases of a version's `Server` stub."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..server.client_calls import ClientCallsStub
    from ..server.stubs import ServerStub

__all__ = ["ClientCallsStub", "ServerStub"]


def _stubs() -> ModuleType:
    from ..server import stubs

    return stubs


def _client_calls() -> ModuleType:
    from ..server import client_calls

    return client_calls


__getattr__ = exports(globals(), {"ServerStub": _stubs, "ClientCallsStub": _client_calls})
