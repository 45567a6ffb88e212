"""Load an OpenAPI description: a file or an `https://` URL, JSON or YAML, OpenAPI 3.0 / 3.1 as it is
and Swagger 2.0 converted (`swagger2`). The result is plain JSON data, whatever the input's format."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import json
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DescriptionError
from .swagger2 import convert

# A description larger than this is refused (the largest public ones, GitHub's and Stripe's, are
# about 10 MB as JSON).
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Loaded:
    document: dict[str, Any]  # OpenAPI 3.x
    origin: str  # the path or URL, for messages and generated headers
    sha256: str
    openapi: str  # the input's own version: "3.0.3", "3.1.0", "2.0"
    url: str | None  # the URL it came from (relative server URLs resolve against it)


def _loopback(url: str) -> bool:
    """An http URL to this machine (`127.0.0.1`, `::1`, `localhost`): no network in between to trust."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_source(source: str, timeout: float = 30.0) -> tuple[bytes, str | None]:
    """The bytes of a path, an `https://` URL or an `http://` URL of a loopback host, and the URL
    (None for a file)."""
    scheme = urllib.parse.urlsplit(source).scheme.lower()
    if scheme == "https" or (scheme == "http" and _loopback(source)):
        try:
            with urllib.request.urlopen(source, timeout=timeout) as answer:  # noqa: S310 - https or loopback http, above
                raw = answer.read(MAX_BYTES + 1)
                final = answer.geturl()
        except OSError as exc:
            raise DescriptionError(f"could not fetch {source}: {exc}") from None
        if len(raw) > MAX_BYTES:
            raise DescriptionError(f"{source} is larger than {MAX_BYTES} bytes")
        if urllib.parse.urlsplit(final).scheme.lower() != "https" and not _loopback(final):
            raise DescriptionError(f"{source} redirected to {final}, which is not https")
        return raw, final
    if scheme in ("http", "ftp", "file"):
        raise DescriptionError(
            f"{source}: only https:// URLs, http:// URLs of this machine (127.0.0.1, localhost) and files are "
            "read (fetch it yourself, then pass the file)"
        )
    path = Path(source)
    if not path.is_file():
        raise DescriptionError(f"OpenAPI description {source} not found")
    return path.read_bytes(), None


def _jsonable(node: Any) -> Any:
    """YAML's extras as JSON: dates as ISO strings, integer keys (`200:`) as strings."""
    if isinstance(node, dict):
        return {str(k).lower() if isinstance(k, bool) else str(k): _jsonable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_jsonable(v) for v in node]
    if isinstance(node, datetime.date | datetime.datetime):
        return node.isoformat()
    if isinstance(node, bytes):
        return node.decode("latin-1")
    return node


def parse(raw: bytes, origin: str) -> dict[str, Any]:
    text = raw.decode("utf-8-sig", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            doc: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DescriptionError(f"{origin} is not valid JSON ({exc})") from None
    else:
        try:
            import yaml
        except ModuleNotFoundError:
            raise DescriptionError(f"{origin} is YAML: reading it needs pyyaml (pip install pyyaml)") from None
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            doc = _jsonable(yaml.load(text, Loader=loader))  # noqa: S506 - a safe loader
        except yaml.YAMLError as exc:
            raise DescriptionError(f"{origin} is neither JSON nor valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise DescriptionError(f"{origin} is not an OpenAPI description: its top level is not an object")
    return doc  # pyright: ignore[reportUnknownVariableType]


def load(source: str) -> Loaded:
    raw, url = read_source(source)
    doc = parse(raw, source)
    sha256 = hashlib.sha256(raw).hexdigest()
    if str(doc.get("swagger", "")).startswith("2"):
        return Loaded(convert(doc, source), source, sha256, "2.0", url)
    version = str(doc.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        found = f"openapi: {version}" if version else "neither `openapi` nor `swagger`"
        raise DescriptionError(f"{source} is not an OpenAPI 3.0 / 3.1 or Swagger 2.0 description ({found})")
    if not isinstance(doc.get("paths", {}), dict):
        raise DescriptionError(f"{source}: `paths` is not an object")
    return Loaded(doc, source, sha256, version, url)
