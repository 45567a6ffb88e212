"""The start-up tools of issue 51. The start-up sections say whether ours ran from precompiled
bytecode: spawn and import figures are the ones a user whose install precompiled the package gets
only if the modules the server loads have a fresh .pyc where the interpreter looks
(`PYTHONDONTWRITEBYTECODE` is set on these machines and in CI, so a missing or stale one is compiled
again at every spawn). `python -m benchmarks.bench_spawn` counts the instructions to the first
answer, which the machine's load does not move."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import ours
from benchmarks.bench_spawn import bytecode_note, instructions_to_first_answer
from benchmarks.config import PROTOCOL_LEGACY


def _env(prefix: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}


def _counts(note: str) -> tuple[int, int]:
    words = note.split()
    return int(words[2]), int(words[4])


def test_an_empty_bytecode_tree_is_reported_as_none_fresh(tmp_path: Path) -> None:
    note = bytecode_note(sys.executable, _env(tmp_path / "empty"))
    fresh, total = _counts(note)
    assert total > 100
    assert fresh == 0
    assert str(tmp_path / "empty") in note


@pytest.mark.slow  # compiles every runtime and generated module (~30 s on the shared machine)
def test_a_precompiled_tree_is_reported_fresh_and_a_changed_source_is_not(tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    env = _env(prefix)
    import mcp_bindings

    roots = [str(p) for p in mcp_bindings.__path__]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *roots], env=env, check=True)
    fresh, total = _counts(bytecode_note(sys.executable, env))
    assert fresh == total

    # A .pyc whose recorded source size no longer matches is stale: the import system recompiles it.
    about = next(Path(roots[0]).rglob("*.py"))
    found = subprocess.run(
        [sys.executable, "-c", f"import importlib.util; print(importlib.util.cache_from_source({str(about)!r}))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    pyc = Path(found.stdout.strip())
    data = bytearray(pyc.read_bytes())
    data[12:16] = (int.from_bytes(data[12:16], "little") + 1).to_bytes(4, "little")
    pyc.write_bytes(bytes(data))
    assert _counts(bytecode_note(sys.executable, env)) == (total - 1, total)


@pytest.mark.slow  # the server runs under valgrind (~30-60 s on the shared machine)
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instructions_are_counted_up_to_the_first_answer() -> None:
    script = str(ours.REPO_ROOT / "examples" / "echo_server.py")
    # Its stdin stays open, so a server still running after its answer would end in TimeoutExpired.
    count = instructions_to_first_answer(script, PROTOCOL_LEGACY, dict(os.environ), timeout=300)
    # More than a bare interpreter's start (about 40 million): the whole way to the answer is counted.
    assert count > 100_000_000
