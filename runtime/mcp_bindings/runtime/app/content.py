"""Content an author returns, version-neutral: text, `Image`, `Audio`, prompt `Message`s, and any
content block model of a generated version, turned into wire JSON (dicts) that the app's stub
version then validates. Audio reaches clients of versions without audio as an embedded blob
(the generated crossing tables), like everything else that crosses versions."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, cast

import orjson
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from mcp_bindings.runtime.protocol import versions

__all__ = ["Audio", "Embedded", "Image", "Message", "assistant", "json_text", "to_content", "user"]

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


@dataclass(frozen=True, slots=True)
class _Media:
    data: bytes
    mime_type: str
    kind: ClassVar[str]

    @classmethod
    def from_file(cls, path: str | Path, mime_type: str | None = None) -> Self:
        return cls(Path(path).read_bytes(), mime_type or _guess(path, cls.__dataclass_fields__["mime_type"].default))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "data": base64.b64encode(self.data).decode("ascii"), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Image(_Media):
    """An image to return from a tool or prompt: `Image(png_bytes)`, `Image.from_file("chart.png")`."""

    mime_type: str = "image/png"
    kind: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class Audio(_Media):
    """An audio clip to return from a tool or prompt (an embedded blob for clients before 2025-03-26)."""

    mime_type: str = "audio/wav"
    kind: ClassVar[str] = "audio"


@dataclass(frozen=True, slots=True)
class Embedded:
    """A resource embedded in a tool result or a prompt message: `Embedded("file:///a.txt", "text")`
    (text) or `Embedded(uri, png_bytes, "image/png")` (a blob)."""

    uri: str
    data: str | bytes
    mime_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if isinstance(self.data, str):
            resource.update(mimeType=self.mime_type or "text/plain", text=self.data)
        else:
            blob = base64.b64encode(self.data).decode("ascii")
            resource.update(mimeType=self.mime_type or "application/octet-stream", blob=blob)
        return {"type": "resource", "resource": resource}


def _guess(path: str | Path, default: str) -> str:
    guessed, _ = mimetypes.guess_type(str(path))
    return guessed or default


Content = str | Image | Audio | Embedded | BaseModel | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """A prompt message (or a sampling message): `user("...")`, `assistant(Image(...))`."""

    role: Literal["user", "assistant"]
    content: Content

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "content": _as_block(self.content)}


def user(content: Content) -> Message:
    return Message("user", content)


def assistant(content: Content) -> Message:
    return Message("assistant", content)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def content_block(value: object) -> dict[str, Any] | None:
    """`value` as one content block's wire JSON, or None when it is not content."""
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, Image | Audio | Embedded):
        return value.to_json()
    if isinstance(value, BaseModel):
        value = versions.dump(value)
    if isinstance(value, Mapping):
        mapping = cast("Mapping[str, Any]", value)
        return dict(mapping) if mapping.get("type") in CONTENT_TYPES else None
    return None


def json_text(value: object) -> str:
    """Anything pydantic can write as JSON, as JSON text."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    return orjson.dumps(to_jsonable_python(value, by_alias=True)).decode()


def to_content(value: object) -> list[dict[str, Any]]:
    """A tool's plain return value as content blocks: text, images, audio, content models, a list of
    those; None is no content; anything else is written as JSON text."""
    if value is None:
        return []
    items = cast("list[object]", value) if isinstance(value, list | tuple) else [value]
    return [_as_block(item) for item in items]


def _as_block(value: object) -> dict[str, Any]:
    """`value` as a content block: content as it is, anything else written as JSON text."""
    block = content_block(value)
    return block if block is not None else text_block(json_text(value))


def is_content_model(tp: object) -> bool:
    """Whether `tp` is a content block model of some generated version (its `type` is a content kind)."""
    if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return False
    field = tp.model_fields.get("type")
    if field is None:
        return False
    args = getattr(field.annotation, "__args__", ())
    return bool(args) and all(a in CONTENT_TYPES for a in args)
