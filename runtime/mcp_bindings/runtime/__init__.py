"""The hand-written runtime: binds the generated stubs to transports.

Importing this package is cheap; transports and the session engine load on first use.
"""
