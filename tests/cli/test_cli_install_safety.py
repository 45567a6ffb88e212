"""`mcp-bindgen install` on a host's configuration it must not damage (issue 43, item 8), as the probe
did it, against a temporary HOME: concurrent installs (real processes) keep every entry; a read-only
file is refused, a symlinked one written through to its target; numbers JSON cannot carry back
(`NaN`) are refused and others (`1e400`, `1.50`) kept as spelled, indentation too; backups are
numbered by time and bounded; a new file holding `--env` secrets is created 0600."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import APP_SERVER, SCRIPT, bindgen
from tests.support.cli import env as cli_env

INSTALLS = 8


def _config(home: Path) -> Path:
    return home / ".cursor" / "mcp.json"


def _install(home: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return bindgen("install", "cursor", APP_SERVER, "--name", name, *extra, environ={"HOME": str(home)})


@pytest.mark.skipif(sys.platform == "win32", reason="the probe ran POSIX processes")
def test_concurrent_installs_keep_every_entry(tmp_path: Path) -> None:
    environ = cli_env(HOME=str(tmp_path))
    _config(tmp_path).parent.mkdir()
    _config(tmp_path).write_text('{"mcpServers": {}}\n', encoding="utf-8")
    processes = [
        subprocess.Popen(
            [str(SCRIPT), "install", "cursor", str(APP_SERVER), "--name", f"s{i}"],
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(INSTALLS)
    ]
    for process in processes:
        _out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    servers = json.loads(_config(tmp_path).read_text(encoding="utf-8"))["mcpServers"]
    assert sorted(servers) == sorted(f"s{i}" for i in range(INSTALLS))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_read_only_config_is_refused_and_left_alone(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.parent.mkdir()
    config.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    config.chmod(0o444)
    inode = config.stat().st_ino
    done = _install(tmp_path, "weather")
    assert done.returncode == 1
    assert done.stderr == (
        f"mcp-bindgen: error: {config} is read-only: make it writable to install into it, "
        "or add the entry by hand (mcp-bindgen install --print TARGET shows it)\n"
    )
    assert config.stat().st_ino == inode and config.read_text(encoding="utf-8") == '{"mcpServers": {}}\n'


def test_a_symlinked_config_is_written_through_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "cursor-mcp.json"
    target.parent.mkdir()
    target.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    _config(tmp_path).parent.mkdir()
    _config(tmp_path).symlink_to(target)
    assert _install(tmp_path, "weather").returncode == 0
    assert _config(tmp_path).is_symlink()
    assert list(json.loads(target.read_text(encoding="utf-8"))["mcpServers"]) == ["weather"]


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_config_holding_no_json_number_is_refused(tmp_path: Path, value: str) -> None:
    config = _config(tmp_path)
    config.parent.mkdir()
    before = f'{{"limit": {value}, "mcpServers": {{}}}}\n'
    config.write_text(before, encoding="utf-8")
    done = _install(tmp_path, "weather")
    assert done.returncode == 1
    assert f"{config} holds {value}, which is not JSON" in done.stderr
    assert config.read_text(encoding="utf-8") == before


def test_numbers_and_indentation_are_kept(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.parent.mkdir()
    head = '{\n    "big": 1e400,\n    "price": 1.50,\n    "n": -0,\n    "mcpServers": {'
    config.write_text(head + "}\n}\n", encoding="utf-8")
    assert _install(tmp_path, "weather").returncode == 0
    text = config.read_text(encoding="utf-8")
    assert text.startswith(head + '\n        "weather": {') and text.endswith("\n}\n")
    assert json.loads(text)["mcpServers"]["weather"]["args"] == ["run", str(APP_SERVER)]


def test_backups_are_kept_per_install_and_bounded(tmp_path: Path) -> None:
    config = _config(tmp_path)
    for i in range(8):
        assert _install(tmp_path, f"s{i}").returncode == 0
    backups = sorted(config.parent.glob("mcp.json.*.bak"))
    assert len(backups) == 5  # the newest five of seven previous files
    assert sorted(json.loads(backups[-1].read_text(encoding="utf-8"))["mcpServers"]) == [f"s{i}" for i in range(7)]
    assert sorted(json.loads(backups[0].read_text(encoding="utf-8"))["mcpServers"]) == [f"s{i}" for i in range(3)]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_new_config_holding_secrets_is_created_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert _install(tmp_path, "weather", "--env", "API_KEY=secret").returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(_config(tmp_path).stat().st_mode) == 0o600
