"""A peer written with the standard library's HTTP server, on 127.0.0.1 in a thread: for tests whose
peer must misbehave in one precise way (a web page, a fake SSE remote, a slow initialize)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def serve_handler(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on a port bound once; yields `http://127.0.0.1:PORT`. An open response (an
    event stream) does not hold the test at the end."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
