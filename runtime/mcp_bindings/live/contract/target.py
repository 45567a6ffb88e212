"""The server a `TARGET` of `mcp-bindgen run` / `dev` names, as a runtime server object:

    server.py            the one `App` (or server stub instance) the file defines at module level
    server.py:app        that attribute (dotted; a function without parameters is called: a factory)
    pkg.mod:app, pkg.mod the same in an importable module (the current directory is on sys.path)
    weather              an installed command (a `console_scripts` entry point): its module's server object

A file is imported under its own module name with its folder first on sys.path, so that its
`if __name__ == "__main__":` block does not run and its sibling modules import."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..server_spec import entry_point_module, has_attribute
from .connection import ExitCode, LiveError


@dataclass(frozen=True)
class Target:
    """A parsed TARGET: the file or module, and the attribute named after `:` (or None)."""

    file: Path | None
    module: str | None
    attribute: str | None

    @classmethod
    def parse(cls, text: str) -> Target:
        where, attribute = text.rsplit(":", 1) if has_attribute(text) else (text, "")
        if where.endswith(".py") or "/" in where or Path(where).is_file():
            path = Path(where)
            if not path.is_file():
                raise LiveError(
                    f"no such file: {where} (TARGET: server.py, server.py:app, pkg.mod:app)", ExitCode.USAGE
                )
            return cls(path.resolve(), None, attribute or None)
        script = None if attribute else entry_point_module(where)
        if script is not None:
            return cls(None, script, None)  # an installed command: the server object of its module
        if not where.replace(".", "").replace("_", "").isalnum():
            raise LiveError(
                f"{text!r} is neither a .py file, a module path such as pkg.mod:app, nor an installed command",
                ExitCode.USAGE,
            )
        return cls(None, where, attribute or None)

    @property
    def watched(self) -> Path:
        """The folder whose sources `mcp-bindgen dev` watches."""
        if self.file is not None:
            return self.file.parent
        spec = importlib.util.find_spec(self.module or "")
        origin = Path(spec.origin) if spec is not None and spec.origin else Path.cwd() / "missing"
        return origin.parent

    def describe(self) -> str:
        base = str(self.file) if self.file is not None else str(self.module)
        return f"{base}:{self.attribute}" if self.attribute else base


def import_target(target: Target) -> ModuleType:
    """Import the module of `target`; an import error names the missing module and what to install."""
    try:
        if target.file is not None:
            return _import_file(target.file)
        sys.path.insert(0, str(Path.cwd()))
        return importlib.import_module(target.module or "")
    except ModuleNotFoundError as exc:
        from mcp_bindgen.cli import missing_extra

        missing = (exc.name or "").split(".", 1)[0]
        if target.module is not None and target.module.split(".")[0] == missing:
            raise LiveError(f"no module named {target.module!r}: check the name or install it", ExitCode.USAGE) from exc
        extra = missing_extra(exc)
        hint = f"pip install 'mcp-bindgen[{extra}]'" if extra else f"pip install {missing} (or what provides it)"
        raise LiveError(
            f"{target.describe()} imports {exc.name!r}, which is not installed: {hint}", ExitCode.USAGE
        ) from exc
    except LiveError:
        raise
    except Exception as exc:
        raise LiveError(
            f"importing {target.describe()} failed: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            ExitCode.USAGE,
        ) from exc


def _import_file(path: Path) -> ModuleType:
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else "_mcp_bindgen_target"
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LiveError(f"{path} cannot be imported as a Python module", ExitCode.USAGE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look their module up
    spec.loader.exec_module(module)
    return module


def is_server(value: Any) -> bool:
    """An `App` or a server stub instance: what `run` can serve."""
    from mcp_bindings.runtime.app.core import App
    from mcp_bindings.runtime.server.stubs import ServerStub

    return isinstance(value, (App, ServerStub))


def server_object(target: Target) -> Any:
    """The `App` or server stub instance `target` names (`find_server` when it names none)."""
    module = import_target(target)
    if target.attribute is None:
        return find_server(module, target)
    value: Any = module
    for part in target.attribute.split("."):
        if not hasattr(value, part):
            raise LiveError(f"{target.describe()}: {part!r} is not defined there", ExitCode.USAGE)
        value = getattr(value, part)
    if not is_server(value) and callable(value) and _without_parameters(value):
        value = value()  # a factory: `server.py:make_app`
    if not is_server(value):
        raise LiveError(
            f"{target.describe()} is a {type(value).__name__}, not an App or a server stub instance", ExitCode.USAGE
        )
    return value


def _without_parameters(value: Any) -> bool:
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return False
    optional = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return all(p.default is not p.empty or p.kind in optional for p in signature.parameters.values())


def find_server(module: ModuleType, target: Target) -> Any:
    """The one server object defined at module level (an `App`'s own server object not counted twice)."""
    found = {name: value for name, value in vars(module).items() if not name.startswith("__") and is_server(value)}
    apps_servers = {id(getattr(value, "_server", None)) for value in found.values()}
    found = {name: value for name, value in found.items() if id(value) not in apps_servers}
    if len(found) == 1:
        return next(iter(found.values()))
    where = target.describe()
    if not found:
        hint = _no_server_hint(module, target)
        raise LiveError(f"{where} defines no App or server object at module level: {hint}", ExitCode.USAGE)
    names = sorted(found)
    raise LiveError(
        f"{where} defines {len(names)} server objects ({', '.join(names)}): name one, e.g. {where}:{names[0]}",
        ExitCode.USAGE,
    )


def _factories(module: ModuleType) -> list[tuple[str, Any]]:
    """The module's own functions that build a server: named make_/create_/build_..., or annotated to
    return an App or a server."""
    out: list[tuple[str, Any]] = []
    for name, value in vars(module).items():
        if not inspect.isfunction(value) or value.__module__ != module.__name__ or name.startswith("_"):
            continue
        returns = str(inspect.signature(value).return_annotation)
        if name.startswith(("make_", "create_", "build_")) or "App" in returns or "Server" in returns:
            out.append((name, value))
    return out


def _no_server_hint(module: ModuleType, target: Target) -> str:
    """What to do instead: name a factory that takes no arguments, or run the file as a command."""
    where = target.describe()
    factories = _factories(module)
    callable_now = [name for name, value in factories if _without_parameters(value)]
    if callable_now:
        return f"name its factory, {where}:{callable_now[0]}"
    command = f"-- python {target.file}" if target.file is not None else f"-- python -m {target.module}"
    if factories:
        name, value = factories[0]
        needed = ", ".join(p for p, v in inspect.signature(value).parameters.items() if v.default is v.empty)
        return (
            f"its factory {name}() needs arguments ({needed}), so it cannot be named here: create an App at "
            f"module level (app = App(...)), or run the file as a stdio command ({command})"
        )
    return f"create one (app = App(...)), or run the file as a stdio command ({command})"


def server_name(server: Any) -> str:
    """The name a server object announces (an `App`'s name, a stub's `server_info` name)."""
    name = getattr(server, "name", None)
    if isinstance(name, str):
        return name
    info = getattr(server, "server_info", None)
    return str(info.get("name", "server")) if isinstance(info, dict) else "server"
