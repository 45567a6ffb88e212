"""The spec-change drill's fixture: each test module generates its change once (tests/support/drill.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.drill import run_drill


@pytest.fixture(scope="module")
def seen(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, sdk_python: str) -> dict[str, Any]:
    """What every client saw of the module's drill change (its `CHANGE`)."""
    change: str = request.module.CHANGE
    return run_drill(change, tmp_path_factory.mktemp(f"drill_{change}"), sdk_python)
