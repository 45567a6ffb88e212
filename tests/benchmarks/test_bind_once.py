"""Every socket a benchmark server serves on is bound once and handed over, never picked and bound
again (issue 45): `benchmarks.procs.listener()` binds it in the harness and the server inherits it
(`pass_fds`, its `--fd`). A `free_port()` that binds port 0, closes the socket and gives its number
to a server that binds it later loses the port to any process binding meanwhile, and the smoke tests
of this folder start those servers inside the suite, next to tests binding ports in parallel."""

from __future__ import annotations

import ast
import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from benchmarks import procs
from tests.support import REPO_ROOT
from tests.support.http import rpc, stateless, stateless_headers

BENCHMARKS = REPO_ROOT / "benchmarks"
ECHO_SERVER = REPO_ROOT / "examples" / "echo_server.py"
# What takes a port: a socket's `bind`, `socket.create_server`. One function in benchmarks/ does it.
BINDING_CALLS = {"bind", "create_server"}
THE_BINDER = ("benchmarks/procs.py", "listener")


class _Binds(ast.NodeVisitor):
    """(line, enclosing function, what) of every binding call and every `free_port` name in a module."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.found: list[tuple[int, str, str]] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name == "free_port":
            self.found.append((node.lineno, node.name, "def free_port"))
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in BINDING_CALLS:
            self.found.append((node.lineno, self._where(), f"{name}(...)"))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "free_port":
            self.found.append((node.lineno, self._where(), "free_port"))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "free_port":
            self.found.append((node.lineno, self._where(), "free_port"))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if any(alias.name == "free_port" for alias in node.names):
            self.found.append((node.lineno, self._where(), "import free_port"))

    def _where(self) -> str:
        return self.functions[-1] if self.functions else "<module>"


def _binds(path: Path) -> list[tuple[int, str, str]]:
    visitor = _Binds()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return visitor.found


def test_only_the_listener_binds_a_port_in_benchmarks() -> None:
    offences: list[str] = []
    binders: list[tuple[str, str]] = []
    for path in sorted(BENCHMARKS.rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).as_posix()
        for line, function, what in _binds(path):
            binders.append((relative, function))
            if (relative, function) != THE_BINDER or "free_port" in what:
                offences.append(f"{relative}:{line} {what} in {function}")
    assert not offences, (
        "a port picked, closed and bound again by a server is a race with every process binding meanwhile;"
        " bind with benchmarks.procs.listener() and pass the socket on (pass_fds, the server's --fd): "
        + "; ".join(offences)
    )
    assert THE_BINDER in binders, "benchmarks.procs.listener no longer binds: the scan above looks for the wrong call"


def test_the_scan_finds_the_pattern_it_forbids(tmp_path: Path) -> None:
    """The scan on the helper it replaced (benchmarks/procs.py and bench_workers.py had one each)."""
    old = tmp_path / "old.py"
    old.write_text(
        "import socket\n"
        "def free_port() -> int:\n"
        "    with socket.socket() as s:\n"
        "        s.bind(('127.0.0.1', 0))\n"
        "        return s.getsockname()[1]\n"
        "port = free_port()\n"
        "from benchmarks.procs import free_port\n"
        "import benchmarks.procs as procs\n"
        "other = procs.free_port()\n"
    )
    found = [what for _, _, what in _binds(old)]
    assert found == ["def free_port", "bind(...)", "free_port", "import free_port", "free_port"]


def test_listener_holds_its_port_until_a_server_listens_on_it() -> None:
    """Bound, so no other socket takes the port; not listening, so a connection is refused until the
    server that inherits it listens (`wait_for_port` tells when); TCP_NODELAY on, for the connections
    accepted on it to inherit."""
    with procs.listener() as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        with socket.socket() as other:
            try:
                other.bind((host, port))
            except OSError as exc:
                assert exc.errno == errno.EADDRINUSE
            else:
                raise AssertionError(f"a second socket could bind {port}")
        probe = socket.socket()
        try:
            assert probe.connect_ex((host, port)) == errno.ECONNREFUSED
        finally:
            probe.close()


def test_echo_server_serves_on_the_socket_it_inherits() -> None:
    """examples/echo_server.py --fd (serve_http's `sock`): the server answers on the port bound here,
    which it never bound itself."""
    with procs.listener() as sock:
        port = sock.getsockname()[1]
        argv = [sys.executable, str(ECHO_SERVER), "--transport", "http", "--fd", str(sock.fileno())]
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True, pass_fds=(sock.fileno(),))
    try:
        procs.wait_for_port(proc, port, 30)
        call = rpc(1, "tools/call", stateless({"name": "echo", "arguments": {"text": "bound once"}}))
        reply = httpx.post(
            f"http://127.0.0.1:{port}/mcp", json=call, headers=stateless_headers("tools/call", "echo"), timeout=30
        )
        assert reply.status_code == 200, reply.text
        assert reply.json()["result"]["content"] == [{"type": "text", "text": "bound once"}]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"at http://127.0.0.1:{port}/mcp" in err
