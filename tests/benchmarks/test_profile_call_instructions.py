"""`profile_call --instructions`: the stdio server's instructions per call, counted under valgrind
between the warm-up and the end of the calls (issue 51: a figure the machine's load does not move)."""

from __future__ import annotations

import os
import shutil

import pytest

from benchmarks.config import PROTOCOL_LEGACY, PROTOCOL_MODERN
from benchmarks.ours import ours_python
from benchmarks.profile_call import _command, _env, instructions_per_call

pytestmark = [
    pytest.mark.slow,  # two servers started under valgrind (~30 s each on the shared machine)
    pytest.mark.skipif(shutil.which("callgrind_control") is None, reason="valgrind is not installed"),
]


def test_instructions_per_call_count_the_calls_only() -> None:
    env = _env(os.environ.get("PYTHONPATH"), None)
    argv = _command(ours_python(), "stdio", PROTOCOL_LEGACY, None, None)
    few = instructions_per_call(argv, env, PROTOCOL_LEGACY, calls=20, warmup=20)
    # Start-up alone is about 1,000 M instructions: counted, it would read as 50 M a call here.
    assert 10_000 < few < 2_000_000
    stateless = _command(ours_python(), "stdio", PROTOCOL_MODERN, None, None)
    assert 10_000 < instructions_per_call(stateless, env, PROTOCOL_MODERN, calls=20, warmup=20) < 2_000_000
