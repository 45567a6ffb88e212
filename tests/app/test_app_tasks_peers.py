"""Tasks on decorated tools driven by a real peer: the official TypeScript SDK client (its
experimental tasks API: `callToolStream`, `listTasks`, `cancelTask`) against the app of
tests/peers/task_app.py at 2025-11-25, over stdio and Streamable HTTP.

The SDK creates the task, polls `tasks/get`, and fetches the result with `tasks/result`; when the
task is `input_required` it calls `tasks/result` at once and answers the elicitation the server
sends there (marked with the task it belongs to). The official Python SDK has no task-augmented
call, so it cannot drive this; the in-memory tests of tests/app/test_app_tasks.py cover both eras.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.peers.harness import PEERS
from tests.peers.task_app import build
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread
from tests.support.sdk import TS_SDK, node_with_ts_sdk

pytestmark = pytest.mark.interop

_reports: dict[str, dict[str, Any]] = {}


def report(transport: str) -> dict[str, Any]:
    """What the TypeScript SDK client observed (one run per transport)."""
    if transport not in _reports:
        node = node_with_ts_sdk()
        argv = [node, str(PEERS / "ts_task_client.mjs"), str(TS_SDK), transport]
        if transport == "http":
            with serve_in_thread(build("2025-11-25").asgi()) as base:
                done = subprocess.run([*argv, base + "/mcp"], capture_output=True, text=True, timeout=120)
        else:
            argv += [sys.executable, str(PEERS / "task_app.py"), "2025-11-25"]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=str(REPO_ROOT))
        assert done.returncode == 0, f"the TypeScript SDK client failed:\n{done.stderr[-3000:]}"
        _reports[transport] = json.loads(done.stdout.strip().splitlines()[-1])
    return _reports[transport]


def text(result: dict[str, Any]) -> str:
    assert "content" in result, result
    return str(result["content"][0]["text"])


TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_app_declares_tasks_to_the_sdk(transport: str) -> None:
    seen = report(transport)
    assert seen["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in seen["tools"]["tools"]}
    assert support == {"slow": "optional", "batch": "required", "greet": "optional", "plain": None}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_sdk_streams_a_task_to_its_result(transport: str) -> None:
    seen = report(transport)
    slow = seen["slow_task"]
    assert "error" not in slow, slow
    assert slow["kinds"][0] == "taskCreated" and slow["kinds"][-1] == "result", slow["kinds"]
    assert slow["task"]["status"] == "working" and slow["statuses"][-1] == "completed", slow
    assert text(slow["result"]) == "slept 0.3 in a task: True"
    related = slow["result"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert related == {"taskId": slow["task"]["taskId"]}
    assert text(seen["slow_now"]) == "slept 0.0 in a task: False"  # the same tool, called plainly
    batch = seen["batch_task"]  # task="required": the SDK makes it a task from the listed taskSupport
    assert batch["kinds"][0] == "taskCreated" and batch["result"]["structuredContent"] == {"total": 10}, batch
    assert text(seen["plain"]) == "plain"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_sdk_answers_an_ask_from_inside_the_task(transport: str) -> None:
    seen = report(transport)
    greet = seen["greet_task"]
    assert "error" not in greet, greet
    assert "input_required" in greet["statuses"], greet  # the SDK then calls tasks/result at once
    assert text(greet["result"]) == "hello ada"
    [asked] = seen["asked"]
    assert asked["message"] == "Your name?" and asked["requestedSchema"]["required"] == ["name"], asked
    assert asked["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": greet["task"]["taskId"]}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_sdk_lists_and_cancels_tasks(transport: str) -> None:
    seen = report(transport)
    long = seen["long_created"]
    assert long["status"] == "working" and long["ttl"] == 60000, long
    listed = {t["taskId"]: t["status"] for t in seen["listed"]["tasks"]}
    assert listed[long["taskId"]] == "working", listed
    finished = [seen[k]["task"]["taskId"] for k in ("slow_task", "batch_task", "greet_task")]
    assert all(listed[task_id] == "completed" for task_id in finished), listed
    assert seen["cancelled"]["taskId"] == long["taskId"] and seen["cancelled"]["status"] == "cancelled"
    assert seen["after_cancel"]["status"] == "cancelled", seen["after_cancel"]
