"""An MCP Apps server on the authoring layer: a counter tool that opens a UI (`ui://counter/view`),
and an app-only tool (`increment`, visibility ["app"]) its view calls through the host.

    python examples/app_ui_server.py                               # stdio
    python examples/app_ui_server.py --transport http --port 3001
    python examples/app_ui_server.py --transport http --app-script app.js

The view's HTML is made at each read; `--app-script FILE` inlines that script as a module (the
browser test inlines the official `App` class of @modelcontextprotocol/ext-apps there), else the
view is a plain page.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.ui import Csp

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Counter</title></head>
<body><h1>Counter</h1><p>value: <output id="value">?</output></p>
<button id="increment">+1</button>
<script type="module">{script}</script>
</body></html>
"""


def make_app(app_script: Path | None = None) -> App:
    app = App("counter", version="1.0.0")

    @app.ui_resource("ui://counter/view", csp=Csp(connect_domains=[]), prefers_border=True)
    def view() -> str:
        """The counter's view."""
        script = app_script.read_text(encoding="utf-8") if app_script is not None else ""
        return PAGE.format(script=script.replace("</script", "<\\/script"))

    @app.ui_tool("ui://counter/view")
    def counter(start: int = 0) -> dict[str, int]:
        """Show a counter, starting at `start`."""
        return {"value": start}

    @app.ui_tool("ui://counter/view", visibility=["app"])
    def increment(value: int) -> dict[str, int]:
        """Add one (called by the counter's view only)."""
        return {"value": value + 1}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--app-script", type=Path, default=None)
    args = parser.parse_args()
    make_app(args.app_script).run(args.transport, port=args.port)


if __name__ == "__main__":
    main()
