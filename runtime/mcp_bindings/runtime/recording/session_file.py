"""The `.mcpsession` file: versioned, line-oriented JSON, validated when read.

Line 1 is the header, every further line one message as it crossed the wire:

    {"mcpsession": 1, "created": "...", "transport": "stdio", "server": {"command": [...]}, "redaction": {...}}
    {"seq": 1, "t": 0.0012, "dir": "client", "transport": "stdio", "session": "...", "version": null, "message": {...}}

`dir` is who sent it (`client`: client to server, `server`: server to client); `t` is seconds since
the recording started; `version` the protocol version negotiated so far (null before); `session` the
stdio proxy's own id of the connection, or the `Mcp-Session-Id` of an HTTP session; `http` (HTTP only)
the request's method and the response's status and headers, redacted, and for a server message the
request whose response stream carried it (`related`; null: the GET stream, the session's; absent
where the stream does not say, and over stdio). A frame that was not JSON is kept
as text in `raw` instead of `message`. Every line is checked against `HEADER_SCHEMA` / `ENTRY_SCHEMA`
(JSON Schema 2020-12) when read; a line that fails gets `SessionFileError` naming the file and line.
A file is untrusted input: besides the schema, `t` must be a finite number, a message's `id` a
string, a number or null (JSON-RPC's), and no line nested deeper than `MAX_DEPTH`."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import jsonschema
from jsonschema.exceptions import best_match

FORMAT_VERSION = 1
MAX_DEPTH = 200  # arrays and objects nested in one line

Direction = Literal["client", "server"]

HEADER_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["mcpsession", "created", "transport", "server"],
    "properties": {
        "mcpsession": {"const": FORMAT_VERSION},
        "created": {"type": "string"},
        "transport": {"enum": ["stdio", "http"]},
        "server": {
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"}},
                "url": {"type": "string"},
            },
        },
        "redaction": {"type": "object"},
    },
}

ENTRY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["seq", "t", "dir", "transport"],
    "oneOf": [{"required": ["message"]}, {"required": ["raw"]}],
    "properties": {
        "seq": {"type": "integer", "minimum": 1},
        "t": {"type": "number", "minimum": 0},
        "dir": {"enum": ["client", "server"]},
        "transport": {"enum": ["stdio", "http"]},
        "session": {"type": ["string", "null"]},
        "version": {"type": ["string", "null"]},
        "message": {"type": "object", "properties": {"id": {"type": ["string", "number", "null"]}}},
        "raw": {"type": "string"},
        "http": {
            "type": "object",
            "properties": {
                "method": {"type": "string"},
                "status": {"type": "integer"},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "related": {"type": ["string", "integer", "null"]},
            },
        },
    },
}


class SessionFileError(Exception):
    """A session file that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class Entry:
    """One message of a recording, as it crossed the wire (see the module docstring)."""

    seq: int
    t: float
    dir: Direction
    transport: str
    message: dict[str, Any] | None
    raw: str | None = None
    session: str | None = None
    version: str | None = None
    http: dict[str, Any] | None = None
    line: int = 0  # where it was read from (0: not read from a file)

    @property
    def method(self) -> str | None:
        method = (self.message or {}).get("method")
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        return (self.message or {}).get("id")

    @property
    def is_request(self) -> bool:
        return self.method is not None and "id" in (self.message or {})

    @property
    def is_notification(self) -> bool:
        return self.method is not None and "id" not in (self.message or {})

    @property
    def is_response(self) -> bool:
        message = self.message or {}
        return self.method is None and ("result" in message or "error" in message)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "t": round(self.t, 6), "dir": self.dir, "transport": self.transport}
        out["session"] = self.session
        out["version"] = self.version
        if self.message is not None:
            out["message"] = self.message
        else:
            out["raw"] = self.raw or ""
        if self.http is not None:
            out["http"] = self.http
        return out


