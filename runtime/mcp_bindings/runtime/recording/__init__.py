"""Recorded MCP sessions (docs/testing-with-recordings.md): the `.mcpsession` file format
(`session_file`), redaction (`redaction`), the recording proxy (`record`), a recorded server replayed
to a client (`replay_server`), a recorded client replayed to a server (`replay_client`), semantic
differences between messages and sessions (`compare`) and the pytest plugin (`pytest_plugin`).

A plug-in over the core: it imports the rpc, protocol and transport layers; nothing in the runtime
imports it (a contract in pyproject.toml says so)."""
