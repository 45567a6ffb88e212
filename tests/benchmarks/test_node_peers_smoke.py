"""The TypeScript SDK peers of the benchmarks (issue 51) start and answer: the benchmark's own set-up
installs node and the pinned npm packages (`setup_env.prepare_node`, cached under .cache/bench/), and
each Node peer, started by the command the peers section uses, answers the handshake and one
`tools/call echo` over stdio and over Streamable HTTP on a socket bound once here and inherited
(`procs.listener`, the server's `--fd`), at every wire the section drives it at. A small fixed input;
nothing about speed is asserted (benchmarks/ measures it)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest

from benchmarks import bench_peers, procs
from benchmarks.config import HTTP_PATH, LOOPBACK, NODE_PEERS_DIR, PROTOCOL_LEGACY, PROTOCOL_MODERN, TS_PACKAGES
from benchmarks.driver import ECHO_TEXT, CallTemplate, HttpClient, McpHttpSession
from benchmarks.setup_env import Environment, Unavailable, prepare_node
from tests.support import cache_lock

ECHOED = [{"type": "text", "text": ECHO_TEXT}]


ENV = Environment(official_python=sys.executable, mixed_python=None, ours_python=None, ours_in_mixed=False)


@pytest.fixture(scope="module")
def node_peers() -> list[bench_peers.Peer]:
    with cache_lock(NODE_PEERS_DIR):  # one test process installs; the others wait and reuse it
        try:
            node = prepare_node()
        except Unavailable as exc:
            pytest.skip(str(exc))
    env = Environment(
        official_python=sys.executable, mixed_python=None, ours_python=None, ours_in_mixed=False, node=node
    )
    found = [peer for peer in bench_peers.peers(env) if peer.side == "node"]
    assert [peer.name for peer in found] == ["ts-v1", "ts-v2"]
    assert node.versions["@modelcontextprotocol/sdk"] == TS_PACKAGES["@modelcontextprotocol/sdk"]
    return found


def _wires(peers: list[bench_peers.Peer]) -> Iterator[tuple[bench_peers.Peer, str]]:
    for peer in peers:
        for wire in peer.wires:
            yield peer, wire


@pytest.mark.slow
@pytest.mark.interop
def test_node_peers_answer_on_stdio(node_peers: list[bench_peers.Peer]) -> None:
    assert {(p.name, w) for p, w in _wires(node_peers)} == {
        ("ts-v1", PROTOCOL_LEGACY),
        ("ts-v2", PROTOCOL_LEGACY),
        ("ts-v2", PROTOCOL_MODERN),
    }
    for peer, wire in _wires(node_peers):
        proc = procs.spawn(
            peer.stdio(wire),
            env=peer.env(ENV),
            log_name="test-node-peer",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        with procs.running(proc):
            pipe = bench_peers.Pipe(proc, wire, 60)  # the handshake of `wire`
            pipe.run(4, 2)  # two in flight, as the section drives it
            answer = pipe.client.request(CallTemplate(wire).encode(1001), 1001)
            assert answer["result"]["content"] == ECHOED, (peer.name, wire, answer)


async def _echo_over_http(port: int, wire: str) -> list[dict[str, str]]:
    http = HttpClient(LOOPBACK, port, HTTP_PATH, 60)
    await http.connect()
    try:
        session = McpHttpSession(http, wire)
        await session.handshake()
        return (await session.call_echo())["result"]["content"]
    finally:
        await http.close()


@pytest.mark.slow
@pytest.mark.interop
def test_node_peers_answer_over_http_on_an_inherited_socket(node_peers: list[bench_peers.Peer]) -> None:
    for peer in node_peers:
        with procs.listener() as sock:
            port = sock.getsockname()[1]
            proc = procs.spawn(
                peer.http(sock.fileno(), peer.wires[0]),
                env=peer.env(ENV),
                log_name="test-node-peer-http",
                pass_fds=(sock.fileno(),),
            )
        with procs.running(proc):
            procs.wait_for_port(proc, port, 60)
            for wire in peer.wires:
                assert asyncio.run(_echo_over_http(port, wire)) == ECHOED, (peer.name, wire)
