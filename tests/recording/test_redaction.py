"""Secrets never reach a session file: the default rules (Authorization and cookie headers, token
fields, bearer credentials and JWTs in any string), rule files, and a real bearer token minted by the
test authorization server flowing through the HTTP recording proxy to a resource server that checks it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_bindgen.cli import main
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.recording.http_proxy import recording_proxy
from mcp_bindings.runtime.recording.redaction import DEFAULT, RedactionError, load_redaction
from mcp_bindings.runtime.recording.session_file import read_recording
from tests.peers.auth_harness import READ, oauth_stack
from tests.peers.harness import client_module


def test_default_rules() -> None:
    message = {
        "params": {
            "arguments": {"access_token": "abc", "note": "use Bearer s3cr3t-t0ken-value please", "count": 3},
            "nested": [{"Password": "hunter2"}],
        }
    }
    assert DEFAULT.json(message) == {
        "params": {
            "arguments": {"access_token": "[REDACTED]", "note": "use Bearer [REDACTED] please", "count": 3},
            "nested": [{"Password": "[REDACTED]"}],
        }
    }
    headers = DEFAULT.header_map({"Authorization": "Bearer x", "Cookie": "a=b", "Content-Type": "application/json"})
    assert headers == {"authorization": "[REDACTED]", "cookie": "[REDACTED]", "content-type": "application/json"}


def test_rule_files(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"fields": ["ssn"], "patterns": ["sk-[a-z0-9]+"], "values": ["plain-secret"]}))
    redaction = load_redaction(rules)
    assert redaction.json({"ssn": "1", "x": "key sk-abc123 and plain-secret", "access_token": "t"}) == {
        "ssn": "[REDACTED]",
        "x": "key [REDACTED] and [REDACTED]",
        "access_token": "[REDACTED]",  # the defaults still apply
    }
    rules.write_text(json.dumps({"defaults": False, "fields": ["ssn"]}))
    assert load_redaction(rules).json({"ssn": "1", "access_token": "t"}) == {"ssn": "[REDACTED]", "access_token": "t"}
    rules.write_text(json.dumps({"patterns": ["("]}))
    with pytest.raises(RedactionError, match=r"redaction pattern '\(' is not a regular expression"):
        load_redaction(rules)
    rules.write_text(json.dumps({"field": ["x"]}))
    with pytest.raises(RedactionError, match="unknown redaction key 'field'"):
        load_redaction(rules)


def test_cli_refuses_bad_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text("{")
    assert main(["record", "-o", str(tmp_path / "s.mcpsession"), "--redaction", str(rules), "--", "true"]) == 1
    assert "the redaction rules are not JSON" in capsys.readouterr().err


@pytest.mark.anyio
async def test_a_real_bearer_token_never_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "auth.mcpsession"
    version = "2025-11-25"
    with anyio.fail_after(30):
        async with oauth_stack(stub=version) as stack:
            token = stack.auth.mint(resource=stack.mcp_url, scope=READ, client_id="recorded-client")
            async with recording_proxy(stack.mcp_url, path) as url:
                headers = {"Authorization": f"Bearer {token}"}
                async with connect_http(url, client_module(version).Client, headers=headers) as client:
                    tools = await client.list_tools()
                    # The token also travels inside a message (a tool echoing it back).
                    echoed = await client.call_tool(name="echo", arguments={"text": f"my token is {token}"})
    assert [t.name for t in tools.tools] == ["echo"]
    assert echoed.content[0].text == f"my token is {token}"  # the proxy passed it through unchanged
    assert stack.seen and all(info.client_id == "recorded-client" for info in stack.seen)  # the server checked it
    text = path.read_text()
    assert token not in text and token.split(".")[1] not in text
    recording = read_recording(path)
    requests = [e for e in recording.entries if e.dir == "client" and e.http]
    assert requests and all((e.http or {})["headers"]["authorization"] == "[REDACTED]" for e in requests)
    answers = [e for e in recording.entries if e.dir == "server"]
    assert answers and all(e.http and e.http["status"] == 200 for e in answers)
    assert {e.session for e in recording.entries} - {None}  # the Mcp-Session-Id of the session
    assert recording.versions == [version]
    assert any("my token is [REDACTED]" in json.dumps(e.message) for e in answers)


def test_redact_env_covers_the_server_command(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.support.recording import SERVER

    path = tmp_path / "s.mcpsession"
    argv = [sys.executable, "-m", "mcp_bindgen.cli", "record", "-o", str(path), "--redact-env", "RECORD_SECRET"]
    argv += ["--", *SERVER, "--api-key=hunter2-secret"]
    env = {**os.environ, "RECORD_SECRET": "hunter2-secret"}
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n"
    done = subprocess.run(argv, input=request, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == {}
    text = path.read_text()
    assert "hunter2-secret" not in text and "--api-key=[REDACTED]" in text
    assert read_recording(path).header["redaction"]["values"] == 1  # how many, never which
