"""The Streamable HTTP server's public entry points; the code lives in `mcp_bindings.runtime.http`."""

from mcp_bindings.runtime.http.app import HttpExchange as HttpExchange
from mcp_bindings.runtime.http.app import HttpOptions as HttpOptions
from mcp_bindings.runtime.http.app import StreamableHTTPApp as StreamableHTTPApp
from mcp_bindings.runtime.http.app import create_app as create_app
from mcp_bindings.runtime.http.serving import serve_http as serve_http
from mcp_bindings.runtime.http.serving import uvicorn_config as uvicorn_config
from mcp_bindings.runtime.http.streamable import principal_of as principal_of
from mcp_bindings.runtime.protocol.headers import decode_header_value as decode_header_value
