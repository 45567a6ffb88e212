"""Recorded MCP sessions (docs/testing-with-recordings.md): the `.mcpsession` file format
(`session_file`), redaction (`redaction`), the recording proxies (`stdio_proxy`, `http_proxy`, both
writing through `recorder`), a recorded server replayed to a client (`replay_server`; over HTTP
`http_replay`; a live server behind it for new episodes, `live_fallback`), a recorded client replayed
to a server (`replay_client`), semantic differences between messages and sessions (`compare`,
`session_diff`) and the pytest plugin (`pytest_plugin`).

A plug-in over the core: it imports the rpc and transport layers; nothing else in the runtime
imports it (a contract in pyproject.toml says so)."""
