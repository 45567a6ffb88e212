"""`python -m mcp_bindings.live.tool_schemas SRC PACKAGE OUT`: what each tool of a generated OpenAPI
package lists (its inputSchema and outputSchema), written to OUT as JSON with the pydantic version.

The generator runs it in a child interpreter after writing a package (`mcp_bindgen.openapi.tool_schemas`)
and keeps the file beside the package's server, so that starting the package builds no model. It
imports the package, hence the runtime, which is why it lives here on the runtime's side: the
generator only starts it, and writes the package without the file where it cannot run."""

from __future__ import annotations

import importlib
import json
import sys

import pydantic

from mcp_bindings.runtime.protocol import versions


def main(argv: list[str]) -> None:
    src, package, out = argv
    sys.path.insert(0, src)
    app = importlib.import_module(package).app
    tools: dict[str, dict[str, object]] = {}
    for name, entry in app.registries.tools.items():
        wire = versions.dump(entry.definition)
        tools[name] = {key: wire[key] for key in ("inputSchema", "outputSchema") if key in wire}
    with open(out, "w", encoding="utf-8") as file:
        json.dump({"pydantic": pydantic.VERSION, "tools": tools}, file, indent=1)
        file.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
