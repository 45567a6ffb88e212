"""Several workers sharing state: backends (memory, Redis), forwarding between workers, shared
handshake sessions and the stream relay. A plug-in: nothing in the core imports it.
"""
