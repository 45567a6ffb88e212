"""The version registry (public path); the code lives in `mcp_bindings.runtime.protocol.registry`."""

from mcp_bindings.runtime.protocol.registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from mcp_bindings.runtime.protocol.registry import NAMESPACE as NAMESPACE
from mcp_bindings.runtime.protocol.registry import handshake_versions as handshake_versions
from mcp_bindings.runtime.protocol.registry import info as info
from mcp_bindings.runtime.protocol.registry import load_version as load_version
from mcp_bindings.runtime.protocol.registry import names as names
from mcp_bindings.runtime.protocol.registry import newest_stateless as newest_stateless
from mcp_bindings.runtime.protocol.registry import on_path as on_path
from mcp_bindings.runtime.protocol.registry import protocol as protocol
from mcp_bindings.runtime.protocol.registry import protocol_version_keys as protocol_version_keys
from mcp_bindings.runtime.protocol.registry import refresh as refresh
from mcp_bindings.runtime.protocol.registry import stateless_versions as stateless_versions
from mcp_bindings.runtime.protocol.registry import versions as versions
from mcp_bindings.runtime.protocol.registry import wire_version as wire_version
