"""The Skills extension (`io.modelcontextprotocol/skills`) on the authoring layer: a directory of
Agent Skills served in one line.

    app.skills("skills/")          # skill:// resources, skills/list, skills/get, resources/directory/read

Every `SKILL.md` under the directory (nested ones too) is a skill at
`skill://<skill-path>/SKILL.md`; its files are `skill://` resources (read at each read, so the
directory may change while serving: `skills/list` and `skills/get` scan it again); entries carry the
frontmatter verbatim and every file's `sha256:` digest and size. `app.skill(uri, description=...)`
adds a generated skill (`resources: "dynamic"`). A bad `SKILL.md` (no `name` or `description`, a
name breaking the naming rules or not matching its folder) is an `AppDefinitionError` at
registration; a URI leaving the root is refused (-32602) and nothing is read. The extension is
declared (with `directoryRead`) only by an app that serves skills.

Files are read as `protocol.skill_files` opens them (one segment at a time, no symlink followed), in a
worker thread, never on the event loop: a listing hashes only the files that changed since the last
one (one listing at a time per app), and a `resources/read` reads at most `max_file_bytes`.

While the app serves, the directory is watched (`app.skills(..., watch=False)`: not; see
`app.skills_watch`): when the skills it holds change (a skill added, removed or renamed, a file of
one added, removed or edited), the `SKILL.md` resources follow and the clients are told with
`notifications/resources/list_changed` (the Skills specification defines no notification of its
own: `skills/list` is answered from the directory at each call), and those subscribed to a changed
file with `notifications/resources/updated`.
"""

from __future__ import annotations

import base64
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import anyio
import anyio.to_thread

from mcp_bindings.runtime.app.errors import AppDefinitionError, ResourceNotFound
from mcp_bindings.runtime.app.skills_watch import DirectoryWatcher, can_watch
from mcp_bindings.runtime.protocol import skill_files as files
from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS, CustomMethod, Handler
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import invalid_field
from mcp_bindings.runtime.server.plugins import Extension

if TYPE_CHECKING:
    from types import ModuleType

    from mcp_bindings.ext.io_modelcontextprotocol_skills import models as sk
    from mcp_bindings.runtime.app.lifespan import Lifetime
    from mcp_bindings.runtime.protocol.spec import ProtocolTables

__all__ = ["SKILLS", "Skills"]

SKILLS = "io.modelcontextprotocol/skills"  # the extension's identifier (its generated `about.IDENTIFIER`)


def _models() -> ModuleType:
    """The extension's generated models, loaded by an app that serves skills (not by every app)."""
    from mcp_bindings.ext.io_modelcontextprotocol_skills import models

    return models


log = logging.getLogger("mcp_bindings.runtime.app.skills")
TTL_MS = 60_000
MAX_FILE_BYTES = 16 * 1024 * 1024  # what one resources/read of a skill file reads at most (the stdio frame bound)


class _Dynamic:
    __slots__ = ("fn", "frontmatter", "uri")

    def __init__(self, uri: str, frontmatter: dict[str, Any], fn: Callable[[], Any]) -> None:
        self.uri, self.frontmatter, self.fn = uri, frontmatter, fn


class _SkillsState:
    __slots__ = ("digests", "directory_read", "dynamic", "entries", "listed", "max_file_bytes", "roots", "scanning")

    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.dynamic: dict[str, _Dynamic] = {}
        self.directory_read = True
        self.listed: dict[str, tuple[str, str]] = {}  # SKILL.md resource -> (name, description) it is listed with
        self.entries: dict[str, dict[str, Any]] = {}  # the directory's skills entries, as clients were last told
        self.digests: dict[Path, files.Digests] = {}  # per root: its files' digests, kept while unchanged
        self.max_file_bytes = MAX_FILE_BYTES
        # One listing at a time, in a worker thread: the next one finds the digests the last one made.
        self.scanning = anyio.CapacityLimiter(1)

    async def scan(self, root: Path, *, warn: bool = False) -> tuple[list[files.SkillDir], dict[str, dict[str, Any]]]:
        """The valid skills under `root` and their entries, made off the event loop."""

        def scan() -> tuple[list[files.SkillDir], dict[str, dict[str, Any]]]:
            found = _each_valid(root, warn=warn)
            return found, self.digests[root].entries(found)

        return await anyio.to_thread.run_sync(scan, limiter=self.scanning)


class _Registers(Protocol):
    """What `Skills` uses of `App`'s public methods."""

    def resource(self, uri: str, **options: Any) -> Callable[[Any], Any]: ...

    def remove_resource(self, uri: str) -> None: ...

    async def resource_updated(self, uri: str) -> int: ...


class SkillsOptions(TypedDict, total=False):
    """`app.skills`'s keyword arguments (`Skills.directory`)."""

    directory_read: bool
    watch: bool
    max_file_bytes: int


