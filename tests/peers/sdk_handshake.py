"""The official SDK client's handshake at any protocol version, for the scripts here that run in
the official SDK's own environment (`sdk_client.py`, `sdk_scaleout_client.py`: run as files, so
this module is found beside them)."""

from __future__ import annotations

from typing import Any

import mcp_types as types

LATEST = "2025-11-25"  # what `ClientSession.initialize()` offers in mcp 2.3.0


async def sdk_initialize(session: Any, version: str, client_name: str) -> Any:
    """Initialize `session` at `version`: the SDK's own `initialize()` for its latest version; an
    older one takes the handshake by hand (the SDK offers only its latest). Returns the result."""
    if version == LATEST:
        return await session.initialize()
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=session._build_capabilities(version),  # noqa: SLF001
                client_info=types.Implementation(name=client_name, version="2.3.0"),
            )
        ),
        types.InitializeResult,
    )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result
