"""`mcp-bindgen run`, `dev`, `list`, `call`, `read`, `get-prompt`, `inspect`, `install` as subprocesses."""
