"""The live-server tools of `mcp-bindgen` (docs/cli.md): serve a server file (`run`, `dev`), talk to
any server (`list`, `call`, `read`, `get-prompt`, `inspect`), add one to an MCP host (`install`,
`uninstall`), a server's own contract (`client`, `lock`, `lint`) and recorded sessions (`record`,
`replay`, `replay-client`, `diff-sessions`, `mock`).

They talk to live servers through the runtime, so they live on the runtime's side; they import the
generator only where they write code (`client`) or report an error (`BindgenError`), and neither the
runtime nor the generator imports them. `cli` is what the generator's command line loads (the entry
point group `mcp_bindgen.commands`)."""
