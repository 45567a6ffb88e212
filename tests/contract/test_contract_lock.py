"""`mcp-bindgen lock` / `lock --check` against a real server changed in each breaking and each
additive way: the FastMCP-style server on the official SDK's `MCPServer`
(`tests/peers/sdk_contract_server.py`, whose `CONTRACT_VARIANT` makes one change each), locked at
2025-11-25. An unchanged server passes, the output is deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_bindgen.cli import main
from tests.peers.harness import PEERS

pytestmark = [pytest.mark.slow, pytest.mark.interop]
SHOP = PEERS / "sdk_contract_server.py"


@pytest.fixture(scope="module")
def servers() -> dict[str, list[str]]:
    from tests.support.sdk import sdk_python_path

    return {"shop": [sdk_python_path(), str(SHOP)]}


VARIANTS = {  # CONTRACT_VARIANT of the shop server -> (exit code, a change it must report)
    "": (0, None),
    "new_required": (1, ("breaking", "required property added")),
    "narrow_type": (1, ("breaking", "type ['integer'] -> ['boolean']")),
    "narrow_enum": (1, ("breaking", "enum values removed")),
    "removed_tool": (1, ("breaking", "tool removed")),
    "new_optional": (0, ("additive", "property added")),
    "widen_enum": (0, ("additive", "enum values added")),
    "added_tool": (0, ("additive", "tool added")),
}


@pytest.fixture(scope="module")
def shop_lock(servers: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lock") / "mcp-lock.json"
    assert main(["lock", "-o", str(path), "--protocol", "2025-11-25", "--from", *servers["shop"]]) == 0
    return path


def test_lock_is_deterministic(shop_lock: Path, servers: dict[str, list[str]], tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    assert main(["lock", "-o", str(again), "--protocol", "2025-11-25", "--from", *servers["shop"]]) == 0
    assert again.read_bytes() == shop_lock.read_bytes()
    assert list(json.loads(shop_lock.read_text())["versions"]) == ["2025-11-25"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_lock_check_classifies(
    variant: str,
    shop_lock: Path,
    servers: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CONTRACT_VARIANT", variant)
    code, expected = VARIANTS[variant]
    capsys.readouterr()
    argv = ["lock", "--check", "-o", str(shop_lock), "--format", "json", "--env", "CONTRACT_VARIANT"]
    assert main([*argv, "--from", *servers["shop"]]) == code  # the variant reaches the server by --env
    report = json.loads(capsys.readouterr().out)
    if expected is None:
        assert report["changes"] == []
    else:
        kinds = {(c["kind"], c["what"]) for c in report["changes"]}
        assert any(kind == expected[0] and what.startswith(expected[1]) for kind, what in kinds), kinds
        if code == 0:
            assert report["breaking"] == 0
