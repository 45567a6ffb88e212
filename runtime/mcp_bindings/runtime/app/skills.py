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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from mcp_bindings.runtime.app.changes import RESOURCES_CHANGED
from mcp_bindings.runtime.app.errors import AppDefinitionError, ResourceNotFound
from mcp_bindings.runtime.app.skills_watch import DirectoryWatcher, can_watch
from mcp_bindings.runtime.protocol import skill_files as files
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

if TYPE_CHECKING:
    from types import ModuleType

    from mcp_bindings.ext.io_modelcontextprotocol_skills import models as sk
    from mcp_bindings.runtime.app.lifespan import Lifetime
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["SKILLS", "SkillsMixin"]

SKILLS = "io.modelcontextprotocol/skills"  # the extension's identifier (its generated `about.IDENTIFIER`)


def _models() -> ModuleType:
    """The extension's generated models, loaded by an app that serves skills (not by every app)."""
    from mcp_bindings.ext.io_modelcontextprotocol_skills import models

    return models


log = logging.getLogger("mcp_bindings.runtime.app.skills")
TTL_MS = 60_000


class _Dynamic:
    __slots__ = ("fn", "frontmatter", "uri")

    def __init__(self, uri: str, frontmatter: dict[str, Any], fn: Callable[[], Any]) -> None:
        self.uri, self.frontmatter, self.fn = uri, frontmatter, fn


class _SkillsState:
    __slots__ = ("directory_read", "dynamic", "entries", "listed", "roots")

    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.dynamic: dict[str, _Dynamic] = {}
        self.directory_read = True
        self.listed: dict[str, tuple[str, str]] = {}  # SKILL.md resource -> (name, description) it is listed with
        self.entries: dict[str, dict[str, Any]] = {}  # the directory's skills entries, as clients were last told


def _state(obj: object) -> _SkillsState:
    attributes = obj.__dict__
    found = attributes.get("_skills_state")
    if found is None:
        found = attributes["_skills_state"] = _SkillsState()
    return cast("_SkillsState", found)


class _Registers(Protocol):
    """What the mixin uses of `App`'s public methods."""

    def resource(self, uri: str, **options: Any) -> Callable[[Any], Any]: ...

    def remove_resource(self, uri: str) -> None: ...

    async def resource_updated(self, uri: str) -> int: ...


def _app(obj: object) -> _Registers:
    return cast("_Registers", obj)


class SkillsMixin:
    """`App.skills` and `App.skill` (see the module)."""

    if TYPE_CHECKING:
        _pkg: Any  # App's: the version package whose contents models a read returns
        _lifetime: Lifetime  # App's: what runs while it serves (the directory's watcher)
        _changed: Callable[..., None]  # `ListChanges._changed`

    def skills(self, directory: str | Path, *, directory_read: bool = True, watch: bool = True) -> None:
        """Serve the Agent Skills under `directory` (see the module); `watch`: follow its changes
        while serving."""
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
        state = _state(self)
        if state.roots:
            raise AppDefinitionError("app.skills: the app already serves a skills directory")
        state.roots.append(root)
        state.directory_read = directory_read
        for skill in found:
            self._list_skill(root, skill)
        state.entries = {s.uri: files.entry(s) for s in found}
        pkg = self._pkg

        def read(path: str) -> Any:
            return _read(pkg, root, f"{files.SCHEME}{path}")

        _app(self).resource(files.SCHEME + "{+path}", name="skill-files", description="A file of a skill")(read)
        if watch:

            async def changed(paths: set[Path]) -> None:
                await self._follow_skills(root, paths)

            self._lifetime.services.append(DirectoryWatcher(root, changed))

    def _list_skill(self, root: Path, skill: files.SkillDir) -> None:
        """A SKILL.md listed with its name and description (skills.mdx, Resource Metadata)."""
        labels = (str(skill.frontmatter["name"]), str(skill.frontmatter["description"]))
        _app(self).resource(skill.uri, name=labels[0], description=labels[1], mime_type="text/markdown")(
            _reader(self._pkg, root, skill.uri)
        )
        _state(self).listed[skill.uri] = labels

    async def _follow_skills(self, root: Path, paths: set[Path]) -> None:
        """The directory changed (`paths`, from the watcher): list its SKILL.md resources again and
        tell the clients (see the module)."""
        state, app = _state(self), _app(self)
        found = {s.uri: s for s in _each_valid(root, warn=True)}
        for uri, labels in list(state.listed.items()):
            skill = found.get(uri)
            if skill is None or labels != (str(skill.frontmatter["name"]), str(skill.frontmatter["description"])):
                del state.listed[uri]
                app.remove_resource(uri)
        for uri, skill in found.items():
            if uri not in state.listed:
                self._list_skill(root, skill)
        entries = {uri: files.entry(s) for uri, s in found.items()}
        if entries != state.entries:  # skills/list answers otherwise now: a file's digest, a skill
            state.entries = entries
            self._changed(RESOURCES_CHANGED, "resources", "templates")
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
            _state(self).dynamic[uri] = _Dynamic(uri, fields, fn)

            async def read() -> str:
                body = fn()
                body = await body if inspect.isawaitable(body) else body
                return _document(fields, str(body))

            _app(self).resource(uri, name=name, description=description, mime_type="text/markdown")(read)
            return fn

        return register

    def _extend_skills(self, server: ServerStub) -> None:
        state = _state(self)
        if not state.roots and not state.dynamic:
            return
        settings = {"directoryRead": True} if state.directory_read and state.roots else {}
        from mcp_bindings.ext.io_modelcontextprotocol_skills.methods import EXTENSION

        server.use_extension(EXTENSION, settings, handlers=_Handlers(state))


