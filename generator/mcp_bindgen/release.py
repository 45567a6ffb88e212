"""Release day: pin a new upstream protocol version with one command.

`mcp-bindgen schema pin VERSION --commit SHA` fetches `schema/<VERSION>/schema.json` of the upstream
repository at that commit (or reads it from `--from FILE|DIR`), records repository, commit, path and
sha256 in `schema/manifest.json`, places the schema beside the others, regenerates the version's
bindings, and reports what changed since the newest version pinned before it (`diff`) and what the
policy files do not cover yet (`review`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .diff import Diff, diff_sources
from .errors import BindgenError
from .output import _remove_stale, _write, pinned_known
from .paths import checkout, manifest_path
from .pins import RAW_URL, Pin, load_pins, sha256_of
from .pipeline import (
    VersionSource,
    build_ir,
    check_mcp_schema,
    generated_dirs,
    pinned_extension_patches,
    pinned_source,
    render_ir,
    schema_file,
)
from .review import Known, Review, review
from .surface import derive_surface


@dataclass
class Pinned:
    pin: Pin
    previous: str | None  # the newest version pinned before it
    written: list[Path]
    diff: Diff | None
    review: Review


def _fetch(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - https URL of a pin
            return bytes(response.read())
    except (urllib.error.URLError, OSError) as exc:
        raise BindgenError(f"could not download {url} ({exc}); offline? pass --from FILE with the schema.json") from exc


def pin_version(
    version: str,
    *,
    commit: str,
    repository: str | None = None,
    path: str | None = None,
    source: Path | None = None,
    force: bool = False,
    timeout: float = 30.0,
) -> Pinned:
    root = checkout()
    if root is None or not (root / "schema" / "manifest.json").is_file():
        raise BindgenError("schema pin edits schema/manifest.json: run it in a checkout of mcp-bindgen")
    pins = load_pins()
    if not repository:
        repository = pins[max(pins)].repository if pins else "modelcontextprotocol/modelcontextprotocol"
    path = path or f"schema/{version}/schema.json"
    pin_url = RAW_URL.format(repository=repository, commit=commit, path=path)
    data = schema_file(source).read_bytes() if source is not None else _fetch(pin_url, timeout)
    pin = Pin(version, repository, commit, path, sha256_of(data))
    old = pins.get(version)
    if old is not None and old.sha256 != pin.sha256 and not force:
        raise BindgenError(
            f"{version} is pinned already with schema sha256 {old.sha256}; the new schema has sha256 "
            f"{pin.sha256}: pass --force to re-pin it"
        )
    # Check it is an MCP schema this generator reads before anything is written.
    candidate = VersionSource(version, data, pin.sha256, version, str(source or pin_url))
    ir = build_ir(candidate)
    surface = derive_surface(ir)
    check_mcp_schema(candidate, surface)

    local = root / "schema" / version / "schema.json"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_bytes(data)
    raw = json.loads(manifest_path().read_text(encoding="utf-8"))
    raw["versions"][version] = {"repository": repository, "commit": commit, "path": path, "sha256": pin.sha256}
    raw["versions"] = dict(sorted(raw["versions"].items()))
    manifest_path().write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")

    files, _ = render_ir(pinned_source(version), ir, surface)
    generated = root / "generated"
    _remove_stale(generated, generated_dirs([version]), files)
    written = _write(generated, files)

    older = [v for v in pins if v != version and v < version] or [v for v in pins if v != version]
    previous = max(older) if older else None
    diff = diff_sources(pinned_source(previous), pinned_source(version)) if previous else None
    others = pinned_known(skip=version)
    report = review(
        [*others, Known(version, ir, surface, pinned=False)], new=[version], patched=pinned_extension_patches()
    )
    return Pinned(pin, previous, written, diff, report)
