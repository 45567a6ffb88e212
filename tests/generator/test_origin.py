"""What a project written by mcp-bindgen depends on (issue 45, item 2): where this mcp-bindgen was
installed from (pip's direct_url.json, PEP 610), not a release on the package index that does not
exist yet. Before, `mcp-bindgen new` run from a wheel or a checkout wrote `mcp-bindgen[runtime]==0.1.0`
and a generated version package `mcp-bindgen>=0.1.0`, which no index could give."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from mcp_bindgen import __version__, output, scaffold
from mcp_bindgen.cli import main
from mcp_bindgen.origin import Origin, install_origin, read_origin
from tests.support import REPO_ROOT


def _record(url: str, **info: object) -> str:
    return json.dumps({"url": url, **info})


def test_each_kind_of_source_pip_records(tmp_path: Path) -> None:
    wheel = tmp_path / "mcp_bindgen-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    assert read_origin(_record(wheel.as_uri(), archive_info={})) == Origin(wheel.as_uri(), "wheel")
    assert read_origin(_record(tmp_path.as_uri(), dir_info={"editable": True})) == Origin(tmp_path.as_uri(), "checkout")
    assert read_origin(_record(tmp_path.as_uri(), dir_info={})) == Origin(tmp_path.as_uri(), "folder")
    git = _record("https://example.org/mcp-bindgen.git", vcs_info={"vcs": "git", "commit_id": "abc123"})
    assert read_origin(git) == Origin("git+https://example.org/mcp-bindgen.git@abc123", "vcs")
    # From an index (no record), a record that is not one, a local source that is gone: nothing.
    assert read_origin(None) is None and read_origin("{not json") is None and read_origin("[]") is None
    assert read_origin(_record((tmp_path / "gone.whl").as_uri(), archive_info={})) is None
    assert Origin(wheel.as_uri(), "wheel").describe() == f"the wheel {wheel}"


def test_this_checkout_is_where_this_mcp_bindgen_came_from() -> None:
    """The suite runs on the editable install of this checkout (scripts/setup: pip install -e)."""
    assert install_origin("mcp-bindgen") == Origin(REPO_ROOT.as_uri(), "checkout")
    assert install_origin("no-such-distribution-here") is None


def test_new_depends_on_where_mcp_bindgen_was_installed_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", str(tmp_path / "weather")]) == 0
    printed = capsys.readouterr().out
    pyproject = tomllib.loads((tmp_path / "weather" / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"mcp-bindgen[runtime] @ {REPO_ROOT.as_uri()}"]
    assert pyproject["tool"]["hatch"]["metadata"]["allow-direct-references"] is True
    assert (
        f"(it depends on mcp-bindgen from the checkout {REPO_ROOT}, which this mcp-bindgen was installed from; "
        f"once mcp-bindgen is on the package index, scaffold with --bindgen =={__version__}" in printed
    )
    readme = (tmp_path / "weather" / "README.md").read_text()
    assert f"The project depends on mcp-bindgen from the checkout {REPO_ROOT}, which this" in readme
    # --bindgen still decides: the package index's requirement, for a project others install.
    assert main(["new", str(tmp_path / "portable"), "--bindgen", f"=={__version__}"]) == 0
    printed = capsys.readouterr().out
    pyproject = tomllib.loads((tmp_path / "portable" / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"mcp-bindgen[runtime]=={__version__}"]
    assert "metadata" not in pyproject["tool"]["hatch"]
    assert f"(it depends on mcp-bindgen[runtime]=={__version__} from the package index;" in printed


def test_from_a_wheel_the_scaffold_and_a_version_package_require_that_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = tmp_path / "dist" / f"mcp_bindgen-{__version__}-py3-none-any.whl"
    from_wheel = Origin(wheel.as_uri(), "wheel")
    monkeypatch.setattr(scaffold, "install_origin", lambda name: from_wheel)
    monkeypatch.setattr(output, "install_origin", lambda name: from_wheel)
    opts = scaffold.ScaffoldOptions.from_cli(path=tmp_path / "weather", transport="both")
    assert opts.requirement == f"mcp-bindgen[http,runtime] @ {wheel.as_uri()}" and opts.direct_reference
    assert output.bindgen_dependency()["bindgen_requirement"] == f"mcp-bindgen @ {wheel.as_uri()}"
    # From an editable checkout a version package asks for this version or newer: a direct reference
    # to the folder would make pip replace the editable install it is installed beside.
    monkeypatch.setattr(output, "install_origin", lambda name: Origin(REPO_ROOT.as_uri(), "checkout"))
    assert output.bindgen_dependency() == {
        "bindgen_requirement": f"mcp-bindgen>={__version__}",
        "hatch_metadata": [],
    }
