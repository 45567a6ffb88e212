"""The JSON-RPC engine: sessions, calls, framing, transports' base, pipes, errors and logging. Imports
nothing else of the runtime.
"""