def _document(fields: dict[str, Any], body: str) -> str:
    import yaml

    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True) + "---\n\n" + body


def _read(pkg: Any, root: Path, uri: str) -> Any:
    """A skill file's contents, its bytes as they are (text when UTF-8, else a blob), with its MIME type."""
    target = files.resolve(root, uri)
    if target is None or not target.is_file():
        raise ResourceNotFound(uri)
    data = target.read_bytes()
    mime = files.mime_type(target)
    try:
        return pkg.TextResourceContents(uri=uri, mime_type=mime, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return pkg.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))


def _reader(pkg: Any, root: Path, uri: str) -> Callable[[], Awaitable[Any]]:
    async def read() -> Any:
        return _read(pkg, root, uri)

    return read


class _Handlers:
    """skills/list, skills/get, resources/directory/read over the app's skills (scanned at each call)."""

    def __init__(self, state: _SkillsState) -> None:
        self.state = state

    def _entries(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for root in self.state.roots:
            try:
                found = files.scan(root)
            except files.SkillError as exc:  # changed on disk into something invalid: said, not served
                log.warning("skills: %s", exc)
                found = _each_valid(root)
            out.update({s.uri: files.entry(s) for s in found})
        for uri, dynamic in self.state.dynamic.items():
            out[uri] = {"uri": uri, "frontmatter": dynamic.frontmatter, "resources": "dynamic"}
        return out

    async def list_skills(self, params: Any, ctx: Any) -> sk.ListSkillsResult:
        skills = list(self._entries().values())
        return _models().ListSkillsResult.model_validate(
            {"resultType": "complete", "skills": skills, "ttlMs": TTL_MS, "cacheScope": "public"}
        )

    async def get_skill(self, params: sk.GetSkillRequestParams, ctx: Any) -> sk.GetSkillResult:
        found = self._entries().get(params.uri)
        if found is None:
            raise McpError(INVALID_PARAMS, f"No skill is served at {params.uri}", {"uri": params.uri})
        return _models().GetSkillResult.model_validate(
            {"resultType": "complete", "skill": found, "ttlMs": TTL_MS, "cacheScope": "public"}
        )

    async def read_resource_directory(
        self, params: sk.ReadResourceDirectoryRequestParams, ctx: Any
    ) -> sk.ReadResourceDirectoryResult:
        for root in self.state.roots:
            target = files.resolve(root, params.uri)
            if target is not None and target.is_dir() and target != root.resolve():
                children = [
                    {"uri": f"{params.uri}/{child.name}", "name": child.name, "mimeType": files.mime_type(child)}
                    for child in sorted(target.iterdir())
                    if not child.is_symlink()
                ]
                return _models().ReadResourceDirectoryResult.model_validate(
                    {"resultType": "complete", "resources": children}
                )
        raise McpError(INVALID_PARAMS, f"{params.uri} is not a directory resource", {"uri": params.uri})


def _each_valid(root: Path, *, warn: bool = False) -> list[files.SkillDir]:
    """The skills under `root` that are valid (`warn`: saying why each other one is left out)."""
    out: list[files.SkillDir] = []
    for skill_md in sorted(p for p in root.rglob(files.SKILL_FILE) if p.parent != root):
        try:
            out.append(files.load(root, skill_md))
        except (files.SkillError, OSError, UnicodeDecodeError) as exc:  # bad, or removed while read
            if warn:
                log.warning("skills: not served: %s", exc)
            continue
    return out
