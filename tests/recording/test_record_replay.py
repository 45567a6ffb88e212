"""Record a real stdio server through the recording proxy and replay it to the same client
(tests/support/recording.py): every answer the same, progress carried with the new token, sampling
asked of the client again; an unmatched request named with its nearest recorded one."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support.recording import record_in_memory, replay_in_memory

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-06-18", "2025-11-25"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_replay_answers_as_recorded(tmp_path: Path, version: str) -> None:
    path = tmp_path / "s.mcpsession"
    live = await record_in_memory(path, version)
    assert live["add"]["structuredContent"] == {"result": 5} and live["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert live["ask"]["content"][0]["text"] == "the model said: sampled: why?"
    recording = read_recording(path)
    assert recording.versions == [version]
    directions = {(e.dir, e.method) for e in recording.entries}
    assert ("server", "sampling/createMessage") in directions and ("server", "notifications/progress") in directions
    replayed = await replay_in_memory(recording, version)
    assert replayed == live
    replayed_strict = await replay_in_memory(recording, version, order="strict")
    assert replayed_strict == live
