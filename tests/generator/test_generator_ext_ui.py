"""The MCP Apps extension (`io.modelcontextprotocol/ui`) as generated bindings.

Its schema is pinned by npm package, version and path (`@modelcontextprotocol/ext-apps` 2.0.4,
`dist/src/generated/schema.json`), verified by sha256 and synced like the others; where it is not
synced the tests that need it are skipped with the reason `mcp-bindgen check` prints.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcp_bindgen import pins, pipeline
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.extension import extension_methods, policy_methods, spliced
from mcp_bindgen.lower import lower
from mcp_bindgen.normalise import normalise
from mcp_bindgen.pins import ExtensionPin, load_extension_pins, read_extension, sync_extensions

UI = "io.modelcontextprotocol/ui"


def ui_pin() -> ExtensionPin:
    return load_extension_pins()[UI]


def needs_schema() -> bytes:
    raw = read_extension(ui_pin())
    if raw is None:
        pytest.skip(f"extension {UI}: not verified: schema not synced ({ui_pin().local_path} is missing)")
    return raw


def test_the_apps_extension_is_pinned_by_npm_package() -> None:
    pin = ui_pin()
    assert (pin.npm_package, pin.npm_version) == ("@modelcontextprotocol/ext-apps", "2.0.4")
    assert pin.url == "https://registry.npmjs.org/@modelcontextprotocol/ext-apps/-/ext-apps-2.0.4.tgz"
    assert pin.source == "npm:@modelcontextprotocol/ext-apps@2.0.4:dist/src/generated/schema.json"
    assert len(pin.sha256) == 64


def _tarball(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_sync_takes_the_file_out_of_the_npm_tarball_and_checks_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = needs_schema()
    served = {"body": _tarball({"package/dist/src/generated/schema.json": raw})}

    class Response(io.BytesIO):
        def __enter__(self) -> Response:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(pins.urllib.request, "urlopen", lambda url, timeout: Response(served["body"]))
    monkeypatch.setattr(pins, "load_extension_pins", lambda path=None: {UI: ui_pin()})
    target = tmp_path / "synced" / "schema.json"
    monkeypatch.setattr(ExtensionPin, "local_path", property(lambda self: target))
    monkeypatch.setattr(ExtensionPin, "sync_path", property(lambda self: target))
    assert sync_extensions(tmp_path / "empty") == [f"synced {target}"]
    assert target.read_bytes() == raw
    served["body"] = _tarball({"package/dist/src/generated/schema.json": raw + b" "})
    with pytest.raises(BindgenError, match=r"sha256 mismatch .*\(extension io\.modelcontextprotocol/ui\)"):
        sync_extensions(tmp_path / "empty")
    served["body"] = _tarball({"package/README.md": b"no schema"})
    with pytest.raises(BindgenError, match=r"has no file dist/src/generated/schema\.json"):
        sync_extensions(tmp_path / "empty")


def test_direction_policy_matches_the_schema() -> None:
    raw = needs_schema()
    pin = ui_pin()
    ir = lower(normalise(raw, UI, pin.sha256))
    core_ir = pipeline.build_ir(pipeline.pinned_source(pin.core_version))
    own = set(ir.definitions) - spliced(ir, core_ir)
    methods = extension_methods(UI, ir, own)
    assert {m.method for m in methods} == set(policy_methods(UI))
    assert all(m.bridge for m in methods)  # none travels on the MCP connection


def test_bridge_tables_are_typed_and_the_mcp_tables_empty() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_ui import methods
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as m

    assert not methods.CLIENT_REQUESTS and not methods.SERVER_NOTIFICATIONS and not methods.EXTENSION.methods
    assert "ui/initialize" in methods.APP_REQUESTS and "ui/resource-teardown" in methods.HOST_REQUESTS
    assert "ui/notifications/tool-result" in methods.HOST_NOTIFICATIONS
    assert "ui/notifications/size-changed" in methods.APP_NOTIFICATIONS
    init = methods.BRIDGE["ui/initialize"]
    assert init.params is m.McpUiInitializeRequestParams and init.result is m.McpUiInitializeResult
    assert methods.BRIDGE["ui/update-model-context"].result is None  # the schema defines no result


def test_meta_models_take_the_specification_examples() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as m

    tool = m.McpUiToolMeta.model_validate({"resourceUri": "ui://weather-server/dashboard", "visibility": ["app"]})
    assert tool.visibility == ["app"]
    with pytest.raises(ValidationError):
        m.McpUiToolMeta.model_validate({"visibility": ["everyone"]})
    meta = {
        "csp": {"connectDomains": ["https://api.openweathermap.org"], "resourceDomains": ["https://cdn.jsdelivr.net"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
    resource = m.McpUiResourceMeta.model_validate(meta)
    assert resource.model_dump(by_alias=True, exclude_none=True) == meta
    with pytest.raises(ValidationError):
        m.McpUiResourceCsp.model_validate({"scriptDomains": ["x"]})  # closed: a typo is refused
    caps = m.McpUiClientCapabilities.model_validate({"mimeTypes": ["text/html;profile=mcp-app"]})
    assert caps.mime_types == ["text/html;profile=mcp-app"]


def test_host_context_takes_a_json_rpc_id_and_container_dimensions() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as m

    context = {
        "toolInfo": {
            "id": 3,
            "tool": {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"x": [1]}}}},
        },
        "containerDimensions": {"height": 400, "maxWidth": 800},
        "theme": "dark",
    }
    parsed = m.McpUiHostContext.model_validate(context)
    assert parsed.model_dump(by_alias=True, exclude_none=True) == context
    with pytest.raises(ValidationError):
        m.McpUiHostContext.model_validate({"toolInfo": {"id": 2**60, "tool": context["toolInfo"]["tool"]}})


def test_the_package_is_generated_from_the_pinned_bytes() -> None:
    raw = needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_ui import about

    assert about.IDENTIFIER == UI and about.SCHEMA_SHA256 == ui_pin().sha256 == pins.sha256_of(raw)
    assert json.loads(raw)["$id"]  # the pinned file itself, not a copy in the project
