"""The `.mcpsession` format: written a line at a time, read back validated; a truncated, corrupt or
invalid file gets one error naming the file and line, from the API and from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_bindgen.cli import main
from mcp_bindings.runtime.recording.session_file import (
    Entry,
    SessionFileError,
    SessionWriter,
    new_header,
    read_recording,
)


def write_session(path: Path) -> None:
    writer = SessionWriter(path, new_header("stdio", {"command": ["server"]}, {}))
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    writer.write(Entry(1, 0.01, "client", "stdio", request, session="s1"))
    writer.write(Entry(2, 0.02, "server", "stdio", {"jsonrpc": "2.0", "id": 1, "result": {}}, session="s1"))
    writer.write(Entry(3, 0.03, "server", "stdio", None, raw="not json", session="s1"))
    writer.close()


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "a.mcpsession"
    write_session(path)
    recording = read_recording(path)
    assert recording.header["mcpsession"] == 1 and recording.header["transport"] == "stdio"
    assert [(e.seq, e.dir, e.line) for e in recording.entries] == [(1, "client", 2), (2, "server", 3), (3, "server", 4)]
    assert recording.entries[0].is_request and recording.entries[1].is_response
    assert recording.entries[2].raw == "not json" and recording.entries[2].message is None


def test_truncated_last_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.mcpsession"
    write_session(path)
    path.write_text(path.read_text()[:-25])  # cut inside the last line, as a killed recorder would leave it
    with pytest.raises(SessionFileError, match=r"a\.mcpsession:4: the last line is not complete JSON .*truncated"):
        read_recording(path)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda lines: lines.__setitem__(2, "{oops\n"), r":3: not JSON"),
        (lambda lines: lines.__setitem__(1, lines[1].replace('"client"', '"sideways"')), r":2: invalid entry: dir: "),
        (
            lambda lines: lines.__setitem__(0, lines[0].replace('"mcpsession":1', '"mcpsession":9')),
            r":1: session format version 9",
        ),
        (lambda lines: lines.__setitem__(0, '{"hello": 1}\n'), r":1: not a session file"),
        (
            lambda lines: lines.__setitem__(
                1, json.dumps({"seq": 1, "t": 0, "dir": "client", "transport": "stdio"}) + "\n"
            ),
            r":2: invalid entry",
        ),
    ],
)
def test_corrupt_lines_are_named(tmp_path: Path, edit: object, expected: str) -> None:
    path = tmp_path / "a.mcpsession"
    write_session(path)
    lines = path.read_text().splitlines(keepends=True)
    edit(lines)  # type: ignore[operator]
    path.write_text("".join(lines))
    with pytest.raises(SessionFileError, match=expected):
        read_recording(path)


def test_cli_says_what_is_wrong_in_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.mcpsession"
    path.write_text("")
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mcp-bindgen: error: ") and "a.mcpsession:1: the file is empty" in err
    assert main(["diff-sessions", str(tmp_path / "missing.mcpsession"), str(path)]) == 1
    assert "missing.mcpsession: cannot read the session file" in capsys.readouterr().err
    assert main(["record", "-o", str(path)]) == 1
    assert "no server given: put it last (mcp-bindgen record ... -- SERVER)" in capsys.readouterr().err


def test_cli_record_of_a_missing_server_is_one_sentence(tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = [
        sys.executable,
        "-m",
        "mcp_bindgen.cli",
        "record",
        "-o",
        str(tmp_path / "s.mcpsession"),
        "--",
        "/no/such/server",
    ]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2  # the one error of a SERVER that names nothing (issue 45, item 4)
    assert done.stderr.strip().splitlines() == [
        "mcp-bindgen: error: '/no/such/server' names no server: SERVER is a server file (server.py[:app]), "
        "pkg.module:app, an installed command, an http(s) URL, or a command after --"
    ]


def test_cli_record_stops_its_server_on_sigterm(tmp_path: Path) -> None:
    """A host that stops the recorder with SIGTERM leaves no server behind and a whole file."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "server.pid"
    server = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)",
    ]
    path = tmp_path / "s.mcpsession"
    argv = [sys.executable, "-m", "mcp_bindgen.cli", "record", "-o", str(path), "--", *server]
    recorder = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() < deadline and recorder.poll() is None
            time.sleep(0.05)
        recorder.send_signal(signal.SIGTERM)
        assert recorder.wait(timeout=15) == 0
    finally:
        recorder.kill()
        recorder.communicate()
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "the server outlived its recorder"
        time.sleep(0.05)
    assert read_recording(path).entries == []