class Skills(Extension):
    """The Skills extension of one `App` (`app.skills`, `app.skill`): a collaborator the app makes on
    first use and registers as one of its extensions (`App.add`), so only an app serving skills
    declares it; on the server it serves skills/list, skills/get and resources/directory/read."""

    def __init__(self, app: _Registers, pkg: Any, lifetime: Lifetime, changed: Callable[[], None]) -> None:
        # `pkg`: the version package whose contents models a read returns; `lifetime`: what runs
        # while the app serves (the directory's watcher); `changed`: the app's resources list changed.
        self.app, self.pkg, self.lifetime, self.changed = app, pkg, lifetime, changed
        self.state = _SkillsState()

    def directory(
        self,
        directory: str | Path,
        *,
        directory_read: bool = True,
        watch: bool = True,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        """Serve the Agent Skills under `directory` (see the module); `watch`: follow its changes
        while serving; `max_file_bytes`: the largest file a `resources/read` answers with."""
        root = Path(directory).resolve()
        if not root.is_dir():
            raise AppDefinitionError(f"app.skills: {directory} is not a directory")
        if watch and not can_watch():
            raise AppDefinitionError(
                "app.skills: watching the directory needs watchfiles: pip install 'mcp-bindgen[skills]' "
                "(or app.skills(..., watch=False) to serve it without following its changes)"
            )
        try:
            found = files.scan(root)
        except files.SkillError as exc:
            raise AppDefinitionError(f"app.skills: {exc}") from None
        state = self.state
        if state.roots:
            raise AppDefinitionError("app.skills: the app already serves a skills directory")
        state.roots.append(root)
        state.directory_read = directory_read
        state.max_file_bytes = max_file_bytes
        for skill in found:
            self._list_skill(root, skill)
        state.digests[root] = files.Digests(root)
        state.entries = state.digests[root].entries(found)
        pkg = self.pkg

        async def read(path: str) -> Any:
            return await _read(pkg, root, f"{files.SCHEME}{path}", max_file_bytes)

        self.app.resource(files.SCHEME + "{+path}", name="skill-files", description="A file of a skill")(read)
        if watch:

            async def changed(paths: set[Path]) -> None:
                await self._follow_skills(root, paths)

            self.lifetime.services.append(DirectoryWatcher(root, changed))

    def _list_skill(self, root: Path, skill: files.SkillDir) -> None:
        """A SKILL.md listed with its name and description (skills.mdx, Resource Metadata)."""
        labels = (str(skill.frontmatter["name"]), str(skill.frontmatter["description"]))
        self.app.resource(skill.uri, name=labels[0], description=labels[1], mime_type="text/markdown")(
            _reader(self.pkg, root, skill.uri, self.state.max_file_bytes)
        )
        self.state.listed[skill.uri] = labels

    async def _follow_skills(self, root: Path, paths: set[Path]) -> None:
        """The directory changed (`paths`, from the watcher): list its SKILL.md resources again and
        tell the clients (see the module)."""
        state, app = self.state, self.app
        skills, entries = await state.scan(root, warn=True)
        found = {s.uri: s for s in skills}
        for uri, labels in list(state.listed.items()):
            skill = found.get(uri)
            if skill is None or labels != (str(skill.frontmatter["name"]), str(skill.frontmatter["description"])):
                del state.listed[uri]
                app.remove_resource(uri)
        for uri, skill in found.items():
            if uri not in state.listed:
                self._list_skill(root, skill)
        if entries != state.entries:  # skills/list answers otherwise now: a file's digest, a skill
            state.entries = entries
            self.changed()
        for path in sorted(paths):
            if path.is_relative_to(root) and path != root and not path.is_dir():
                await app.resource_updated(files.SCHEME + path.relative_to(root).as_posix())

    def skill(self, uri: str, *, description: str, **frontmatter: Any) -> Callable[[Any], Any]:
        """A decorator: the function makes a skill's SKILL.md body at each read; the skill is listed
        with `resources: "dynamic"` (skills.mdx, Resources). `uri` is `skill://<skill-path>/SKILL.md`."""
        if not uri.startswith(files.SCHEME) or not uri.endswith("/" + files.SKILL_FILE):
            raise AppDefinitionError(f"app.skill: {uri!r} is not a skill URI (skill://<skill-path>/SKILL.md)")
        folder = uri.removeprefix(files.SCHEME).removesuffix("/" + files.SKILL_FILE).rsplit("/", 1)[-1]
        name = str(frontmatter.pop("name", folder))
        try:
            files.check_name(name, folder, uri)
        except files.SkillError as exc:
            raise AppDefinitionError(f"app.skill: {exc}") from None

        def register(fn: Callable[[], Any]) -> Callable[[], Any]:
            fields = {"name": name, "description": description, **frontmatter}
            self.state.dynamic[uri] = _Dynamic(uri, fields, fn)

            async def read() -> str:
                body = fn()
                body = await body if inspect.isawaitable(body) else body
                return _document(fields, str(body))

            self.app.resource(uri, name=name, description=description, mime_type="text/markdown")(read)
            return fn

        return register

    # -- the extension, on the app's server ------------------------------------------------------

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        settings = {"directoryRead": True} if self.state.directory_read and self.state.roots else {}
        return {EXTENSIONS: {SKILLS: settings}}

    def methods(self) -> Mapping[CustomMethod[Any, Any], Handler]:
        from mcp_bindings.ext.io_modelcontextprotocol_skills.methods import EXTENSION

        handlers = _Handlers(self.state)
        return {
            method: getattr(handlers, method.spec.handler)
            for method in EXTENSION.methods.values()
            if method.sender == "client" and hasattr(handlers, method.spec.handler)
        }


def _document(fields: dict[str, Any], body: str) -> str:
    import yaml

    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True) + "---\n\n" + body


