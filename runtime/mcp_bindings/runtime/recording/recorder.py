"""What every recording proxy shares: turning frames into redacted entries of a session file, with
the time, direction, session and the protocol version negotiated so far."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from mcp_bindings.runtime.recording.redaction import DEFAULT, Redaction
from mcp_bindings.runtime.recording.session_file import Direction, Entry, SessionWriter
from mcp_bindings.v2025_11_25 import names as v2025

STATELESS_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def meta_value(message: Mapping[str, Any], key: str) -> Any:
    """`params._meta[key]` of a message (None where it has none)."""
    params = message.get("params")
    meta = cast("dict[str, Any]", params).get("_meta") if isinstance(params, dict) else None
    return cast("dict[str, Any]", meta).get(key) if isinstance(meta, dict) else None


@dataclass(eq=False)
class Recorder:
    """Writes each frame it is shown as one entry; tracks the negotiated version per session (the
    `initialize` result, or the stateless era's `_meta` protocol version of each request)."""

    writer: SessionWriter
    transport: str
    redaction: Redaction = DEFAULT
    started: float = field(init=False, default_factory=time.monotonic)
    seq: int = field(init=False, default=0)
    _versions: dict[str | None, str] = field(init=False, default_factory=dict[str | None, str])
    _initialize_ids: dict[str | None, set[Any]] = field(init=False, default_factory=dict[str | None, set[Any]])

    def _track_version(
        self, direction: Direction, message: dict[str, Any], session: str | None, http: dict[str, Any] | None
    ) -> None:
        headers = (http or {}).get("headers")
        if isinstance(headers, dict):
            stated = {k.lower(): v for k, v in cast("dict[str, Any]", headers).items()}.get("mcp-protocol-version")
            if isinstance(stated, str):
                self._versions[session] = stated
        if direction == "client" and isinstance(message.get("params"), dict):
            if message.get("method") == v2025.INITIALIZE and "id" in message:
                self._initialize_ids.setdefault(session, set()).add(message["id"])
            version = meta_value(message, STATELESS_VERSION_KEY)
            if isinstance(version, str):
                self._versions[session] = version
            return
        # An HTTP session gets its id with the initialize answer: its request had none.
        asked = self._initialize_ids.get(session, set()) | self._initialize_ids.get(None, set())
        result = message.get("result")
        if direction == "server" and message.get("id") in asked and isinstance(result, dict):
            version = cast("dict[str, Any]", result).get("protocolVersion")
            if isinstance(version, str):
                self._versions[session] = version

    def frame(
        self,
        direction: Direction,
        frame: bytes | dict[str, Any],
        *,
        session: str | None = None,
        http: dict[str, Any] | None = None,
    ) -> None:
        message: Any
        raw: str | None = None
        if isinstance(frame, dict):
            message = frame
        else:
            try:
                message = json.loads(frame)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                message, raw = None, frame.decode("utf-8", "replace")
        if message is not None:
            self._track_version(direction, cast("dict[str, Any]", message), session, http)
        self.seq += 1
        self.writer.write(
            Entry(
                seq=self.seq,
                t=time.monotonic() - self.started,
                dir=direction,
                transport=self.transport,
                message=self.redaction.json(message) if message is not None else None,
                raw=self.redaction.text(raw) if raw is not None else None,
                session=session,
                version=self._versions.get(session),
                http=self._http(http),
            )
        )

    def _http(self, http: dict[str, Any] | None) -> dict[str, Any] | None:
        if http is None:
            return None
        out = dict(http)
        headers = out.get("headers")
        if isinstance(headers, dict):
            out["headers"] = self.redaction.header_map(cast("dict[str, str]", headers))
        return out
