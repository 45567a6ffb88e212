"""What generated modules import of the server side: the bases of a version's `Server` stub."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..server.client_calls import ClientCallsStub as ClientCallsStub
    from ..server.stubs import ServerStub as ServerStub


__getattr__ = exports(globals(), {"..server.stubs": ("ServerStub",), "..server.client_calls": ("ClientCallsStub",)})