def checked_uri(uri: str) -> list[str] | None:
    """The path segments of `uri` under a root (`files.segments`); a URI no file could have is
    -32602 naming the parameter, with nothing of the server's paths."""
    try:
        return files.segments(uri)
    except files.SkillUriError as exc:
        raise invalid_field("params.uri", str(exc)) from None


async def _read(pkg: Any, root: Path, uri: str, limit: int) -> Any:
    """A skill file's contents, its bytes as they are (text when UTF-8, else a blob), with its MIME
    type; read in a worker thread, at most `limit` bytes."""
    parts = checked_uri(uri)
    if parts is None:
        raise ResourceNotFound(uri)
    data = await anyio.to_thread.run_sync(_read_file, root, parts, uri, limit)
    mime = files.mime_type(parts[-1])
    try:
        return pkg.TextResourceContents(uri=uri, mime_type=mime, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return pkg.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))


def _read_file(root: Path, parts: list[str], uri: str, limit: int) -> bytes:
    try:
        fd = files.open_under(root, parts)
    except OSError:  # not there, a symlink on the way, not a regular file
        raise ResourceNotFound(uri) from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise McpError(
                INVALID_PARAMS,
                f"{uri} is {size} bytes, over the {limit} bytes this server reads for a client",
                {"uri": uri, "size": size, "limit": limit},
            )
        return files.read_all(fd, limit)
    finally:
        os.close(fd)


def _reader(pkg: Any, root: Path, uri: str, limit: int) -> Callable[[], Awaitable[Any]]:
    async def read() -> Any:
        return await _read(pkg, root, uri, limit)

    return read


class _Handlers:
    """skills/list, skills/get, resources/directory/read over the app's skills (scanned at each call)."""

    def __init__(self, state: _SkillsState) -> None:
        self.state = state

    async def _entries(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for root in self.state.roots:
            out.update((await self.state.scan(root))[1])
        for uri, dynamic in self.state.dynamic.items():
            out[uri] = {"uri": uri, "frontmatter": dynamic.frontmatter, "resources": "dynamic"}
        return out

    async def list_skills(self, params: Any, ctx: Any) -> sk.ListSkillsResult:
        skills = list((await self._entries()).values())
        return _models().ListSkillsResult.model_validate(
            {"resultType": "complete", "skills": skills, "ttlMs": TTL_MS, "cacheScope": "public"}
        )

    async def get_skill(self, params: sk.GetSkillRequestParams, ctx: Any) -> sk.GetSkillResult:
        checked_uri(params.uri)
        found = (await self._entries()).get(params.uri)
        if found is None:
            raise McpError(INVALID_PARAMS, f"No skill is served at {params.uri}", {"uri": params.uri})
        return _models().GetSkillResult.model_validate(
            {"resultType": "complete", "skill": found, "ttlMs": TTL_MS, "cacheScope": "public"}
        )

    async def read_resource_directory(
        self, params: sk.ReadResourceDirectoryRequestParams, ctx: Any
    ) -> sk.ReadResourceDirectoryResult:
        parts = checked_uri(params.uri)
        for root in self.state.roots:
            children = None if parts is None else await anyio.to_thread.run_sync(_children, root, parts, params.uri)
            if children is not None:
                return _models().ReadResourceDirectoryResult.model_validate(
                    {"resultType": "complete", "resources": children}
                )
        raise McpError(INVALID_PARAMS, f"{params.uri} is not a directory resource", {"uri": params.uri})


def _children(root: Path, parts: list[str], uri: str) -> list[dict[str, Any]] | None:
    """What the directory `parts` under `root` holds (no symlinks), opened as a file is; None when
    it is not a directory there."""
    try:
        fd = files.open_under(root, parts, directory=True)
    except OSError:
        return None
    try:
        with os.scandir(fd) as listing:
            found = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in listing if not e.is_symlink())
    finally:
        os.close(fd)
    return [{"uri": f"{uri}/{name}", "name": name, "mimeType": files.mime_type(name, is_dir)} for name, is_dir in found]


def _each_valid(root: Path, *, warn: bool = False) -> list[files.SkillDir]:
    """The skills under `root` that are valid (`warn`: saying why each other one is left out)."""
    out: list[files.SkillDir] = []
    for skill_md in (p for p in files.walk(root, files.SKILL_FILE) if p.parent != root):
        try:
            out.append(files.load(root, skill_md))
        except (files.SkillError, OSError, UnicodeDecodeError) as exc:  # bad, or removed while read
            if warn:
                log.warning("skills: not served: %s", exc)
            continue
    return sorted(out, key=lambda skill: skill.path)
