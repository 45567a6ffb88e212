"""What a user of the generated models relies on: names, aliases, strictness, open objects, unions."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

import mcp_bindings.v2024_11_05 as v2024
import mcp_bindings.v2025_11_25 as v2025
import mcp_bindings.v2026_07_28 as v2026
from mcp_bindings.runtime.protocol import registry
from tests.support.pipeline import PINNED_VERSIONS


def test_versions_table_lists_every_pin() -> None:
    assert list(registry.versions()) == PINNED_VERSIONS
    assert registry.load_version("2025-11-25") is v2025
    with pytest.raises(LookupError, match="1999-01-01"):
        registry.load_version("1999-01-01")


def _models_of(package: Any) -> list[type[BaseModel]]:
    every = [getattr(package.models, name) for name in package.models.__all__]  # each created on first use
    return [obj for obj in every if inspect.isclass(obj) and issubclass(obj, BaseModel)]


def test_importing_a_version_builds_no_validator() -> None:
    """Models are created on first use (each in its own submodule) and built on first use
    (defer_build): a fresh interpreter that imports a version's full surface has created none of
    them, and once it has created them all it has built none."""
    probe = (
        "import sys, inspect, mcp_bindings.v2025_11_25 as p, mcp_bindings.v2025_11_25.server, pydantic\n"
        "import mcp_bindings.v2025_11_25.methods, mcp_bindings.v2025_11_25.client\n"
        "created = [n for n in sys.modules if n.startswith(p.models.__name__ + '.')]\n"
        "every = [getattr(p.models, n) for n in p.models.__all__]\n"
        "ms = [o for o in every if inspect.isclass(o) and issubclass(o, pydantic.BaseModel)]\n"
        "print(len(created), len(ms), sum(m.__pydantic_complete__ for m in ms))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    created, total, built = map(int, out.stdout.split())
    assert created == 0 and total > 100 and built == 0


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_every_model_builds(version: str) -> None:
    """Every model's validator and serializer can be built (what first use does), forward
    references included."""
    models = _models_of(registry.load_version(version))
    assert models
    for model in models:
        model.model_rebuild()
    incomplete = [m.__name__ for m in models if not m.__pydantic_complete__]
    assert incomplete == []


def test_snake_case_attributes_with_wire_aliases() -> None:
    result = v2025.CallToolResult.model_validate({"content": [], "isError": True, "structuredContent": {"a": 1}})
    assert result.is_error is True
    assert result.structured_content == {"a": 1}
    by_name = v2025.CallToolResult(content=[], is_error=True)
    assert by_name.model_dump(exclude_unset=True) == {"content": [], "isError": True}


def test_reserved_prefix_keys_get_plain_names() -> None:
    meta = v2026.RequestMetaObject.model_validate(
        {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "com.example/trace": "abc",
        }
    )
    assert meta.protocol_version == "2026-07-28"
    dumped = meta.model_dump(mode="json", exclude_unset=True)
    assert dumped["com.example/trace"] == "abc"  # unknown _meta keys are kept
    assert "io.modelcontextprotocol/protocolVersion" in dumped


def test_strict_like_the_schema() -> None:
    with pytest.raises(ValidationError):
        v2025.CallToolResult.model_validate_json('{"content": [], "isError": "true"}')
    with pytest.raises(ValidationError):
        v2025.ProgressNotificationParams.model_validate_json('{"progressToken": 1, "progress": "5"}')


def test_numbers_keep_ints_as_ints() -> None:
    params = v2025.ProgressNotificationParams.model_validate_json('{"progressToken": 1, "progress": 5, "total": 7.5}')
    dumped = json.loads(params.model_dump_json(exclude_unset=True))
    assert json.dumps(dumped, sort_keys=True) == '{"progress": 5, "progressToken": 1, "total": 7.5}'


def test_byte_and_uri_formats_stay_strings() -> None:
    blob = v2025.BlobResourceContents.model_validate({"uri": "file:///A/../b c", "blob": "not-base64!"})
    assert blob.uri == "file:///A/../b c"
    assert blob.blob == "not-base64!"


def test_unions_with_a_constant_tag_are_discriminated() -> None:
    adapter = TypeAdapter(v2025.ContentBlock)
    with pytest.raises(ValidationError) as info:
        adapter.validate_python({"type": "image", "text": "x"})
    # A discriminated union reports only the tagged member's errors.
    assert all(err["loc"][0] == "image" for err in info.value.errors())
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        adapter.validate_python({"type": "video"})


def test_client_request_union_is_keyed_on_method() -> None:
    request = TypeAdapter(v2024.ClientRequest).validate_json('{"method": "ping", "jsonrpc": "2.0", "id": 1}')
    assert isinstance(request, v2024.PingRequest)


def test_recursive_json_value_after_patch() -> None:
    adapter = TypeAdapter(v2026.JSONValue)
    value = {"a": [1, 1.5, None, True, "s", {"b": []}]}
    assert adapter.dump_python(adapter.validate_python(value), mode="json") == value


def test_schema_name_that_clashes_with_typing_is_exported_under_its_schema_name() -> None:
    assert v2024.Annotated.__name__ == "AnnotatedBase"
    assert "Annotated" in v2024.__all__


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_every_upstream_definition_is_exported(version: str) -> None:
    from mcp_bindgen.pipeline import build_ir, pinned_source

    ir = build_ir(pinned_source(version))
    package = importlib.import_module(f"mcp_bindings.{registry.info(version).package}")
    missing = [name for name in ir.upstream_names if not hasattr(package, name)]
    assert missing == []
