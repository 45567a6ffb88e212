"""The live-server commands that need the runtime: serving (`serving`, `reload`, `target`), talking
to a server (`connection`, `live`, `show`, `arguments`), a server's own contract (`surface`,
`render`, `lock`, `lint`) and recorded sessions (`sessions`, `mock`)."""
