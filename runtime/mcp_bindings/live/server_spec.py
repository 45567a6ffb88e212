"""SERVER: the one meaning of the server every command that talks to one takes (`list`, `call`,
`read`, `get-prompt`, `inspect`, `lock`, `lint`, `client`, `replay-client`, `install`):

    https://host/mcp     a Streamable HTTP URL
    server.py[:app]      a server file, served on stdio by `mcp-bindgen run`
    pkg.module:app       a server object in an importable module, the same
    weather              an installed command (on PATH, beside this interpreter, or a console script)
    -- CMD ARGS...       any stdio command (or the same quoted as one word)

`parse_server` turns each into a URL or a command line with absolute paths (hosts start servers
from anywhere, with a minimal PATH); what it cannot resolve is one sentence naming the forms. Neither
the runtime nor the generator's pipeline is imported: `install` and `--help` stay light."""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_bindgen.errors import BindgenError

FORMS = "a server file (server.py[:app]), pkg.module:app, an installed command, an http(s) URL, or a command after --"


class ServerSpecError(BindgenError):
    """SERVER names nothing this machine can start or reach (a usage error: exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class ServerSpec:
    """A resolved SERVER: `url`, or the stdio `command` with absolute paths; `text` is what was given
    (what messages name, never the internal `mcp-bindgen run` line), `name` a default entry name."""

    text: str
    url: str | None
    command: list[str] | None
    name: str

    @property
    def words(self) -> list[str]:
        """The URL alone, or the command's words (what the runtime's connectors take)."""
        return [self.url] if self.url is not None else list(self.command or [])


def bindgen_command() -> list[str]:
    """How a child (or a host) starts `mcp-bindgen`: this installation's script by absolute path, or
    this interpreter running the CLI module."""
    script = Path(sys.executable).parent / ("mcp-bindgen.exe" if sys.platform == "win32" else "mcp-bindgen")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcp_bindgen.cli"]


def has_attribute(text: str) -> bool:
    """`server.py:app`, `pkg.mod:app`; not a Windows drive (`C:\\x\\server.py`) nor a URL."""
    head, sep, tail = text.rpartition(":")
    return bool(sep) and bool(head) and tail.replace(".", "").replace("_", "").isalnum() and len(head) > 1


def entry_point_module(name: str) -> str | None:
    """The module of an installed command (`console_scripts` entry point) named `name`, if any."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="console_scripts", name=name):
        return entry.module
    return None


def _is_module_path(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def _executable(word: str) -> str | None:
    """`word` as an absolute executable path: a path as given (made absolute, symlinks kept: a venv's
    python stays the venv's), a command on PATH, or one beside this interpreter (a venv not activated)."""
    if os.sep in word or "/" in word:
        path = os.path.abspath(word)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    found = shutil.which(word) or shutil.which(word, path=str(Path(sys.executable).parent))
    return os.path.abspath(found) if found else None


def _python_file(text: str, name: str | None) -> ServerSpec | None:
    """`server.py` / `server.py:app`: `mcp-bindgen run` serves it; a syntax error is reported here,
    once, with its file and line (every start of the server would report it again)."""
    where, attribute = text.rsplit(":", 1) if has_attribute(text) else (text, "")
    if not where.endswith(".py"):
        return None
    path = Path(where)
    if not path.is_file():
        raise ServerSpecError(f"no such file: {where} (SERVER is {FORMS})")
    path = path.resolve()
    check_imports(path, check_syntax(path))
    run = str(path) + (f":{attribute}" if attribute else "")
    return ServerSpec(text, None, [*bindgen_command(), "run", run], name or _file_name(path))


def check_syntax(path: Path) -> ast.Module:
    """Parse (not run) a server file: a syntax error as one sentence naming the file and line."""
    try:
        return ast.parse(path.read_bytes(), str(path))
    except SyntaxError as exc:
        raise ServerSpecError(
            f"{path}, line {exc.lineno}: {type(exc).__name__}: {exc.msg}: fix the file and run again"
        ) from None
    except (OSError, ValueError) as exc:
        raise ServerSpecError(f"{path} cannot be read as Python source: {exc}") from None


def check_imports(path: Path, tree: ast.Module) -> None:
    """The modules a server file imports at its top level are installed (found, not imported: no
    code runs); the first missing one as one sentence naming the file, the line and what to install.
    Every start of the server would otherwise report it again."""
    from importlib.util import find_spec

    from mcp_bindgen.cli import missing_extra

    sys.path.insert(0, str(path.parent))  # its sibling modules, as `mcp-bindgen run` finds them
    try:
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".", 1)[0]
                if top in sys.builtin_module_names or find_spec(top) is not None:
                    continue
                extra = missing_extra(ModuleNotFoundError(name=top))
                hint = f"pip install 'mcp-bindgen[{extra}]'" if extra else f"pip install {top} (or what provides it)"
                raise ServerSpecError(f"{path}, line {node.lineno}: imports {top!r}, which is not installed: {hint}")
    finally:
        sys.path.remove(str(path.parent))


def _one_word(text: str, name: str | None) -> ServerSpec:
    if text.startswith(("http://", "https://")):
        return ServerSpec(text, text, None, name or _url_name(text))
    file = _python_file(text, name)
    if file is not None:
        return file
    executable = _executable(text)
    if executable is not None:
        return ServerSpec(text, None, [executable], name or Path(text).stem)
    module = text.rsplit(":", 1)[0] if has_attribute(text) else text
    if _is_module_path(module) and (has_attribute(text) or "." in module or entry_point_module(module)):
        return ServerSpec(text, None, [*bindgen_command(), "run", text], name or module.rsplit(".", 1)[-1])
    raise ServerSpecError(f"{text!r} names no server: SERVER is {FORMS}")


def _command(words: list[str], text: str, name: str | None) -> ServerSpec:
    """A stdio command: its program and any argument naming an existing file made absolute."""
    program = _executable(words[0])
    if program is None:
        raise ServerSpecError(f"no such command: {words[0]} (SERVER is {FORMS})")
    args = [os.path.abspath(w) if not w.startswith("-") and os.path.isfile(w) else w for w in words[1:]]
    return ServerSpec(text, None, [program, *args], name or Path(words[-1]).stem or Path(words[0]).name)


def parse_server(given: str | Sequence[str], name: str | None = None) -> ServerSpec:
    """SERVER as one word (a quoted command is split) or as a command's words (`--from CMD ARGS...`)."""
    if isinstance(given, str):
        words = [given] if Path(given).is_file() or given.startswith(("http://", "https://")) else shlex.split(given)
        text = given
    else:
        words, text = list(given), shlex.join(given)
    if not words:
        raise ServerSpecError(f"no server given: SERVER is {FORMS}")
    if len(words) == 1:
        return _one_word(words[0], name)
    if words[0].startswith(("http://", "https://")):
        raise ServerSpecError(f"a URL server takes no further words: {text!r}")
    return _command(words, text, name)


def _file_name(path: Path) -> str:
    """An entry's default name: the file's, or its folder's for a generic one (weather/server.py: weather)."""
    generic = {"server", "app", "main", "__main__", "mcp_server"}
    return path.parent.name if path.stem in generic and path.parent.name else path.stem


def _url_name(url: str) -> str:
    from urllib.parse import urlsplit

    return (urlsplit(url).hostname or "server").split(".")[0]
