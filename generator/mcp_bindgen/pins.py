"""The pin manifest and `schema sync`: put each pinned schema.json in place, verified by sha256."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .errors import BindgenError
from .paths import manifest_path, pinned_extension_schema, pinned_file, pinned_schema, project_root

RAW_URL = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"
# An extension published only in an npm package is pinned by package, version and the file's path in it.
NPM_TARBALL = "https://registry.npmjs.org/{package}/-/{basename}-{version}.tgz"


@dataclass(frozen=True)
class Pin:
    version: str
    repository: str
    commit: str
    path: str
    sha256: str

    @property
    def local_path(self) -> Path:
        return pinned_schema(self.version)

    @property
    def url(self) -> str:
        return RAW_URL.format(repository=self.repository, commit=self.commit, path=self.path)


def load_pins(path: Path | None = None) -> dict[str, Pin]:
    raw = json.loads((path or manifest_path()).read_text(encoding="utf-8"))
    return {
        version: Pin(version=version, **{k: entry[k] for k in ("repository", "commit", "path", "sha256")})
        for version, entry in sorted(raw["versions"].items())
    }


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(pin: Pin, data: bytes, source: str) -> None:
    actual = sha256_of(data)
    if actual != pin.sha256:
        raise BindgenError(
            f"sha256 mismatch for {source} (protocol version {pin.version}): expected {pin.sha256}, got {actual}"
        )


def _write(pin: Pin, data: bytes) -> Path:
    path = project_root() / "schema" / pin.version / "schema.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def sync_from_dir(source_dir: Path, versions: list[str] | None = None) -> list[Path]:
    """Copy `<source_dir>/<version>/schema.json` for every pin; verify all before writing any."""
    pins = _select(versions)
    blobs: dict[str, bytes] = {}
    for pin in pins:
        src = source_dir / pin.version / "schema.json"
        if not src.is_file():
            raise BindgenError(f"{src} not found (needed for pinned protocol version {pin.version})")
        data = src.read_bytes()
        verify(pin, data, str(src))
        blobs[pin.version] = data
    return [_write(pin, blobs[pin.version]) for pin in pins]


def sync_from_upstream(versions: list[str] | None = None, timeout: float = 30.0) -> list[Path]:
    pins = _select(versions)
    blobs: dict[str, bytes] = {}
    for pin in pins:
        try:
            with urllib.request.urlopen(pin.url, timeout=timeout) as response:  # noqa: S310 - pinned https URL
                data = response.read()
        except (urllib.error.URLError, OSError) as exc:
            raise BindgenError(
                f"could not download {pin.url} ({exc}); offline? Use `mcp-bindgen schema sync --from DIR` "
                "with a folder laid out as <version>/schema.json"
            ) from exc
        verify(pin, data, pin.url)
        blobs[pin.version] = data
    return [_write(pin, blobs[pin.version]) for pin in pins]


def _select(versions: list[str] | None) -> list[Pin]:
    pins = load_pins()
    if not versions:
        return list(pins.values())
    unknown = [v for v in versions if v not in pins]
    if unknown:
        raise BindgenError(f"not pinned: {', '.join(unknown)} (pinned: {', '.join(pins)})")
    return [pins[v] for v in versions]


def read_pinned(version: str) -> tuple[bytes, Pin]:
    """The synced schema of a pinned version, verified again so a hand edit is caught."""
    pins = load_pins()
    if version not in pins:
        raise BindgenError(f"protocol version {version!r} is not pinned (pinned: {', '.join(pins)})")
    pin = pins[version]
    if not pin.local_path.is_file():
        raise BindgenError(
            f"{pin.local_path} is missing: run `mcp-bindgen schema sync --from DIR` or `--upstream` first"
        )
    data = pin.local_path.read_bytes()
    verify(pin, data, str(pin.local_path))
    return data, pin


# -- extensions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtensionPin:
    """An official extension's schema, pinned like a core version, and the core version it plugs into.

    Pinned either in a git repository (`repository`, `commit`, `path`) or in an npm package
    (`npm_package`, `npm_version`, `path` inside the package); both verified by sha256."""

    identifier: str  # e.g. io.modelcontextprotocol/tasks
    repository: str
    commit: str
    path: str
    sha256: str
    core_version: str
    npm_package: str = ""
    npm_version: str = ""
    # A schema the project owns (written from a specification that publishes none): its path in the
    # repository; `repository`/`commit`/`path` then name the specification it was written from.
    owned: str = ""

    @property
    def folder(self) -> str:
        """`io.modelcontextprotocol/tasks` -> `io.modelcontextprotocol-tasks` (one path segment)."""
        return self.identifier.replace("/", "-")

    @property
    def local_path(self) -> Path:
        return pinned_extension_schema(self.folder)

    @property
    def sync_path(self) -> Path:
        """Where `schema sync` writes it: beside the core schemas (a checkout's schema/, else the
        current folder's), never into an installed package (whose copy `local_path` may be)."""
        return project_root() / "schema" / "extensions" / self.folder / "schema.json"

    @property
    def url(self) -> str:
        if self.npm_package:
            basename = self.npm_package.rsplit("/", 1)[-1]
            return NPM_TARBALL.format(package=self.npm_package, basename=basename, version=self.npm_version)
        return RAW_URL.format(repository=self.repository, commit=self.commit, path=self.path)

    @property
    def source(self) -> str:
        if self.owned:
            return f"{self.owned} (written from {self.repository}@{self.commit}:{self.path})"
        if self.npm_package:
            return f"npm:{self.npm_package}@{self.npm_version}:{self.path}"
        return f"{self.repository}@{self.commit}:{self.path}"

    def download(self, timeout: float) -> bytes:
        """The pinned file, from the repository or out of the npm package's tarball (not yet verified);
        an owned schema is read from the project."""
        if self.owned:
            return (project_root() / self.owned).read_bytes()
        with urllib.request.urlopen(self.url, timeout=timeout) as response:  # noqa: S310 - pinned https URL
            data = response.read()
        if not self.npm_package:
            return data
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                member = tar.extractfile(f"package/{self.path}")
                if member is None:
                    raise KeyError(self.path)
                return member.read()
        except (tarfile.TarError, KeyError) as exc:
            raise BindgenError(f"{self.url} has no file {self.path} (extension {self.identifier})") from exc


def load_extension_pins(path: Path | None = None) -> dict[str, ExtensionPin]:
    raw = json.loads((path or manifest_path()).read_text(encoding="utf-8"))
    pins = {}
    for identifier, entry in sorted(raw.get("extensions", {}).items()):
        npm = entry.get("npm", {})
        pins[identifier] = ExtensionPin(
            identifier=identifier,
            repository=entry.get("repository", ""),
            commit=entry.get("commit", ""),
            path=entry["path"],
            sha256=entry["sha256"],
            core_version=entry["core_version"],
            npm_package=npm.get("package", ""),
            npm_version=npm.get("version", ""),
            owned=entry.get("owned", ""),
        )
    return pins


def _verify_extension(pin: ExtensionPin, data: bytes, source: str) -> None:
    actual = sha256_of(data)
    if actual != pin.sha256:
        raise BindgenError(
            f"sha256 mismatch for {source} (extension {pin.identifier}): expected {pin.sha256}, got {actual}"
        )


def sync_extensions(source_dir: Path | None, versions: list[str] | None = None, timeout: float = 30.0) -> list[str]:
    """Place the pinned extension schemas (those plugging into `versions`, all when None): from
    `<source_dir>/extensions/<folder>/schema.json` when there, else downloaded by pinned commit.
    An extension that cannot be had is not an error (the core versions do not need it): its line
    says so and what to do. Returns one line per extension."""
    lines = []
    for pin in load_extension_pins().values():
        if versions and pin.core_version not in versions:
            continue
        local = source_dir / "extensions" / pin.folder / "schema.json" if source_dir is not None else None
        if pin.owned:  # the project's own file; from a wheel, the copy the wheel ships
            local = next((p for p in (project_root() / pin.owned, pin.local_path) if p.is_file()), None)
        if local is not None and local.is_file():
            data = local.read_bytes()
            _verify_extension(pin, data, str(local))
        else:
            try:
                data = pin.download(timeout)
            except (urllib.error.URLError, OSError):
                where = f"{local} is missing and " if local is not None else ""
                lines.append(
                    f"not synced: extension {pin.identifier} ({where}{pin.url} could not be downloaded); "
                    f"place that file at {pin.sync_path} or under <DIR>/extensions/{pin.folder}/ to generate it"
                )
                continue
            _verify_extension(pin, data, pin.url)
        target = pin.sync_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        lines.append(f"synced {target}")
    return lines


def read_extension(pin: ExtensionPin) -> bytes | None:
    """The synced schema of a pinned extension, verified again; None when it is not synced."""
    if not pin.local_path.is_file():
        return None
    data = pin.local_path.read_bytes()
    _verify_extension(pin, data, str(pin.local_path))
    return data


# -- the MCP Registry's server.json schema -------------------------------------------------------------


@dataclass(frozen=True)
class RegistryPin:
    """A version of the MCP Registry's server.json schema: committed at `file` (the registry serves
    it at `url`), copied from `repository`@`commit`:`path`, verified by sha256 whenever it is read."""

    version: str
    file: str
    url: str
    repository: str
    commit: str
    path: str
    sha256: str

    @property
    def local_path(self) -> Path:
        return pinned_file(self.file)

    @property
    def source(self) -> str:
        return f"{self.repository}@{self.commit}:{self.path}"


def load_registry_pins(path: Path | None = None) -> dict[str, RegistryPin]:
    raw = json.loads((path or manifest_path()).read_text(encoding="utf-8"))
    fields = ("file", "url", "repository", "commit", "path", "sha256")
    return {
        version: RegistryPin(version=version, **{k: entry[k] for k in fields})
        for version, entry in sorted(raw.get("registry", {}).items())
    }


def read_registry_schema(pin: RegistryPin) -> bytes:
    """The pinned server.json schema, its sha256 checked (a hand edit or a bad copy is caught)."""
    if not pin.local_path.is_file():
        raise BindgenError(
            f"{pin.local_path} is missing (the MCP Registry's server.json schema {pin.version}): "
            f"restore it from the mcp-bindgen checkout or reinstall mcp-bindgen"
        )
    data = pin.local_path.read_bytes()
    actual = sha256_of(data)
    if actual != pin.sha256:
        raise BindgenError(
            f"sha256 mismatch for {pin.local_path} (MCP Registry server.json schema {pin.version}): "
            f"expected {pin.sha256}, got {actual}; restore the file as copied from {pin.source}"
        )
    return data


def verify_registry_schemas() -> list[str]:
    """`schema sync`: every pinned server.json schema is in place and unchanged (one line each)."""
    lines = []
    for pin in load_registry_pins().values():
        read_registry_schema(pin)
        lines.append(f"verified the MCP Registry's server.json schema {pin.version} (sha256 {pin.sha256[:12]})")
    return lines