@dataclass
class Recording:
    """A whole session file: the header and the entries in the order they crossed the wire."""

    header: dict[str, Any]
    entries: list[Entry] = field(default_factory=lambda: [])
    path: Path | None = None

    @property
    def versions(self) -> list[str]:
        return sorted({e.version for e in self.entries if e.version})

    def where(self, entry: Entry) -> str:
        name = self.path.name if self.path is not None else "the recording"
        return f"{name}:{entry.line}" if entry.line else f"{name} #{entry.seq}"


def new_header(transport: str, server: dict[str, Any], redaction: dict[str, Any]) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {
        "mcpsession": FORMAT_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "transport": transport,
        "server": server,
        "redaction": redaction,
    }


_header_validator = jsonschema.Draft202012Validator(HEADER_SCHEMA)
_entry_validator = jsonschema.Draft202012Validator(ENTRY_SCHEMA)


def _problem(validator: jsonschema.Draft202012Validator, value: Any) -> str | None:
    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    said = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    return f"{where or 'the line'}: {said}"


def _too_deep(value: Any) -> bool:
    """Whether `value` nests arrays and objects deeper than `MAX_DEPTH` (walked without recursion)."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH + 1):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
        ]
        if not level:
            return False
    return True


def _entry(value: dict[str, Any], line: int) -> Entry:
    return Entry(
        seq=value["seq"],
        t=float(value["t"]),
        dir=value["dir"],
        transport=value["transport"],
        line=line,
        **{name: value.get(name) for name in ("message", "raw", "session", "version", "http")},
    )


def _decode_line(path: Path, number: int, text: str, last: bool) -> Any:
    try:
        value = json.loads(text)
    except RecursionError:
        raise SessionFileError(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        if last and not text.endswith("\n"):
            raise SessionFileError(
                f"{path}:{number}: the last line is not complete JSON ({exc.msg}): the file looks truncated "
                "(was the recording interrupted?); delete that line or record again"
            ) from None
        raise SessionFileError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})") from None
    if _too_deep(value):
        raise SessionFileError(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels")
    return value


def read_recording(path: str | os.PathLike[str]) -> Recording:
    """Read and validate a `.mcpsession` file; `SessionFileError` names the line of any problem."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read the session file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise SessionFileError(f"{path}: not a session file (not UTF-8 text)") from None
    if not lines:
        raise SessionFileError(f"{path}:1: the file is empty (a session file starts with its header line)")
    header = _decode_line(path, 1, lines[0], len(lines) == 1)
    if not isinstance(header, dict) or "mcpsession" not in header:
        raise SessionFileError(f'{path}:1: not a session file (the first line has no "mcpsession" format version)')
    if header["mcpsession"] != FORMAT_VERSION:
        raise SessionFileError(
            f"{path}:1: session format version {header['mcpsession']!r} is not supported "
            f"(this mcp-bindgen reads version {FORMAT_VERSION})"
        )
    problem = _problem(_header_validator, header)
    if problem is not None:
        raise SessionFileError(f"{path}:1: invalid header: {problem}")
    recording = Recording(header=header, path=path)
    for index, text in enumerate(lines[1:], start=2):
        if not text.strip():
            continue
        value = _decode_line(path, index, text, index == len(lines))
        problem = _problem(_entry_validator, value)
        if problem is None and not math.isfinite(value["t"]):
            problem = f"t: {value['t']} is not a finite number of seconds"
        if problem is not None:
            raise SessionFileError(f"{path}:{index}: invalid entry: {problem}")
        recording.entries.append(_entry(value, index))
    return recording


class SessionWriter:
    """Appends entries to a session file, one flushed line each (a crash leaves whole lines)."""

    def __init__(self, path: str | os.PathLike[str], header: dict[str, Any]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("w", encoding="utf-8")
        self._write(header)
        self.count = 0

    def _write(self, value: dict[str, Any]) -> None:
        self._file.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def write(self, entry: Entry) -> None:
        self.count += 1
        self._write(entry.to_json())

    def close(self) -> None:
        self._file.close()
