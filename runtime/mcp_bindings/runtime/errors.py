"""Protocol errors and their codes (public path); the code lives in `mcp_bindings.runtime.rpc.errors`."""

from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR as INTERNAL_ERROR
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS as INVALID_PARAMS
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST as INVALID_REQUEST
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from mcp_bindings.runtime.rpc.errors import PARSE_ERROR as PARSE_ERROR
from mcp_bindings.runtime.rpc.errors import CapabilityError as CapabilityError
from mcp_bindings.runtime.rpc.errors import ConnectionClosed as ConnectionClosed
from mcp_bindings.runtime.rpc.errors import DeliveryFailed as DeliveryFailed
from mcp_bindings.runtime.rpc.errors import McpError as McpError
from mcp_bindings.runtime.rpc.errors import NotExpressible as NotExpressible
from mcp_bindings.runtime.rpc.errors import OutcomeUnknown as OutcomeUnknown
from mcp_bindings.runtime.rpc.errors import StubDefinitionError as StubDefinitionError
from mcp_bindings.runtime.rpc.errors import ToolError as ToolError
from mcp_bindings.runtime.rpc.errors import sole_exception as sole_exception
