"""`App.openapi` on stdio, for the tests' peers (the official SDK client): the description at the URL
given as the first argument (tests/openapi/api_app.py's `/openapi.json`), served as tools.

    python tests/openapi/openapi_server.py http://127.0.0.1:PORT/openapi.json
"""

from __future__ import annotations

import sys

from mcp_bindings.runtime.app import App

if __name__ == "__main__":
    App.openapi(sys.argv[1], name="inventory", env_prefix="INVENTORY").run()
