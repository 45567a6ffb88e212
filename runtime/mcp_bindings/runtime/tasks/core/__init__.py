"""What both sides know of tasks, importable by `client/` and `server/` alike: where tasks are kept
(`store`), the core tasks of 2025-11-25 (`handshake`), running and answering for them as either side
(`runner`) and the wire shapes of the 2026-07-28 tasks
extension (`wire`). Nothing here imports a side, a transport or `tasks.server`; nothing is loaded
here, so a handshake-era process never loads the extension's models (`wire`)."""
