"""A generated catalog for the discovery tests: an `App` with `count` tools named and described
after the operations of a made-up REST API (`<verb>_<resource>_<n>`: list, get, create, update,
delete of 25 resources), plus a few tools with distinctive words the searches aim at."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.curves.catalog import RESOURCES, VERBS  # one made-up API for the tests and the catalog curve
from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.server.plugins import Extension


def plain_tool(name: str) -> Any:
    """A tool function of no argument answering `called <name>`."""

    def fn() -> str:
        return f"called {name}"

    fn.__name__ = name
    return fn


def catalog_app(count: int = 1000, extensions: Sequence[Extension] = (), **options: Any) -> App:
    """An app of `count` generated tools and the distinctive ones (`rotate_signing_keys`, `add`)."""
    app = App("catalog", version="1.0", extensions=list(extensions), **options)
    for i in range(count):
        verb, resource = VERBS[i % len(VERBS)], RESOURCES[(i // len(VERBS)) % len(RESOURCES)]
        name = f"{verb}_{resource}_{i}"
        schema = {
            "type": "object",
            "properties": {f"{resource}_id": {"type": "string"}, "page": {"type": "integer"}},
        }
        app.tool(name=name, input_schema=schema, description=f"{verb.capitalize()} a {resource} (variant {i}).")(
            plain_tool(name)
        )

    @app.tool
    def rotate_signing_keys(keyring: str, grace_period_days: int = 7) -> str:
        """Rotate the cryptographic signing keys of a keyring, keeping the old ones valid for a grace period."""
        return f"rotated {keyring} ({grace_period_days} days)"

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return app
