"""FastMCP 4.2.3's own skills client (`Client.list_skills` / `get_skill` / `read_skill`, with its
`SkillsClientExtension`) against a skills server given as a stdio command; prints what it saw as
JSON. Runs in FastMCP's venv (`contract_peers.fastmcp()`): tests/interop/test_skills_peers.py."""

from __future__ import annotations

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.skills.client import SkillsClientExtension


async def main() -> None:
    transport = StdioTransport(command=sys.argv[1], args=sys.argv[2:])
    async with Client(transport, extensions=[SkillsClientExtension()]) as client:
        skills = await client.list_skills()
        uris = sorted(skill.uri for skill in skills)
        got = await client.get_skill(uris[0])
        read = await client.read_skill(uris[0])
        print(json.dumps({"uris": uris, "got": got.uri, "read": type(read).__name__}))


asyncio.run(main())
