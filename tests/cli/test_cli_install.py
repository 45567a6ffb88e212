"""`mcp-bindgen install HOST TARGET` / `uninstall` for every host, against a temporary HOME: the
written file parses and holds exactly the new entry plus what was there; a backup is kept; `--dry-run`
writes nothing; `--print` is the standard mcpServers JSON. The documented paths per OS too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.live.hosts import HOSTS
from tests.support.cli import APP_SERVER, SCRIPT, bindgen
from tests.support.cli import env as cli_env

# host -> (its file under HOME on Linux, the servers key, a stdio entry's extra keys, a URL entry)
EXPECTED: dict[str, tuple[str, str, dict[str, Any], dict[str, Any] | None]] = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", {}, None),
    "claude-code": (".claude.json", "mcpServers", {"type": "stdio"}, {"type": "http", "url": "{url}"}),
    "cursor": (".cursor/mcp.json", "mcpServers", {}, {"url": "{url}"}),
    "vscode": (".config/Code/User/mcp.json", "servers", {"type": "stdio"}, {"type": "http", "url": "{url}"}),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers", {}, {"serverUrl": "{url}"}),
}
URL = "http://127.0.0.1:3001/mcp"


def _home_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": "", "APPDATA": ""}


@pytest.mark.parametrize("host", list(EXPECTED))
def test_install_merges_keeps_a_backup_and_uninstall_removes(tmp_path: Path, host: str) -> None:
    relative, key, stdio_extra, _remote = EXPECTED[host]
    env = _home_env(tmp_path)
    config = tmp_path / relative
    config.parent.mkdir(parents=True, exist_ok=True)
    before = {"theme": "dark", key: {"other": {"command": "other-server", "args": ["--x"]}}}
    config.write_text(json.dumps(before), encoding="utf-8")

    done = bindgen("install", host, APP_SERVER, "--env", "LOG=debug", environ=env)
    assert done.returncode == 0, done.stderr
    assert f"added `app_server` in {config}" in done.stdout
    written = json.loads(config.read_text(encoding="utf-8"))
    entry = {**stdio_extra, "command": str(SCRIPT), "args": ["run", str(APP_SERVER)], "env": {"LOG": "debug"}}
    assert written == {"theme": "dark", key: {"other": before[key]["other"], "app_server": entry}}
    backup = Path(done.stdout.split("(the previous file is ", 1)[1].split(")", 1)[0])
    assert backup.parent == config.parent and backup.name.startswith(config.name) and backup.suffix == ".bak"
    assert json.loads(backup.read_text(encoding="utf-8")) == before

    # the entry starts the server a host would start: the same command answers a call
    call = bindgen("call", " ".join([entry["command"], *entry["args"]]), "weather", "city=Paris")
    assert call.returncode == 0 and "Paris" in call.stdout

    dry = bindgen("uninstall", host, "app_server", "--dry-run", environ=env)
    assert dry.returncode == 0 and dry.stdout.startswith(f"would remove `app_server` from {config}")
    assert json.loads(config.read_text(encoding="utf-8")) == written
    gone = bindgen("uninstall", host, "app_server", environ=env)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(config.read_text(encoding="utf-8")) == before
    missing = bindgen("uninstall", host, "app_server", environ=env)
    assert missing.returncode == 1 and "has no server `app_server` (it has: other)" in missing.stderr


@pytest.mark.parametrize("host", list(EXPECTED))
def test_install_into_a_missing_file_a_url_and_a_command(tmp_path: Path, host: str) -> None:
    relative, key, stdio_extra, remote = EXPECTED[host]
    env = _home_env(tmp_path)
    config = tmp_path / relative
    done = bindgen("install", host, URL, "--name", "web", "--header", "Authorization: Bearer t", environ=env)
    if remote is None:
        assert done.returncode == 1 and "adds remote servers in the app" in done.stderr
        assert not config.exists()
    else:
        assert done.returncode == 0, done.stderr
        expected = {k: v.replace("{url}", URL) for k, v in remote.items()}
        assert json.loads(config.read_text())[key] == {"web": {**expected, "headers": {"Authorization": "Bearer t"}}}
    command = bindgen(
        "install",
        host,
        "--name",
        "everything",
        "--",
        "python3",
        "-m",
        "some_server",
        environ=env,
    )
    assert command.returncode == 0, command.stderr
    servers = json.loads(config.read_text())[key]
    assert servers["everything"] == {  # the command by absolute path: hosts start servers with a minimal PATH
        **stdio_extra,
        "command": shutil.which("python3", path=cli_env()["PATH"]),
        "args": ["-m", "some_server"],
    }
    assert len(servers) == (1 if remote is None else 2)


def test_dry_run_writes_nothing_and_update_says_so(tmp_path: Path) -> None:
    env = _home_env(tmp_path)
    dry = bindgen("install", "cursor", APP_SERVER, "--dry-run", environ=env)
    assert dry.returncode == 0 and dry.stdout.startswith("would add `app_server`")
    assert not (tmp_path / ".cursor").exists()
    assert bindgen("install", "cursor", APP_SERVER, environ=env).returncode == 0
    again = bindgen("install", "cursor", f"{APP_SERVER}:app", environ=env)
    assert again.returncode == 0 and again.stdout.startswith("updated `app_server`")
    entry = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["app_server"]
    assert entry["args"] == ["run", f"{APP_SERVER}:app"]


def test_print_is_the_standard_mcp_servers_json(tmp_path: Path) -> None:
    done = bindgen("install", "--print", APP_SERVER, "--name", "demo", environ=_home_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "mcpServers": {"demo": {"command": str(SCRIPT), "args": ["run", str(APP_SERVER)]}}
    }
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["install", "notahost", "x.py"], 1, "unknown host 'notahost'"),
        (["install", "cursor", "missing.py"], 2, "no such file: missing.py"),
        (["install", "cursor"], 1, "install takes HOST TARGET"),
        (["install", "cursor", "{server}", "--env", "NOEQUALS"], 1, "--env 'NOEQUALS' must read NAME=VALUE"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    done = bindgen(*[a.replace("{server}", str(APP_SERVER)) for a in args], environ=_home_env(tmp_path))
    assert done.returncode == code and message in done.stderr and "Traceback" not in done.stderr


def test_a_config_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text("{ // a comment\n}", encoding="utf-8")
    done = bindgen("install", "cursor", APP_SERVER, environ=_home_env(tmp_path))
    assert done.returncode == 1 and "is not plain JSON" in done.stderr
    assert config.read_text(encoding="utf-8") == "{ // a comment\n}"


def test_the_documented_path_of_each_host_per_os(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    paths = {name: {os: host.config(os) for os in ("darwin", "win32", "linux")} for name, host in HOSTS.items()}
    support = tmp_path / "Library" / "Application Support"
    assert paths["claude-desktop"] == {
        "darwin": support / "Claude" / "claude_desktop_config.json",
        "win32": tmp_path / "Roaming" / "Claude" / "claude_desktop_config.json",
        "linux": tmp_path / ".config" / "Claude" / "claude_desktop_config.json",
    }
    assert paths["vscode"] == {
        "darwin": support / "Code" / "User" / "mcp.json",
        "win32": tmp_path / "Roaming" / "Code" / "User" / "mcp.json",
        "linux": tmp_path / ".config" / "Code" / "User" / "mcp.json",
    }
    for name, file in (
        ("claude-code", ".claude.json"),
        ("cursor", ".cursor/mcp.json"),
        ("windsurf", ".codeium/windsurf/mcp_config.json"),
    ):
        assert set(paths[name].values()) == {tmp_path / file}
