"""Middleware around the requests a server's handlers serve, on the dispatch seam (a plug-in: the
core never imports it). `use_middleware(server, ...)` for a stub-based server; the authoring
layer's `@app.middleware` / `App(middleware=[...])`. Ready-made: `Timing`, `RateLimit`, `Cache`;
OpenTelemetry: `middleware.tracing.Tracing` (the `otel` extra; imported on use)."""

from mcp_bindings.runtime.middleware.chain import Call, Middleware, MiddlewareFeature, Next, use_middleware
from mcp_bindings.runtime.middleware.ready import Cache, MethodTimes, RateLimit, Timing

__all__ = [
    "Cache",
    "Call",
    "MethodTimes",
    "Middleware",
    "MiddlewareFeature",
    "Next",
    "RateLimit",
    "Timing",
    "use_middleware",
]
