"""mcp-bindgen benchmark harness: ``python -m benchmarks [--quick]`` from the repo root.

Compares three peers measured in the same run: *ours* (mcp-bindgen's
``mcp_bindings``, plugged in through :mod:`benchmarks.ours`), *official* (the
official MCP Python SDK, pinned, in its own cached venv) and *floor* (plain
JSON echo with no MCP library). Importing this package must stay cheap and
dependency-free: it is imported by the harness (any Python 3.11) and, for the
message-path worker, by the mixed venv's interpreter.
"""
