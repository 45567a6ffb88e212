"""`mcp-bindgen list | call | read | get-prompt | inspect SERVER` against the project's servers, as
subprocesses: SERVER as a server file, a quoted command, a command after `--`, and a URL (a server
`mcp-bindgen run` serves over Streamable HTTP), at both eras' versions; the output for people and
`--format json`, the exit codes and the one-line errors."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.cli import APP_SERVER, bindgen, served

ERAS = ["2025-11-25", "2026-07-28"]


@pytest.fixture(scope="module")
def typed_url(typed_server: Path) -> Iterator[str]:
    with served(["run", typed_server]) as (url, _process):
        yield url


def _json(done: object) -> dict:
    assert getattr(done, "returncode", None) == 0, getattr(done, "stderr", "")
    return json.loads(getattr(done, "stdout", ""))


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("mcp-bindgen:")]
    assert len(lines) == 1, stderr


@pytest.mark.parametrize("version", ERAS)
def test_call_types_values_from_the_input_schema_over_stdio(typed_server: Path, version: str) -> None:
    done = bindgen("call", typed_server, "add", "a=2", "b=0.5", "scale=3", "--protocol", version, "--format", "json")
    result = _json(done)
    assert result["structuredContent"] == {"result": 7.5}
    described = _json(
        bindgen("call", typed_server, "describe", "flag=true", 'tags=["x","y"]', "limit=4", "--format", "json")
    )["structuredContent"]
    assert described == {"flag": True, "tags": ["x", "y"], "limit": 4, "types": ["bool", "list"]}


def test_call_json_arguments_and_words_together(typed_server: Path) -> None:
    done = bindgen("call", typed_server, "describe", "--json", '{"tags": ["j"], "flag": false}', "flag=yes")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"flag": True, "tags": ["j"], "limit": None, "types": ["bool", "list"]}


@pytest.mark.parametrize("version", ["auto", *ERAS])
def test_every_command_over_http(typed_url: str, version: str) -> None:
    protocol = ("--protocol", version)
    tools = _json(bindgen("list", "tools", typed_url, *protocol, "--format", "json"))["tools"]
    assert [t["name"] for t in tools] == ["add", "describe", "fail", "picture", "slow"]
    assert bindgen("call", typed_url, "add", "a=1", "b=2", *protocol).stdout.strip() == '{"result":3.0}'
    assert bindgen("read", typed_url, "items://7", *protocol).stdout.strip() == "item 7"
    prompt = bindgen("get-prompt", typed_url, "review", "code=x()", *protocol)
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout.splitlines() == ["# Ask for a code review.", "user: Review this python code: x()"]
    templates = _json(bindgen("list", "templates", typed_url, *protocol, "--format", "json"))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["items://{item_id}"]


def test_list_for_people(typed_server: Path) -> None:
    done = bindgen("list", "tools", typed_server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["TOOL", "ARGUMENTS", "(*", "required)", "DESCRIPTION"]
    assert lines[1].split() == [
        "add",
        "a*:",
        "integer,",
        "b*:",
        "number,",
        "scale:",
        "integer",
        "Add",
        "two",
        "numbers,",
        "then",
        "scale.",
    ]
    resources = bindgen("list", "resources", typed_server).stdout.splitlines()
    assert resources[1].split() == ["config://app", "config", "text/plain"]
    prompts = bindgen("list", "prompts", typed_server).stdout.splitlines()
    assert prompts[1].split()[:2] == ["review", "code*,"]


def test_server_given_as_a_quoted_command_and_after_dashes() -> None:
    command = f"{sys.executable} {APP_SERVER}"
    quoted = bindgen("call", command, "weather", "city=Paris", "--format", "json")
    assert _json(quoted)["structuredContent"] == {"city": "Paris", "celsius": 21.5}
    dashes = bindgen("call", "weather", "city=Rome", "--format", "json", "--", sys.executable, APP_SERVER)
    assert _json(dashes)["structuredContent"] == {"city": "Rome", "celsius": 21.5}
    listed = bindgen("list", "--format", "json", "prompts", "--", sys.executable, APP_SERVER)
    assert [p["name"] for p in _json(listed)["prompts"]] == ["review"]


def test_a_handshake_only_server_and_its_versions() -> None:
    """examples/echo_server.py written against 2025-11-25 still serves every version (version
    crossing); `inspect` reports which versions it negotiates when offered each alone."""
    server = f"{sys.executable} {REPO_ROOT / 'examples' / 'echo_server.py'} --stub 2025-11-25"
    report = _json(bindgen("inspect", server, "--format", "json"))
    assert report["serverInfo"]["name"] == "echo"
    assert report["versions"] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
    assert [t["name"] for t in report["tools"]] == ["echo"]
    assert bindgen("call", server, "echo", "text=hi", "--protocol", "2024-11-05").stdout == "hi\n"


def test_inspect_for_people(typed_server: Path) -> None:
    done = bindgen("inspect", typed_server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["server", "typed", "2.0"]
    assert lines[1].split() == ["protocol", "2026-07-28", "(negotiated)"]
    assert lines[2] == "speaks        2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    assert lines[3] == "capabilities  logging, prompts, resources, tools"
    assert "instructions  A server for the CLI tests." in lines
    assert "tools (5)" in lines and "resource templates (1)" in lines


def test_images_are_saved_to_files(typed_server: Path, tmp_path: Path) -> None:
    done = bindgen("call", typed_server, "picture", "--save-dir", tmp_path)
    assert done.returncode == 0, done.stderr
    saved = tmp_path / "image-1.png"
    assert done.stdout.strip() == f"[image image/png saved to {saved}]"
    assert saved.read_bytes() == b"\x89PNG"
    raw = _json(bindgen("call", typed_server, "picture", "--format", "json"))
    assert base64.b64decode(raw["content"][0]["data"]) == b"\x89PNG"


def test_progress_is_shown_on_stderr(typed_server: Path) -> None:
    done = bindgen("call", typed_server, "slow", "steps=3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    shown = [line for line in done.stderr.splitlines() if line.startswith("progress")]
    assert shown == ["progress 1/3 step 1", "progress 2/3 step 2", "progress 3/3 step 3"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["call", "{server}", "fail", "reason=nope"], 1, "the tool 'fail' answered an error (isError)"),
        (
            ["call", "{server}", "missing"],
            3,
            "the server has no tool 'missing' (it has: add, describe, fail, picture, slow)",
        ),
        (["get-prompt", "{server}", "missing"], 3, "the server has no prompt 'missing' (it has: review)"),
        (["read", "{server}", "nothing://here"], 3, "the server has no resource 'nothing://here'"),
        (["call", "{server}", "add", "a=x", "b=1"], 2, "argument a='x' is not integer: pass a value of that type"),
        (["call", "{server}", "add", "a=1"], 2, "tool 'add' needs b: pass b=VALUE"),
        (["call", "{server}", "add", "a=1", "c=2", "b=1"], 2, "tool 'add' has no argument 'c': it takes a, b, scale"),
        (["call", "{server}", "add", "a"], 2, "argument 'a' must read name=value"),
        (["call", "{server}", "add", "--json", "[1]"], 2, "--json must be a JSON object"),
        (["get-prompt", "{server}", "review"], 2, "prompt 'review' needs code: pass code=VALUE"),
        (["list", "tools", "{server}", "--protocol", "1999-01-01"], 2, "unknown protocol version '1999-01-01'"),
        (["list", "tools", "{server}", "--header", "nocolon"], 2, "--header 'nocolon' must read `Name: value`"),
        (["list", "tools", "http://127.0.0.1:9/mcp"], 4, "could not talk to `http://127.0.0.1:9/mcp`"),
        (["list", "tools", "definitely-not-a-command-xyz"], 2, "'definitely-not-a-command-xyz' names no server"),
    ],
)
def test_failures_are_one_line_with_their_exit_code(
    typed_server: Path, args: list[str], code: int, message: str
) -> None:
    done = bindgen(*[a.replace("{server}", str(typed_server)) for a in args])
    assert done.returncode == code, (done.stdout, done.stderr)
    _no_traceback(done.stderr)
    assert message in done.stderr


def test_auth_required_and_a_header_that_answers_it() -> None:
    """A server behind a bearer check: without the header `call` exits 5 and says to pass one; with
    --header (on every HTTP request) the call goes through."""
    from mcp_bindings.runtime.app import App
    from tests.support.http import serve_in_thread

    app = App("guarded", version="1")

    @app.tool
    def hello() -> str:
        return "hi"

    inner = app.asgi()

    async def guarded(scope: dict, receive: object, send: object) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != b"Bearer sesame":
            await send({"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]})  # type: ignore[operator]
            await send({"type": "http.response.body", "body": b""})  # type: ignore[operator]
            return
        await inner(scope, receive, send)  # type: ignore[arg-type]

    with serve_in_thread(guarded) as base:
        refused = bindgen("call", f"{base}/mcp", "hello")
        allowed = bindgen("call", f"{base}/mcp", "hello", "--header", "Authorization: Bearer sesame")
    assert refused.returncode == 5, refused.stderr
    _no_traceback(refused.stderr)
    assert "requires authorization" in refused.stderr and "--header 'Authorization: Bearer TOKEN'" in refused.stderr
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "hi"


def test_debug_shows_the_traceback(typed_server: Path) -> None:
    plain = bindgen("call", typed_server, "add", "a=x", "b=1")
    assert "Traceback" not in plain.stderr
    debug = bindgen("--debug", "call", typed_server, "add", "a=x", "b=1")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_an_app_only_tool_is_named_app_only() -> None:
    """An MCP Apps tool with visibility ["app"] is listed only to a client with a view: `call` says it
    is app-only (exit 3), not that the server has no such tool; a missing tool is still "no tool"
    (issue 45, item 6)."""
    ui_server = f"{REPO_ROOT / 'examples' / 'app_ui_server.py'}:make_app"
    done = bindgen("call", ui_server, "increment", "value=1")
    assert done.returncode == 3
    assert done.stderr.startswith(
        "mcp-bindgen: error: the tool 'increment' is app-only, not listed to this client: "
        "tool 'increment' is callable only by an MCP Apps view"
    ), done.stderr
    missing = bindgen("call", ui_server, "nosuch")
    assert missing.returncode == 3
    assert missing.stderr == "mcp-bindgen: error: the server has no tool 'nosuch' (it has: counter)\n"
