"""Where the runtime's policy files live (`protocol/policy/*.json`): decisions the schema cannot
express, one file per concern (crossing, retry, transports), each entry with a reason."""

from __future__ import annotations

from pathlib import Path

POLICY_DIR = Path(__file__).with_name("policy")


def policy_file(name: str) -> Path:
    """The path of policy file `name` (e.g. "retry.json")."""
    return POLICY_DIR / name
