"""Handler contexts (public path); the code lives in `mcp_bindings.runtime.protocol.context`."""

from mcp_bindings.runtime.protocol.context import NotificationContext as NotificationContext
from mcp_bindings.runtime.protocol.context import RequestContext as RequestContext
from mcp_bindings.runtime.protocol.context import SessionContext as SessionContext
