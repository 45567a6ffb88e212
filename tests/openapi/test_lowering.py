"""The lowering's rules, each on a description made for it: tool names (sanitised, unique, within
64 characters), exclusions by tag, path and method, the base URL, and the errors a user can fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.openapi import Options, build_ir


def _spec(tmp_path: Path, paths: dict[str, Any], **top: Any) -> str:
    doc = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **top}
    doc.setdefault("servers", [{"url": "https://api.example.com/v2/"}])
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _op(operation_id: str | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"responses": {"204": {"description": "done"}}}
    if operation_id is not None:
        op["operationId"] = operation_id
    if tags:
        op["tags"] = tags
    return op


def test_tool_names_are_sanitised_unique_and_short(tmp_path: Path) -> None:
    long = "x" * 80
    paths = {
        "/a": {"get": _op("list pets!"), "post": _op("list_pets")},
        "/b": {"get": _op(long), "post": _op(long)},
        "/users/{id}/posts": {"get": _op()},
    }
    ir = build_ir(_spec(tmp_path, paths), Options(name="t"))
    names = [op.tool for op in ir.operations]
    assert names == ["list_pets", "list_pets_2", "x" * 64, "x" * 60 + "_2", "get_users_id_posts"]
    assert [op.function for op in ir.operations][:2] == ["list_pets", "list_pets_2"]
    assert ir.base_url == "https://api.example.com/v2"


def test_exclusions_by_tag_path_and_method(tmp_path: Path) -> None:
    paths = {
        "/public": {"get": _op("a"), "delete": _op("b")},
        "/admin/users": {"get": _op("c")},
        "/tagged": {"get": _op("d", ["internal"])},
    }
    options = Options(
        name="t",
        exclude_tags=frozenset({"internal"}),
        exclude_paths=("/admin/*",),
        exclude_methods=frozenset({"DELETE"}),
    )
    assert [op.tool for op in build_ir(_spec(tmp_path, paths), options).operations] == ["a"]


def test_a_description_without_a_server_asks_for_base_url(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {"/a": {"get": _op("a")}}, servers=[{"url": "/api"}])
    with pytest.raises(BindgenError, match=r"its server URL is '/api'; pass --base-url https://"):
        build_ir(spec, Options(name="t"))
    assert build_ir(spec, Options(name="t", base_url="http://127.0.0.1:8080/api/")).base_url == (
        "http://127.0.0.1:8080/api"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"swagger": "1.2"}', "is not an OpenAPI 3.0 / 3.1 or Swagger 2.0 description (neither `openapi` nor"),
        ('{"openapi": "4.0"}', "is not an OpenAPI 3.0 / 3.1 or Swagger 2.0 description (openapi: 4.0)"),
        ("openapi: [", "is neither JSON nor valid YAML"),
        ("[1, 2]", "is not an OpenAPI description: its top level is not an object"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(content)
    assert main(["openapi", str(spec), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mcp-bindgen: error: ") and message in err and "Traceback" not in err
    assert main(["openapi", "http://example.com/x.json", "-o", str(tmp_path / "out")]) == 1
    assert "only https:// URLs, http:// URLs of this machine (127.0.0.1, localhost)" in capsys.readouterr().err


def test_a_schema_named_like_a_builtin_keeps_the_tools_importable(
    tmp_path: Path, load_package: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field named `list` makes datamodel-code-generator import `list as list_aliased`; the server
    module imports it under that name too (it imported `list_aliased` from builtins: ImportError)."""
    tags = {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}
    op = {"operationId": "lists", "parameters": [tags], "responses": {"200": {"description": "ok"}}}
    spec = _spec(
        tmp_path,
        {"/lists": {"get": op}},
        components={
            "schemas": {"Page": {"type": "object", "properties": {"list": {"type": "string"}, "items": tags["schema"]}}}
        },
    )
    out = tmp_path / "out"
    assert main(["openapi", spec, "-o", str(out), "--name", "builtin_named"]) == 0
    package = load_package(out, "builtin_named")
    assert "lists" in package.app.registries.tools


def test_a_default_written_as_a_string_becomes_the_schemas_type(
    tmp_path: Path, load_package: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`default: "true"` on a boolean (github.com/ghes-3.7 has one) was generated as written, a
    `Literal['true']` default pyright refuses on a `bool` field; it is read as the type it spells, and
    a default the schema refuses outright is left out."""
    props = {
        "draft": {"type": "boolean", "default": "true"},
        "page": {"type": "integer", "default": "5"},
        "ratio": {"type": "number", "default": "0.5"},
        "limit": {"type": "integer", "default": "many"},
        "name": {"type": "string", "default": "x"},
    }
    op = {"operationId": "make", "responses": {"200": {"description": "ok"}}}
    op["requestBody"] = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Opts"}}}}
    schemas = {"Opts": {"type": "object", "properties": props}}
    spec = _spec(tmp_path, {"/make": {"post": op}}, components={"schemas": schemas})
    out = tmp_path / "out"
    assert main(["openapi", spec, "-o", str(out), "--name", "string_defaults"]) == 0
    package = load_package(out, "string_defaults")
    opts = package.models.Opts()
    assert (opts.draft, opts.page, opts.ratio, opts.limit, opts.name) == (True, 5, 0.5, None, "x")
