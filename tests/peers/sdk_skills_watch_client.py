"""The official MCP Python SDK (mcp==2.3.0) client against examples/skills_server.py over stdio while
the skills directory changes: it lists the skills and the resources, adds a skill folder, waits (at
most WAIT seconds) for `notifications/resources/list_changed`, lists again, removes the folder, and
the same once more. Prints one JSON object on stdout. Runs in the SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_skills_watch_client.py --version 2025-11-25 --directory DIR \
        -- <our-python> examples/skills_server.py --directory DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import TypeAdapter
from sdk_handshake import sdk_initialize  # beside this script

warnings.simplefilter("ignore")

WAIT = 10.0
RESULT = TypeAdapter(dict[str, Any])
SKILL = "---\nname: release-notes\ndescription: Write the release notes\n---\n\nList what changed.\n"


async def main(version: str, directory: Path, command: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"steps": []}
    seen: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        nonlocal arrived
        if isinstance(message, types.ResourceListChangedNotification):
            seen.append(message.method)
            arrived.set()

    async def listing(session: ClientSession) -> dict[str, Any]:
        skills = await session.send_request(types.Request(method="skills/list", params=None), RESULT)
        resources = await session.list_resources()
        return {
            "skills": sorted(s["uri"] for s in skills["skills"]),
            "resources": sorted(r.uri for r in resources.resources),
        }

    async def after(change: str, work: Any) -> None:
        nonlocal arrived
        arrived = anyio.Event()
        started = time.monotonic()
        work()
        with anyio.move_on_after(WAIT):
            await arrived.wait()
        waited = time.monotonic() - started
        report["steps"].append({"change": change, "notified": arrived.is_set(), "seconds": round(waited, 3)})

    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read_stream, write_stream):
        async with ClientSession(
            read_stream,
            write_stream,
            client_info=types.Implementation(name="sdk-skills-watch", version="2.3.0"),
            message_handler=on_message,
        ) as session:
            result = await sdk_initialize(session, version, "sdk-skills-watch")
            report["capabilities"] = result.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            report["before"] = await listing(session)
            added = directory / "release-notes"

            def add() -> None:
                added.mkdir()
                (added / "SKILL.md").write_text(SKILL, encoding="utf-8")

            await after("added", add)
            report["added"] = await listing(session)
            await after("removed", lambda: shutil.rmtree(added))
            report["removed"] = await listing(session)
    report["notifications"] = seen
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True)
    parser.add_argument("--directory", type=Path, required=True)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args.version, args.directory, args.command)))
