"""`generate --schema ... --version NAME` refuses names that would be ambiguous (issue 34): a name that
is no package name (`draft!` used to become `v_draft` silently, replacing `draft`), another name for
an existing package (`draft_1` after `draft.1`), and a second package for a wire version another
generated package already serves (the runtime would load either). Each is one sentence saying what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_bindgen.cli import main
from tests.support import shared_schema_dir


def _generate(out: Path, name: str, wire: str, *extra: str) -> int:
    schema = shared_schema_dir() / "2025-11-25" / "schema.json"
    if not schema.is_file():
        pytest.skip(f"{schema} is missing (the shared schemas)")
    argv = ["generate", "--schema", str(schema), "--version", name, "--protocol-version", wire, "--out", str(out)]
    return main([*argv, *extra])


def test_ambiguous_version_names_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _generate(tmp_path, "draft!", "2099-01-01") != 0
    assert "--version 'draft!': a version name holds only letters, digits" in capsys.readouterr().err
    assert not (tmp_path / "mcp_bindings").exists()

    assert _generate(tmp_path, "draft.1", "2099-01-01") == 0
    assert (tmp_path / "mcp_bindings" / "v_draft_1" / "about.py").is_file()
    assert _generate(tmp_path, "draft.1", "2099-01-01") == 0  # the same version again: fine

    assert _generate(tmp_path, "draft_1", "2099-01-02") != 0
    assert "--version 'draft_1' would replace the package of version 'draft.1'" in capsys.readouterr().err

    assert _generate(tmp_path, "other", "2099-01-01") != 0
    err = capsys.readouterr().err
    assert "mcp_bindings.v_draft_1 (version 'draft.1') already serves wire version 2099-01-01" in err
    assert not (tmp_path / "mcp_bindings" / "v_other").exists()
    assert _generate(tmp_path, "other", "2099-01-01", "--force") == 0  # said to be on purpose
