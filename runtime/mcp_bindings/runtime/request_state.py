"""Integrity protection for `requestState` (2026-07-28 multi-round-trip requests).

The state a handler puts in an `InputRequiredResult` travels through the client and comes back on
the retry. The runtime seals it (HMAC-SHA256 over the method, the round number and the state) so a
client cannot forge or alter it, and so the number of rounds is bounded.
"""

from __future__ import annotations

import base64
import os

import orjson

from .errors import INVALID_PARAMS, McpError
from .jsonrpc import as_object

# Rounds of input requests one request may take, in either direction (server, bridge, client).
MAX_INPUT_ROUNDS = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class RequestStateSealer:
    def __init__(self, secret: bytes | None = None, max_rounds: int = MAX_INPUT_ROUNDS) -> None:
        self._secret = secret or os.urandom(32)  # what secrets.token_bytes uses
        self.max_rounds = max_rounds

    def _mac(self, payload: bytes) -> bytes:
        # Imported on first use: hmac pulls in OpenSSL's hashlib (~3.5 MB of RSS), which a server
        # that never issues requestState (every handshake-era session) has no need for.
        import hashlib
        import hmac

        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def seal(self, method: str, state: str, round_number: int) -> str:
        if round_number > self.max_rounds:
            raise McpError(INVALID_PARAMS, f"{method}: more than {self.max_rounds} rounds of input requests")
        payload = orjson.dumps({"m": method, "r": round_number, "s": state})
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def open(self, method: str, sealed: str) -> tuple[str, int]:
        """The handler's state and its round number; -32602 if the state was altered or forged."""
        try:
            payload_text, mac_text = sealed.split(".", 1)
            payload = _unb64(payload_text)
            import hmac

            valid = hmac.compare_digest(self._mac(payload), _unb64(mac_text))
            data = as_object(orjson.loads(payload)) if valid else None
        except (ValueError, orjson.JSONDecodeError):
            data = None
        if data is None or data.get("m") != method:
            raise McpError(
                INVALID_PARAMS,
                "Invalid params: requestState failed its integrity check (altered or not issued by this server)",
            )
        return str(data["s"]), int(data["r"])
