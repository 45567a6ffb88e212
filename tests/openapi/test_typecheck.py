"""The generated packages pass pyright (standard, as the issue asks of the generated code): the three
fixture descriptions' (petstore's also with a route map), the FastAPI application's, and the two of
`test_corpus_models.py` (models cut into several modules; typed extra keys and reserved names),
checked together as a user's editor would."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.openapi.conftest import CASES, FIXTURES, generate
from tests.support import REPO_ROOT
from tests.support.openapi_specs import many_models, reserved_names, write_spec

pytestmark = pytest.mark.slow


def test_generated_packages_pass_pyright(tmp_path: Path) -> None:
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("the `pyright` package is not installed (pip install -e '.[test]')")
    from tests.openapi.api_app import api

    spec = tmp_path / "inventory.json"
    spec.write_text(json.dumps(api.openapi()))
    sources = {case: FIXTURES / name for case, name in CASES.items()} | {"inventory": spec}
    sources["routed"] = FIXTURES / "petstore.yaml"  # with a resource template (fixtures/routes.yaml)
    sources["many"] = write_spec(tmp_path, "many", many_models())
    sources["names"] = write_spec(tmp_path, "names", reserved_names())
    options = {
        "inventory": ["--base-url", "http://127.0.0.1:8000"],
        "routed": ["--routes", str(FIXTURES / "routes.yaml")],
    }
    roots: list[str] = []
    for case, source in sources.items():
        out = tmp_path / case
        extra = options.get(case, [])
        generate(source, out, *extra, name=f"typed_{case}")
        roots.append(str(out / "src"))
    config = {
        "include": roots,
        "extraPaths": [*roots, str(REPO_ROOT / "generated"), str(REPO_ROOT / "runtime")],
        "pythonVersion": "3.11",
        "typeCheckingMode": "standard",
    }
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    run = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
        check=False,
    )
    report = json.loads(run.stdout)
    errors = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert errors == []
    assert report["summary"]["filesAnalyzed"] >= 7 * 8
