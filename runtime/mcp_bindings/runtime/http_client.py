"""The Streamable HTTP client's public entry points; the code lives in `mcp_bindings.runtime.client.http`."""

from mcp_bindings.runtime.client.http import CUT as CUT
from mcp_bindings.runtime.client.http import DEFAULT_RETRY_MS as DEFAULT_RETRY_MS
from mcp_bindings.runtime.client.http import GATEWAY_FAILURES as GATEWAY_FAILURES
from mcp_bindings.runtime.client.http import KEEPALIVE_EXPIRY_S as KEEPALIVE_EXPIRY_S
from mcp_bindings.runtime.client.http import MAX_RESUME_ATTEMPTS as MAX_RESUME_ATTEMPTS
from mcp_bindings.runtime.client.http import NOT_SENT as NOT_SENT
from mcp_bindings.runtime.client.http import SESSION_HEADER as SESSION_HEADER
from mcp_bindings.runtime.client.http import C as C
from mcp_bindings.runtime.client.http import LegacySseTransport as LegacySseTransport
from mcp_bindings.runtime.client.http import StreamableHttpTransport as StreamableHttpTransport
from mcp_bindings.runtime.client.http import connect_http as connect_http
from mcp_bindings.runtime.client.http import connect_sse as connect_sse
from mcp_bindings.runtime.client.http import log as log
