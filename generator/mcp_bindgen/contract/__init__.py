"""Code generation for a server's own contract: typed clients, surface locks, host-compatibility lint."""
