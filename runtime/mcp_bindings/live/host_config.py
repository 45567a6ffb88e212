"""Reading and rewriting an MCP host's configuration file without damaging it (`install`,
`uninstall`; the policy is in docs/security.md):

- one edit at a time: a lock file beside it (`.NAME.lock`) is held from the read to the write, and
  the new text replaces the file atomically (never half-written);
- a symlink is followed: the target is rewritten, the link stays;
- a read-only file is refused, not replaced;
- what JSON cannot carry (`NaN`, `Infinity`) is refused; numbers are written back as they were
  spelled (`1e400`, `1.50`), with the file's own indentation and final newline;
- the previous file is kept beside it as `NAME.TIMESTAMP.bak`, the newest `BACKUPS` of them;
- a new file is created 0600 (it may hold `--env` secrets); an existing one keeps its mode."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mcp_bindgen.errors import BindgenError

from .files import locked, write_atomic

BACKUPS = 5
NEW_FILE_MODE = 0o600
T = TypeVar("T")


@dataclass
class ConfigText:
    """A configuration file's JSON object and how it was written (indentation, final newline); its
    numbers are kept as placeholders holding their original spelling (`token`)."""

    data: dict[str, Any]
    indent: str | int | None
    newline: bool
    token: str

    def dumps(self, value: Any, indent: str | int | None = None) -> str:
        text = json.dumps(value, indent=indent, ensure_ascii=False)
        return re.sub(rf'"{self.token}:([-+0-9.eE]+)"', r"\1", text)

    def text(self) -> str:
        return self.dumps(self.data, self.indent) + ("\n" if self.newline else "")


def _not_json(path: Path) -> Callable[[str], Any]:
    def refuse(constant: str) -> Any:
        raise BindgenError(
            f"{path} holds {constant}, which is not JSON: install would not write it back; "
            "replace it with a number or a string and run again"
        )

    return refuse


def _indent(text: str) -> str | int | None:
    found = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    if found:
        return found.group(1) if "\t" in found.group(1) else len(found.group(1))
    return None if text.strip() not in ("", "{}") else 2


def parse_config(path: Path) -> ConfigText:
    """The file's object, or an empty one for a missing file; one sentence for what is no JSON object."""
    token = "n" + secrets.token_hex(8)
    if not path.exists():
        return ConfigText({}, 2, True, token)
    try:
        text = path.read_text(encoding="utf-8")

        def spelled(number: str) -> str:
            return f"{token}:{number}"

        data: Any = json.loads(text or "{}", parse_float=spelled, parse_int=spelled, parse_constant=_not_json(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BindgenError(f"{path} is not plain JSON ({exc}): fix it (or remove comments) and run again") from exc
    if not isinstance(data, dict):
        raise BindgenError(f"{path} holds no JSON object: fix it and run again")
    return ConfigText(data, _indent(text), text.endswith("\n") or not text, token)  # pyright: ignore[reportUnknownArgumentType]


def _writable(path: Path) -> None:
    if not path.exists():
        return
    mode = path.stat().st_mode
    if not mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise BindgenError(
            f"{path} is read-only: make it writable to install into it, "
            "or add the entry by hand (mcp-bindgen install --print TARGET shows it)"
        )


def _backup(path: Path) -> Path:
    """Copy `path` to NAME.TIMESTAMP.bak beside it; keep the newest BACKUPS such copies."""
    stamp = time.time_ns() // 1000
    while True:
        clock = time.strftime("%Y%m%dT%H%M%S", time.gmtime(stamp / 1e6))
        backup = path.with_name(f"{path.name}.{clock}{stamp % 1_000_000:06d}.bak")
        if not backup.exists():
            break
        stamp += 1
    shutil.copy2(path, backup)
    pattern = re.compile(rf"{re.escape(path.name)}\.\d{{8}}T\d{{12}}\.bak")
    ours = sorted(p for p in path.parent.iterdir() if pattern.fullmatch(p.name))
    for old in ours[:-BACKUPS]:
        old.unlink(missing_ok=True)
    return backup


def update_config(path: Path, change: Callable[[ConfigText], T]) -> tuple[T, Path | None]:
    """Apply `change` to the file's object under the lock and write it back (symlink followed,
    backup first); what `change` returned and the backup's path (None for a new file)."""
    real = Path(os.path.realpath(path))
    with locked(real.with_name(f".{real.name}.lock")):
        _writable(real)
        config = parse_config(real)
        result = change(config)
        exists = real.exists()
        try:
            backup = _backup(real) if exists else None
            write_atomic(real, config.text(), stat.S_IMODE(real.stat().st_mode) if exists else NEW_FILE_MODE)
        except OSError as exc:
            raise BindgenError(f"cannot write {real}: {exc.strerror or exc}: the file is unchanged") from exc
    return result, backup
