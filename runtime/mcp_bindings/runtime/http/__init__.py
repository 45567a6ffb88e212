"""The Streamable HTTP (and legacy HTTP+SSE) server transports: the ASGI app, handshake and stateless
sessions, resumable responses.
"""
