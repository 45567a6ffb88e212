"""The hand-written runtime: binds the generated stubs to transports.

Importing this package is cheap; transports and the session engine load on first use.
"""

from mcp_bindings.runtime.rpc.extras import require

require("the MCP runtime (mcp_bindings.runtime)", "runtime", "anyio", "orjson", "pydantic")
