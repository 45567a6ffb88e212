"""Protocol data both sides share: the spec tables and version registry, version crossing, sealed
request state, pagination, JSON Schema checks, the tasks wire format, and the policy files.
"""
