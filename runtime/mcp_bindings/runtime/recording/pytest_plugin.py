"""A pytest plugin: the `mcp_recording` fixture records a session on the first run and replays it
afterwards, as vcrpy does for HTTP (docs/testing-with-recordings.md).

    pytest_plugins = ["mcp_bindings.runtime.recording.pytest_plugin"]   # in the root conftest.py

    def test_my_host(mcp_recording):
        command = mcp_recording.server(["npx", "my-mcp-server"])   # spawn this instead of the server
        ...                                                        # drive it with any client

    def test_my_server(mcp_recording):
        mcp_recording.check_server(["python", "server.py"])      # the recorded client side, replayed

    async def test_my_http_host(mcp_recording):
        async with mcp_recording.http("http://127.0.0.1:8000/mcp") as url:   # a proxy, or a replay
            ...

The file is `recordings/<test module>/<test name>.mcpsession` beside the test module, or the
`path=` of `@pytest.mark.mcp_recording(...)`. The mode (`--mcp-record-mode`, or the marker's `mode=`):

* `once` (default): replay the file if it exists, else record it;
* `none`: replay only; a missing file fails the test;
* `new_episodes`: replay what the file has; a request it has not is sent to the live server, and the
  file is recorded again from this run (the replayed part and the new one);
* `all`: always record, overwriting the file.

Requests are matched as `mcp-bindgen replay` matches them; the marker's `order=`, `ignore=` (params
paths) and `timing=` pass through."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

import pytest

from mcp_bindings.runtime.recording.replay_server import Order, Timing

Mode = Literal["once", "none", "new_episodes", "all"]
MODES: tuple[Mode, ...] = get_args(Mode)
BINDGEN = [sys.executable, "-m", "mcp_bindgen.cli"]


@dataclass
class McpRecording:
    """What the fixture gives a test: the session file, the mode, and what to run instead of the server."""

    path: Path
    mode: Mode
    order: str = "any"
    timing: str = "fast"
    ignore: tuple[str, ...] = ()
    # Whether this run records rather than replays: decided once, when the test starts.
    recording: bool = field(init=False)

    def __post_init__(self) -> None:
        self.recording = self.mode == "all" or (self.mode == "once" and not self.path.exists())

    def _replay_options(self) -> list[str]:
        options = ["--order", self.order, "--timing", self.timing]
        for path in self.ignore:
            options += ["--ignore", path]
        return options

    def server(self, command: list[str]) -> list[str]:
        """The stdio command a client test spawns instead of `command`: the recording proxy in front
        of it when this run records, else a replay of the file (with `command` as the live fallback
        in `new_episodes` mode)."""
        if self.recording:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return [*BINDGEN, "record", "-o", str(self.path), "--", *command]
        if not self.path.exists():
            pytest.fail(
                f"no recording at {self.path} (mode {self.mode!r}): run once with --mcp-record-mode=once to record it"
            )
        if self.mode == "new_episodes":
            return [*BINDGEN, "replay", str(self.path), *self._replay_options(), "--new-episodes", *command]
        return [*BINDGEN, "replay", str(self.path), *self._replay_options()]

    @asynccontextmanager
    async def http(self, url: str) -> AsyncIterator[str]:
        """For a client test of a Streamable HTTP server: the URL to connect to instead of `url`, for
        the block: the recording proxy in front of it when this run records, else a replay of the file
        over HTTP (in `new_episodes` mode with `url` behind it, the file written again when the block ends)."""
        from mcp_bindings.runtime.recording.compare import DEFAULT_IGNORED, MatchRules
        from mcp_bindings.runtime.recording.http_fallback import HttpLiveFallback
        from mcp_bindings.runtime.recording.http_proxy import recording_proxy
        from mcp_bindings.runtime.recording.http_replay import replay_http
        from mcp_bindings.runtime.recording.replay_server import ServerReplay
        from mcp_bindings.runtime.recording.session_file import read_recording

        if self.recording:
            async with recording_proxy(url, self.path) as proxied:
                yield proxied
            return
        if not self.path.exists():
            pytest.fail(f"no recording at {self.path} (mode {self.mode!r}): run once with --mcp-record-mode=once")
        rules = MatchRules(ignore=(*DEFAULT_IGNORED, *self.ignore))
        episodes = self.mode == "new_episodes"
        replay = ServerReplay(
            read_recording(self.path),
            rules=rules,
            order=cast("Order", self.order),
            timing=cast("Timing", self.timing),
            fallback=HttpLiveFallback(url) if episodes else None,
        )
        record_to = self.path if episodes else None
        async with replay_http(replay, record_to=record_to, server={"url": url}) as replayed:
            yield replayed

    def check_server(self, command: list[str], *, ignore_results: tuple[str, ...] = ()) -> None:
        """Drive the stdio server `command` with the recorded client side; fail the test naming every
        answer that differs from the recording."""
        import anyio

        from mcp_bindings.runtime.recording.replay_client import replay_client
        from mcp_bindings.runtime.recording.session_file import read_recording

        if not self.path.exists():
            pytest.fail(f"no recording at {self.path}: a server test replays a session a client test recorded")
        report = anyio.run(lambda: replay_client(read_recording(self.path), command, ignore=ignore_results))
        if not report.ok:
            pytest.fail(report.text(), pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-recording")
    group.addoption(
        "--mcp-record-mode",
        choices=MODES,
        default=None,
        help="how the mcp_recording fixture uses its session files (default: once)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "mcp_recording(path=None, mode=None, order='any', timing='fast', ignore=()): mcp_recording options"
    )


def _file_name(node: pytest.Item) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", node.name) + ".mcpsession"


@pytest.fixture
def mcp_recording(request: pytest.FixtureRequest) -> McpRecording:
    marker = request.node.get_closest_marker("mcp_recording")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    mode = cast("Mode | None", options.get("mode") or request.config.getoption("--mcp-record-mode")) or "once"
    if mode not in MODES:
        raise pytest.UsageError(f"mcp_recording mode {mode!r} is not one of {', '.join(MODES)}")
    module = Path(str(request.node.fspath))
    default = module.parent / "recordings" / module.stem / _file_name(request.node)
    path = Path(options["path"]) if options.get("path") else default
    if not path.is_absolute():
        path = module.parent / path
    return McpRecording(
        path=path,
        mode=mode,
        order=options.get("order", "any"),
        timing=options.get("timing", "fast"),
        ignore=tuple(options.get("ignore", ())),
    )
