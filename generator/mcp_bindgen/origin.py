"""Where an installed distribution came from, as a requirement that installs the same thing elsewhere.

pip records the source of anything not taken from a package index in the distribution's
`direct_url.json` (PEP 610): a wheel or archive file, a folder (a checkout, installed editable or
not), a VCS URL. A project written by this generator (a scaffold, a generated version package)
depends on mcp-bindgen, and on the distribution holding a generated version: before a release on the
package index, a name and a version resolve nowhere, while the place this copy was installed from
installs in any environment of this machine. Nothing of the runtime is imported here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class Origin:
    url: str  # what follows `name @ ` in a requirement
    kind: str  # "wheel", "archive", "folder", "checkout" (an editable install) or "vcs"

    def describe(self) -> str:
        what = {
            "wheel": "the wheel",
            "archive": "the archive",
            "folder": "the folder",
            "checkout": "the checkout",
            "vcs": "the repository",
        }[self.kind]
        return f"{what} {local_path(self.url) or self.url}"


def local_path(url: str) -> Path | None:
    """The path a file:// URL names, else None."""
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


def install_origin(dist_name: str) -> Origin | None:
    """Where `dist_name` was installed from; None when it came from a package index (no
    direct_url.json), is not installed, or its local source is gone (a deleted wheel or folder)."""
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    return read_origin(dist.read_text("direct_url.json"))


def read_origin(text: str | None) -> Origin | None:
    """The origin a direct_url.json's text records (see `install_origin`)."""
    try:
        record = json.loads(text) if text else None
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("url"), str):
        return None
    url: str = record["url"]
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        return Origin(f"{vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else ""), "vcs")
    path = local_path(url)
    if path is not None and not path.exists():
        return None
    if isinstance(record.get("dir_info"), dict):
        return Origin(url, "checkout" if record["dir_info"].get("editable") else "folder")
    return Origin(url, "wheel" if url.endswith(".whl") else "archive")
