"""The `echo` server of the benchmarks, on the authoring layer: `examples/echo_server.py` as a
decorated function (benchmarks/bench_app.py compares the two).

    python examples/app_echo.py --stub 2025-11-25                 # stdio
    python examples/app_echo.py --transport http --port 3001
"""

from __future__ import annotations

import argparse

from mcp_bindings.runtime import registry
from mcp_bindings.runtime.app import App


def make_app(stub_version: str | None = None) -> App:
    app = App("echo", version="1.0.0", protocol=stub_version)

    @app.tool
    def echo(text: str) -> str:
        """Echo the text back"""
        return text

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--stub", default=list(registry.versions())[-1], choices=list(registry.versions()))
    args = parser.parse_args()
    app = make_app(args.stub)
    if args.transport == "stdio":
        app.run()
    else:
        app.run("http", port=args.port)


if __name__ == "__main__":
    main()
