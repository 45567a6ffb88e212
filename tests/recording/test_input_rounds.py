"""Stateless-era input rounds in a recording: at 2026-07-28 a tool that asks the client's model
(`ask`, tests/peers/recording_server.py) answers an input-required result, and the client calls it
again with the input responses and the sealed `requestState`. The replay matches the retried call to
the recorded one (the state token left out: each server run seals it anew; the responses compared)
and serves the recorded rounds in order; to a 2025-11-25 client the runtime bridges the round into a
real sampling request (the version crossing of `crossed_replay`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.recording.exchanges import Exchange, Unmatched
from mcp_bindings.runtime.recording.replay_server import ServerReplay
from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support.recording import record_in_memory, replay_in_memory

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"


def _rounds(path: Path) -> list[dict[str, Any]]:
    """The `ask` exchange as recorded: the first call, its input-required answer, the retry, its answer."""
    messages = [e.message or {} for e in read_recording(path).entries]
    first = next(i for i, m in enumerate(messages) if (m.get("params") or {}).get("name") == "ask")
    return messages[first : first + 4]


async def test_a_recorded_input_round_replays_in_order_ignoring_the_state_token(tmp_path: Path) -> None:
    path = tmp_path / "rounds.mcpsession"
    live = await record_in_memory(path, MODERN)
    assert live["ask"]["content"][0]["text"] == "the model said: sampled: why?"
    call, asked, retry, answered = _rounds(path)
    assert asked["result"]["resultType"] == "input_required"
    (key,) = asked["result"]["inputRequests"]
    assert asked["result"]["inputRequests"][key]["method"] == "sampling/createMessage"
    assert retry["params"]["requestState"] == asked["result"]["requestState"]
    assert retry["params"]["inputResponses"][key]["content"]["text"] == "sampled: why?"
    assert answered["id"] == retry["id"] != call["id"]

    recording = read_recording(path)
    for order in ("any", "strict"):  # the client's own retry, against the recorded rounds
        assert await replay_in_memory(recording, MODERN, order=order) == live

    replay = ServerReplay(recording)
    first = replay.claim({**call, "id": 90})
    assert isinstance(first, Exchange) and first.response is not None
    assert first.response.message == asked  # round one: the input-required answer
    # A retry under another state token (another run of the server sealed it) is the same round...
    resealed = {**retry, "id": 91, "params": {**retry["params"], "requestState": "sealed-by-another-run"}}
    second = replay.claim(resealed)
    assert isinstance(second, Exchange) and second.response is not None
    assert second.response.message == answered
    # ...but other input responses are not: the error names the round and the answer that differs.
    other = {**retry["params"]["inputResponses"][key], "content": {"type": "text", "text": "no idea"}}
    changed = {**retry, "id": 92, "params": {**retry["params"], "inputResponses": {key: other}}}
    refused = replay.claim(changed)
    assert isinstance(refused, Unmatched)
    assert f'params.inputResponses.{key}.content.text: recorded "sampled: why?", got "no idea"' in refused.message


async def test_a_recorded_input_round_crosses_to_a_handshake_client(tmp_path: Path) -> None:
    """The same recording to a 2025-11-25 client: the runtime asks it the recorded input request as a
    real sampling/createMessage, retries the recorded tool with its answer, and the client gets the
    recorded final result."""
    path = tmp_path / "rounds.mcpsession"
    live = await record_in_memory(path, MODERN)
    crossed = await replay_in_memory(read_recording(path), "2025-11-25")
    assert crossed["ask"] == {key: value for key, value in live["ask"].items() if key != "resultType"}
    assert crossed["progress"] == live["progress"] == [[1, 3], [2, 3], [3, 3]]
