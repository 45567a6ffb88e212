"""Drafts are never the default (issue 45, item 3): the generator writes whether a version is a
released one into its `about.py` (its name is a protocol version and it speaks that version), and
the runtime's registry, `App`, `mcp-bindgen new` and `mcp-bindgen --version` read it. A draft whose
wire version sorts after the newest release (`DRAFT-2026-v1` > `2026-07-28`) is used only when named."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.installed import InstalledVersion, default_version, read_about
from mcp_bindgen.naming import is_release
from tests.support import REPO_ROOT

DRAFT_ABOUT = """
INFO = VersionInfo(
    version="DRAFT-2026-v1", package="v_draft", stateless=True, batches=False, schema_sha256="0",
    meta=MetaKeys({}), name="draft", schema_dialect="2020-12", released=False,
)
"""


def test_what_is_a_release() -> None:
    assert is_release("2026-07-28", "2026-07-28")
    assert not is_release("draft", "DRAFT-2026-v1") and not is_release("draft", "2026-07-28")
    assert not is_release("next", "2026-12-01") and not is_release("DRAFT-2026-v1", "DRAFT-2026-v1")


def test_about_says_it(tmp_path: Path) -> None:
    pinned = read_about(REPO_ROOT / "generated" / "mcp_bindings" / "v2026_07_28" / "about.py")
    assert pinned is not None and pinned.released
    (tmp_path / "about.py").write_text(DRAFT_ABOUT)
    draft = read_about(tmp_path / "about.py")
    assert draft == InstalledVersion("draft", "DRAFT-2026-v1", "v_draft", released=False)


def _installed() -> dict[str, InstalledVersion]:
    return {
        "2025-11-25": InstalledVersion("2025-11-25", "2025-11-25", "v2025_11_25", released=True),
        "2026-07-28": InstalledVersion("2026-07-28", "2026-07-28", "v2026_07_28", released=True),
        "draft": InstalledVersion("draft", "DRAFT-2026-v1", "v_draft"),  # sorts last, as installed
    }


def test_the_default_is_the_newest_release(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_bindgen import installed, scaffold

    assert default_version(_installed()) == "2026-07-28"
    monkeypatch.setattr(installed, "installed_versions", _installed)
    monkeypatch.setattr(scaffold, "installed_versions", _installed)
    assert scaffold.choose_protocol(None) == "2026-07-28" and scaffold.choose_protocol("draft") == "draft"
    with pytest.raises(SystemExit):
        main(["--version"])
    out = capsys.readouterr().out
    assert "MCP protocol versions: 2025-11-25, 2026-07-28; drafts, used only when named: draft (DRAFT-2026-v1)" in out
