"""The Streamable HTTP (and legacy HTTP+SSE) server transports: the ASGI app, handshake and stateless
sessions, resumable responses.
"""

from mcp_bindings.runtime.rpc.extras import require

require("the HTTP server transports (mcp_bindings.runtime.http)", "http", "starlette", "uvicorn")
