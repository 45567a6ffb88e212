"""Every command's `--help` ends with an example of it (issue 33, item 6)."""

from __future__ import annotations

import argparse

import pytest

from mcp_bindgen.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # pyright: ignore[reportPrivateUsage]
    return dict(sub.choices)  # pyright: ignore[reportUnknownArgumentType]


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_help_has_an_example(name: str) -> None:
    text = _commands()[name].format_help()
    examples = text.split("examples:\n", 1)
    assert len(examples) == 2, f"`mcp-bindgen {name} --help` shows no example"
    assert f"  mcp-bindgen {name}" in examples[1] or f"mcp-bindgen {name} " in examples[1]


def test_the_top_level_help_has_examples() -> None:
    assert "examples:\n  mcp-bindgen new weather" in build_parser().format_help()
