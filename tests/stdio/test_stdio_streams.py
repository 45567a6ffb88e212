"""A stdio server on whatever its stdin and stdout are: pipes (watched by the event loop, uvloop where
installed), regular files (`server < requests.jsonl > answers.jsonl`) and devices such as /dev/null
(read and written in a thread): every one answers and exits 0 at the end of its input, none hangs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.support import REPO_ROOT

SERVER = [sys.executable, str(REPO_ROOT / "examples" / "echo_server.py"), "--stub", "2025-11-25"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
REQUESTS = b"".join(orjson.dumps(m) + b"\n" for m in (INITIALIZE, CALL))


def answers(data: bytes) -> dict[object, dict[str, object]]:
    return {m["id"]: m for m in map(orjson.loads, data.splitlines())}


@pytest.mark.parametrize("stdin_kind", ["file", "pipe"])
@pytest.mark.parametrize("stdout_kind", ["file", "pipe"])
def test_files_and_pipes_are_served(tmp_path: Path, stdin_kind: str, stdout_kind: str) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUESTS)
    out_path = tmp_path / "answers.jsonl"
    with requests.open("rb") as source, out_path.open("wb") as sink:
        done = subprocess.run(
            SERVER,
            stdin=source if stdin_kind == "file" else None,
            input=REQUESTS if stdin_kind == "pipe" else None,
            stdout=sink if stdout_kind == "file" else subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    got = answers(out_path.read_bytes() if stdout_kind == "file" else done.stdout)
    assert got[1]["result"] == {"content": [{"type": "text", "text": "hi"}]}
    assert b"Traceback" not in done.stderr


def test_dev_null_in_and_out_never_hangs() -> None:
    with open("/dev/null", "rb") as null_in:
        empty = subprocess.run(SERVER, stdin=null_in, capture_output=True, timeout=60, check=False)
    assert empty.returncode == 0 and empty.stdout == b"", empty.stderr.decode()
    with open("/dev/null", "wb") as null_out:
        discarded = subprocess.run(
            SERVER, input=REQUESTS, stdout=null_out, stderr=subprocess.PIPE, timeout=60, check=False
        )
    assert discarded.returncode == 0 and b"Traceback" not in discarded.stderr, discarded.stderr.decode()
