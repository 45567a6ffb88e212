"""`mcp-bindgen openapi SPEC -o DIR`: an MCP server package from an OpenAPI description.

Staged like the protocol pipeline: `load` (a file or https URL; JSON or YAML; Swagger 2.0 converted
by `swagger2`) -> `normalise` (schemas as JSON Schema definitions, references resolved) -> `lower`
(the IR of `ir.py`: operations, parameters, bodies, responses, security schemes) -> `render`
(datamodel-code-generator for the models, Jinja2 templates under `templates/openapi/`) -> black ->
the tools' schemas, written by the runtime from the package itself (`tool_schemas`).
The stages up to the IR live in `mcp_bindings.openapi`, which the runtime's `App.openapi` shares;
its `DescriptionError` is raised here as a `BindgenError`.
The generated server imports the runtime's `mcp_bindings.runtime.app.openapi` for what every
package does the same way (the HTTP call, its bounds, auth, retries, errors).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_bindings.openapi.errors import DescriptionError
from mcp_bindings.openapi.ir import ApiIR
from mcp_bindings.openapi.load import load
from mcp_bindings.openapi.lower import Options, lower

from ..errors import BindgenError

__all__ = ["Generated", "Options", "build_ir", "described", "generate", "write"]


@contextmanager
def described() -> Iterator[None]:
    """The shared stages' `DescriptionError` as the generator's `BindgenError` (the CLI prints it)."""
    try:
        yield
    except DescriptionError as exc:
        raise BindgenError(str(exc)) from None


@dataclass(frozen=True)
class Generated:
    ir: ApiIR
    files: dict[str, str]  # path relative to the output folder -> content


def build_ir(source: str, options: Options) -> ApiIR:
    with described():
        return lower(load(source), options)


def generate(source: str, options: Options, command: str) -> Generated:
    from .render import render_package
    from .tool_schemas import with_tool_schemas

    ir = build_ir(source, options)
    if not ir.operations:
        raise BindgenError(f"{source}: no operation is left to make a tool of")
    return Generated(ir, with_tool_schemas(render_package(ir, options.name, command), options.name))


def write(out: Path, files: dict[str, str], force: bool) -> list[Path]:
    """Write the files under `out`; a non-empty folder that is not a package generated here is refused
    unless `force`."""
    if out.exists() and any(out.iterdir()) and not force and not (out / "pyproject.toml").is_file():
        raise BindgenError(f"{out} is not empty and holds no generated package; pass --force to write there")
    written = []
    for rel, content in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def differences(out: Path, files: dict[str, str]) -> list[str]:
    """The files under `out` that differ from (or lack) what the description generates now."""
    return sorted(
        rel
        for rel, content in files.items()
        if not (out / rel).is_file() or (out / rel).read_text(encoding="utf-8") != content
    )
