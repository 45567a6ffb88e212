"""`mcp-bindgen new PATH`: a complete, runnable MCP server project built on the generated bindings.

Everything the project's files vary by is decided here, in Python: which protocol features exist in
the chosen version (read from that version's generated `methods` tables and `models`, so a new or
unpinned version needs no table in this module), the handler signatures (the same rule the stub
generator uses, checked against the stub by a test), the requirement on mcp-bindgen, the names.
The Jinja2 templates under `templates/scaffold/` only loop over and print what this module hands
them: they hold no conditions.
"""

from __future__ import annotations

import keyword
import re
import sys
import tomllib
import typing
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

from . import __version__
from .errors import BindgenError

FEATURES: tuple[str, ...] = ("tools", "resources", "prompts", "completion", "logging")
TRANSPORTS: tuple[str, ...] = ("stdio", "http", "both")
DEFAULT_FEATURES = ",".join(FEATURES)

# The requests each feature's example overrides (logging is a notification the runtime sends).
FEATURE_METHODS: dict[str, tuple[str, ...]] = {
    "tools": ("tools/list", "tools/call"),
    "resources": ("resources/list", "resources/templates/list", "resources/read"),
    "prompts": ("prompts/list", "prompts/get"),
    "completion": ("completion/complete",),
}

# PEP 508 names; the import package is the normalised name with `_` for `-`.
_DIST_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
_VERSION = re.compile(r"^v?\d+(\.\d+)*([-._+]?[0-9A-Za-z.+]+)*$")
_SPECIFIER = ("===", "==", ">=", "<=", "~=", "!=", ">", "<")
# Import names a generated package must not take: it would shadow what the server imports.
_TAKEN = frozenset(
    {
        "mcp_bindings",
        "mcp_bindgen",
        "mcp",
        "mcp_types",
        "pydantic",
        "pydantic_core",
        "anyio",
        "orjson",
        "starlette",
        "uvicorn",
        "httpx",
        "typing_extensions",
        "pytest",
        "tests",
        "test",
        "src",
        "conftest",
    }
)

_PACKAGE_DIR = Path(__file__).resolve().parent


# -- options -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaffoldOptions:
    path: Path
    dist_name: str  # normalised distribution name, also the console script
    package: str  # import name
    protocol: str
    transport: str
    features: tuple[str, ...]  # in FEATURES order
    requirement: str  # the mcp-bindgen requirement written into pyproject.toml
    direct_reference: bool  # the requirement is `name @ url` (hatchling must be told to allow it)
    force: bool = False

    @classmethod
    def from_cli(
        cls,
        *,
        path: Path,
        name: str | None = None,
        protocol: str | None = None,
        transport: str = "stdio",
        features: str | None = DEFAULT_FEATURES,
        bindgen: str | None = None,
        force: bool = False,
    ) -> ScaffoldOptions:
        path = path.expanduser().resolve()
        dist_name, package = validate_name(name or path.name, from_path=name is None)
        version = choose_protocol(protocol)
        if transport not in TRANSPORTS:
            raise BindgenError(f"--transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
        chosen = parse_features(features if features is not None else DEFAULT_FEATURES)
        requirement, direct = bindgen_requirement(bindgen, runtime_extras(transport))
        return cls(path, dist_name, package, version, transport, chosen, requirement, direct, force)

    @property
    def transports(self) -> tuple[str, ...]:
        return ("stdio", "http") if self.transport == "both" else (self.transport,)

    def next_steps(self) -> str:
        return "\n".join(
            [
                "next:",
                f"  cd {self.path}",
                "  python -m venv .venv && .venv/bin/pip install -e '.[dev]'",
                "  .venv/bin/pytest",
                f"  .venv/bin/{self.dist_name}" + ("" if "stdio" in self.transports else " --port 3001"),
            ]
        )


def validate_name(name: str, *, from_path: bool = False) -> tuple[str, str]:
    """(normalised distribution name, import package name) or a clear error."""
    source = f"the directory name {name!r} (pass --name NAME)" if from_path else f"--name {name!r}"
    if not _DIST_NAME.match(name):
        raise BindgenError(
            f"{source} is not a valid distribution name: use letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit (e.g. 'weather-server')"
        )
    dist = re.sub(r"[-_.]+", "-", name).lower()
    package = dist.replace("-", "_")
    if not package.isidentifier() or package[0].isdigit():
        raise BindgenError(
            f"{source} gives the package name {package!r}, which is not a Python identifier "
            "(it must not start with a digit)"
        )
    if keyword.iskeyword(package) or keyword.issoftkeyword(package):
        raise BindgenError(f"{source} gives the package name {package!r}, which is a Python keyword")
    if package in _TAKEN or package in sys.stdlib_module_names:
        raise BindgenError(f"{source} gives the package name {package!r}, which would shadow the module of that name")
    return dist, package


def available_versions() -> dict[str, str]:
    """Version name -> generated package, as the installed `mcp_bindings` lists them (pinned versions
    and any generated later: `draft`, a version installed from another package)."""
    from mcp_bindings.runtime import registry

    return {name: i.package for name, i in registry.names().items()}


def choose_protocol(protocol: str | None) -> str:
    versions = available_versions()
    if not versions:
        raise BindgenError("mcp_bindings lists no protocol versions; run `mcp-bindgen generate` first")
    if protocol is None:
        return list(versions)[-1]
    if protocol not in versions:
        raise BindgenError(f"--protocol {protocol!r} is not a generated version (generated: {', '.join(versions)})")
    return protocol


def parse_features(text: str) -> tuple[str, ...]:
    asked = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in asked if item not in FEATURES]
    if unknown:
        raise BindgenError(f"--features: unknown {', '.join(unknown)} (choose from {', '.join(FEATURES)})")
    chosen = tuple(f for f in FEATURES if f in asked)
    if not {"tools", "resources", "prompts"} & set(chosen):
        raise BindgenError("--features needs at least one of tools, resources, prompts (a server must offer something)")
    if "completion" in chosen and not {"prompts", "resources"} & set(chosen):
        raise BindgenError(
            "--features completion completes a prompt argument or a resource template variable: "
            "add prompts or resources"
        )
    return chosen


def runtime_extras(transport: str) -> list[str]:
    return {"stdio": ["runtime"], "http": ["http"], "both": ["http", "runtime"]}[transport]


def checkout_root() -> Path | None:
    """The mcp-bindgen checkout this module runs from (also when installed editable), else None."""
    root = _PACKAGE_DIR.parent.parent
    pyproject = root / "pyproject.toml"
    if not (pyproject.is_file() and (root / "generator").is_dir() and (root / "templates").is_dir()):
        return None
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
    except tomllib.TOMLDecodeError:
        return None
    return root if name == "mcp-bindgen" else None


def bindgen_requirement(spec: str | None, extras: list[str]) -> tuple[str, bool]:
    """The requirement line on mcp-bindgen and whether it is a direct (`@ url`) reference.

    SPEC: a local path or file:// URL (a checkout: `mcp-bindgen[...] @ file:///...`), a version
    (`1.2.0` -> `==1.2.0`), a version specifier (`>=0.1`), a VCS/archive URL, or a full requirement
    starting with `mcp-bindgen`. None: this checkout when running from one, else this version.
    """
    base = f"mcp-bindgen[{','.join(sorted(extras))}]"
    if spec is None:
        root = checkout_root()
        return (f"{base} @ {root.as_uri()}", True) if root else (f"{base}=={__version__}", False)
    spec = spec.strip()
    if spec.startswith("mcp-bindgen"):
        return spec, "@" in spec
    if spec.startswith(_SPECIFIER):
        return f"{base}{spec}", False
    if spec.startswith("file:"):
        return f"{base} @ {spec}", True
    if "://" in spec:  # git+https://..., https://.../mcp_bindgen-X.whl
        return f"{base} @ {spec}", True
    path = Path(spec).expanduser()
    if path.exists() or "/" in spec or spec.startswith("."):
        resolved = path.resolve()
        if not ((resolved / "pyproject.toml").is_file() or resolved.suffix in (".whl", ".gz", ".zip")):
            raise BindgenError(f"--bindgen {spec!r}: no mcp-bindgen project (pyproject.toml) or archive there")
        return f"{base} @ {resolved.as_uri()}", True
    if _VERSION.match(spec):
        return f"{base}=={spec.removeprefix('v')}", False
    raise BindgenError(
        f"--bindgen {spec!r} is neither a path, a URL, a version (e.g. 0.1.0), a specifier (e.g. >=0.1) "
        "nor a requirement starting with mcp-bindgen"
    )


# -- what the chosen version offers ----------------------------------------------------------------


@dataclass(frozen=True)
class Handler:
    method: str
    name: str  # the stub's handler name
    params: str  # annotation text, e.g. "m.PaginatedRequestParams | None"
    result: str  # annotation text, e.g. "m.CallToolResult | m.InputRequiredResult"
    input_required: bool


@dataclass(frozen=True)
class VersionFacts:
    version: str
    package: str  # e.g. v2025_11_25
    stateless: bool
    handlers: dict[str, Handler]
    log_handler: Handler | None  # the client's notifications/message handler, when the version has logging
    tool_fields: frozenset[str]
    call_result_fields: frozenset[str]
    resource_fields: frozenset[str]
    template_fields: frozenset[str]
    prompt_fields: frozenset[str]
    prompt_argument_fields: frozenset[str]
    template_ref: str | None  # the completion reference class of a resource (template)
    cacheable: bool  # list results carry ttlMs / cacheScope hints

    def handler(self, method: str) -> Handler:
        try:
            return self.handlers[method]
        except KeyError:
            raise BindgenError(
                f"MCP {self.version} has no {method} request; pick another --protocol or drop the feature"
            ) from None


def _fields(model: Any) -> frozenset[str]:
    return frozenset(getattr(model, "model_fields", {}))


def _annotation_params(spec: Any) -> str:
    params = "dict[str, Any] | None" if spec.params is None else f"m.{_type_name(spec.params)}"
    if spec.params is not None and not spec.params_required:
        params += " | None"
    return params


def _annotation(spec: Any) -> tuple[str, str]:
    """The handler annotations the stub generator writes (render/surface_modules.py), from the table."""
    params = _annotation_params(spec)
    result = f"m.{_type_name(spec.result)}"
    if spec.input_required:
        result += " | m.InputRequiredResult"
    return params, result


def _type_name(target: Any) -> str:
    return str(getattr(target, "__name__", target))


def _ref_class(models: ModuleType, tag: str) -> str | None:
    """The model whose `type` is the constant `tag` (e.g. "ref/resource"), if the version has one."""
    for name, value in sorted(vars(models).items()):
        fields = getattr(value, "model_fields", None)
        if not isinstance(value, type) or not fields or "type" not in fields:
            continue
        if typing.get_args(fields["type"].annotation) == (tag,):
            return name
    return None


def version_facts(version: str) -> VersionFacts:
    package = available_versions()[version]
    methods = import_module(f"mcp_bindings.{package}.methods")
    models = import_module(f"mcp_bindings.{package}.models")
    handlers: dict[str, Handler] = {}
    for method, spec in methods.CLIENT_REQUESTS.items():
        if spec.builtin:
            continue
        params, result = _annotation(spec)
        handlers[method] = Handler(method, spec.handler, params, result, bool(spec.input_required))
    list_tools = methods.CLIENT_REQUESTS.get("tools/list")
    log_spec = methods.SERVER_NOTIFICATIONS.get("notifications/message")
    log_handler = None
    if log_spec is not None:
        log_handler = Handler(log_spec.method, log_spec.handler, _annotation_params(log_spec), "None", False)
    return VersionFacts(
        version=version,
        package=package,
        stateless=bool(methods.PROTOCOL.stateless),
        handlers=handlers,
        log_handler=log_handler,
        tool_fields=_fields(getattr(models, "Tool", None)),
        call_result_fields=_fields(getattr(models, "CallToolResult", None)),
        resource_fields=_fields(getattr(models, "Resource", None)),
        template_fields=_fields(getattr(models, "ResourceTemplate", None)),
        prompt_fields=_fields(getattr(models, "Prompt", None)),
        prompt_argument_fields=_fields(getattr(models, "PromptArgument", None)),
        template_ref=_ref_class(models, "ref/resource"),
        cacheable=list_tools is not None and "ttl_ms" in _fields(list_tools.result),
    )


# -- the files -----------------------------------------------------------------------------------

LINE_LENGTH = 100  # the generated project's ruff line length


def _pascal(package: str) -> str:
    return "".join(part.capitalize() for part in package.split("_") if part)


def _kw(lines: list[tuple[str, str]], fields: frozenset[str], indent: int) -> list[str]:
    """Keyword-argument lines (`name=value,`), keeping only fields the version's model has."""
    pad = " " * indent
    return [f"{pad}{key}={value}," for key, value in lines if key in fields]


def def_header(name: str, params: str, result: str, context: str = "RequestContext", indent: int = 4) -> str:
    """An `async def` line of a handler, split the way ruff format / black split a long one."""
    pad = " " * indent
    one = f"{pad}async def {name}(self, params: {params}, ctx: {context}) -> {result}:"
    if len(one) <= LINE_LENGTH:
        return one
    middle = f"{pad}    self, params: {params}, ctx: {context}"
    if len(middle) <= LINE_LENGTH:
        return f"{pad}async def {name}(\n{middle}\n{pad}) -> {result}:"
    inner = pad + "    "
    return (
        f"{pad}async def {name}(\n{inner}self,\n{inner}params: {params},\n{inner}ctx: {context},\n{pad}) -> {result}:"
    )


def _handler(h: Handler) -> dict[str, str]:
    return {"header": def_header(h.name, h.params, h.result)}


@dataclass
class _Parts:
    """Pieces of the server module and the tests, collected feature by feature."""

    stdlib: set[str] = field(default_factory=set)
    third_party: set[str] = field(default_factory=set)
    sections: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    test_stdlib: set[str] = field(default_factory=set)
    test_imports: set[str] = field(default_factory=set)
    tests: list[str] = field(default_factory=list)
    smoke: list[str] = field(default_factory=list)  # lines run against a connected `client` (transport tests)
    feature_notes: list[str] = field(default_factory=list)


def _render(template: str, **context: Any) -> str:
    try:
        from .render.templates import render
    except ImportError as exc:  # jinja2 comes with the `generator` extra
        raise BindgenError(
            f"mcp-bindgen new needs the generator extra ({exc}): pip install 'mcp-bindgen[generator]'"
        ) from exc
    return render(f"scaffold/{template}", **context).rstrip("\n")


def _first_feature(opts: ScaffoldOptions) -> str:
    return next(f for f in ("tools", "prompts", "resources") if f in opts.features)


def _log_lines(opts: ScaffoldOptions, feature: str, message: str) -> list[str]:
    """`await ctx.log(...)` in the first feature's handler, when logging was chosen."""
    if "logging" not in opts.features or feature != _first_feature(opts):
        return []
    return [
        "        # A log message to the client (when it asked for logs); your own diagnostics go to stderr.",
        f'        await ctx.log("info", {message})',
    ]


def _irr_note(facts: VersionFacts, handler: Handler) -> list[str]:
    if not handler.input_required:
        return []
    return [
        f"        # MCP {facts.version}: instead of a result this may return m.InputRequiredResult(",
        "        #     input_requests={...}) to ask the client for input (elicitation, sampling, roots);",
        "        # the client retries with the answers in params.input_responses.",
    ]


def _tools(opts: ScaffoldOptions, facts: VersionFacts, parts: _Parts, common: dict[str, Any]) -> None:
    structured = "structured_content" in facts.call_result_fields and "output_schema" in facts.tool_fields
    parts.third_party |= {
        "from pydantic import BaseModel, Field, ValidationError",
        "from mcp_bindings.runtime.errors import INVALID_PARAMS, McpError",
    }
    tool_kwargs = _kw(
        [
            ("name", '"add"'),
            ("title", '"Add two numbers"'),
            ("description", '"Add two integers and return their sum."'),
            ("input_schema", "m.ToolInputSchema.model_validate(AddArguments.model_json_schema())"),
            ("output_schema", "m.ToolOutputSchema.model_validate(AddOutput.model_json_schema())"),
        ],
        facts.tool_fields if structured else facts.tool_fields - {"output_schema"},
        8,
    )
    parts.sections.append(
        _render(
            "server/tools.py.j2",
            output_model=[_render("server/tool_output_model.py.j2")] if structured else [],
            tool_kwargs=tool_kwargs,
        )
    )
    call = facts.handler("tools/call")
    if structured:
        compute = ["        output = AddOutput(total=args.a + args.b)"]
        result_kwargs = [
            '            content=[m.TextContent(type="text", text=str(output.total))],',
            "            structured_content=output.model_dump(),",
        ]
    else:
        compute = ["        total = args.a + args.b"]
        result_kwargs = ['            content=[m.TextContent(type="text", text=str(total))],']
    parts.methods.append(
        _render(
            "server/tools_methods.py.j2",
            list_tools=_handler(facts.handler("tools/list")),
            call_tool=_handler(call),
            log_lines=_log_lines(opts, "tools", 'f"add: {args.a} + {args.b}"'),
            irr_note=_irr_note(facts, call),
            compute=compute,
            result_kwargs=result_kwargs,
        )
    )
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    parts.tests.append(
        _render(
            "tests/test_tools.py.j2",
            schema_checks=["    assert tools.tools[0].output_schema is not None"] if structured else [],
            result_checks=['    assert result.structured_content == {"total": 5}'] if structured else [],
            **common,
        )
    )
    parts.smoke += [
        "tools = await client.list_tools()",
        'assert [tool.name for tool in tools.tools] == ["add"]',
        'result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})',
        'assert [c.text for c in result.content if isinstance(c, m.TextContent)] == ["5"]',
    ]
    parts.feature_notes.append(
        "`add`: a tool with typed (pydantic) arguments"
        + (", an outputSchema and structured content" if structured else "")
    )


def _resources(opts: ScaffoldOptions, facts: VersionFacts, parts: _Parts, common: dict[str, Any]) -> None:
    parts.stdlib |= {"import re", "from urllib.parse import unquote"}
    parts.third_party |= {
        "from mcp_bindings.runtime import registry",
        "from mcp_bindings.runtime.errors import INVALID_PARAMS, McpError",
    }
    resource_kwargs = _kw(
        [
            ("uri", "ABOUT_URI"),
            ("name", '"about"'),
            ("title", '"About this server"'),
            ("description", '"What this server is."'),
            ("mime_type", '"text/plain"'),
        ],
        facts.resource_fields,
        8,
    )
    template_kwargs = _kw(
        [
            ("uri_template", "GREETING_TEMPLATE"),
            ("name", '"greeting"'),
            ("title", '"A greeting"'),
            ("description", '"A greeting for {name}."'),
            ("mime_type", '"text/plain"'),
        ],
        facts.template_fields,
        8,
    )
    parts.sections.append(
        _render("server/resources.py.j2", resource_kwargs=resource_kwargs, template_kwargs=template_kwargs)
    )
    read = facts.handler("resources/read")
    parts.methods.append(
        _render(
            "server/resources_methods.py.j2",
            list_resources=_handler(facts.handler("resources/list")),
            list_templates=_handler(facts.handler("resources/templates/list")),
            read_resource=_handler(read),
            log_lines=_log_lines(opts, "resources", 'f"read {params.uri}"'),
            irr_note=_irr_note(facts, read),
        )
    )
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    parts.tests.append(_render("tests/test_resources.py.j2", dist_name=opts.dist_name, **common))
    parts.smoke += [
        'read = await client.read_resource(uri="example://greeting/Ada")',
        "assert isinstance(read.contents[0], m.TextResourceContents)",
    ]
    parts.feature_notes.append("`example://about`: a static resource; `example://greeting/{name}`: a template")


def _prompts(opts: ScaffoldOptions, facts: VersionFacts, parts: _Parts, common: dict[str, Any]) -> None:
    parts.third_party.add("from mcp_bindings.runtime.errors import INVALID_PARAMS, McpError")
    prompt_kwargs = _kw(
        [
            ("name", '"greet"'),
            ("title", '"Greet someone"'),
            ("description", '"Ask the model for a short, friendly greeting."'),
            ("arguments", "[NAME_ARGUMENT]"),
        ],
        facts.prompt_fields,
        8,
    )
    argument_kwargs = _kw(
        [("name", '"name"'), ("title", '"Name"'), ("description", '"Who to greet"'), ("required", "True")],
        facts.prompt_argument_fields,
        4,
    )
    get = facts.handler("prompts/get")
    parts.sections.append(_render("server/prompts.py.j2", prompt_kwargs=prompt_kwargs, argument_kwargs=argument_kwargs))
    parts.methods.append(
        _render(
            "server/prompts_methods.py.j2",
            list_prompts=_handler(facts.handler("prompts/list")),
            get_prompt=_handler(get),
            log_lines=_log_lines(opts, "prompts", 'f"greet: {name}"'),
            irr_note=_irr_note(facts, get),
        )
    )
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    parts.tests.append(_render("tests/test_prompts.py.j2", **common))
    parts.smoke += [
        'prompt = await client.get_prompt(name="greet", arguments={"name": "Ada"})',
        "assert isinstance(prompt.messages[0].content, m.TextContent)",
    ]
    parts.feature_notes.append("`greet`: a prompt with a required `name` argument")


def _completion(opts: ScaffoldOptions, facts: VersionFacts, parts: _Parts, common: dict[str, Any]) -> None:
    targets: list[str] = []
    cases: list[str] = []
    if "prompts" in opts.features:
        targets.append('    ("greet", "name"),  # the `name` argument of the `greet` prompt')
        cases.append(_render("tests/complete_prompt.py.j2"))
    if "resources" in opts.features and facts.template_ref:
        targets.append('    (GREETING_TEMPLATE, "name"),  # the {name} variable of the greeting template')
        cases.append(_render("tests/complete_template.py.j2", template_ref=facts.template_ref))
    parts.sections.append(_render("server/completion.py.j2", targets=targets))
    parts.methods.append(
        _render("server/completion_methods.py.j2", complete=_handler(facts.handler("completion/complete")))
    )
    parts.tests.append(_render("tests/test_completion.py.j2", cases=cases, **common))
    what = " and ".join(
        x for x, on in (("prompt argument", "prompts"), ("template variable", "resources")) if on in opts.features
    )
    parts.feature_notes.append(f"completion of the `name` {what}, by prefix")


def _logging(opts: ScaffoldOptions, facts: VersionFacts, parts: _Parts, common: dict[str, Any]) -> None:
    first = _first_feature(opts)
    action = {
        "tools": 'await client.call_tool(name="add", arguments={"a": 2, "b": 3})',
        "prompts": 'await client.get_prompt(name="greet", arguments={"name": "Ada"})',
        "resources": 'await client.read_resource(uri="example://about")',
    }[first]
    opt_in = []
    if facts.stateless:
        opt_in = [
            f"        # MCP {facts.version}: the server logs only for requests that carry a log level.",
            '        client.session.log_level = "info"',
        ]
    notification = facts.log_handler
    assert notification is not None
    parts.tests.append(
        _render(
            "tests/test_logging.py.j2",
            header=def_header(notification.name, notification.params, "None", "NotificationContext"),
            params_type=notification.params,
            action=action,
            opt_in=opt_in,
            **common,
        )
    )
    parts.test_imports |= {
        "import anyio",
        f"from mcp_bindings.{facts.package}.client import ClientHandlers",
        "from mcp_bindings.runtime.context import NotificationContext",
    }
    parts.attributes += [
        "    # Log messages (ctx.log) reach clients only from servers that declare logging; the runtime",
        "    # answers logging/setLevel and filters by the level.",
        '    declared_capabilities = {"logging": {}}',
    ]
    parts.feature_notes.append(f"logging: the `{first}` example sends the client a log message (`ctx.log`)")


def _main(opts: ScaffoldOptions, class_name: str) -> str:
    transports = opts.transports
    arguments: list[str] = []
    if len(transports) == 2:
        arguments.append('    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")')
    if "http" in transports:
        arguments += [
            '    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")',
            '    parser.add_argument("--port", type=int, default=3001, help="HTTP: port")',
            '    parser.add_argument("--path", default="/mcp", help="HTTP: endpoint path")',
        ]
    serve_http = [
        "from mcp_bindings.runtime.http_server import serve_http",
        "",
        "serve_http(server, host=args.host, port=args.port, path=args.path)",
    ]
    serve_stdio = ["from mcp_bindings.runtime.stdio import serve_stdio", "", "serve_stdio(server)"]
    if len(transports) == 2:
        serve = ['    if args.transport == "http":']
        serve += [f"        {line}".rstrip() for line in serve_http]
        serve += ["    else:"] + [f"        {line}".rstrip() for line in serve_stdio]
    else:
        serve = [f"    {line}".rstrip() for line in (serve_http if transports == ("http",) else serve_stdio)]
    what = {"stdio": "over stdio", "http": "over Streamable HTTP"}
    description = f"{opts.dist_name}: an MCP server " + " or ".join(what[t] for t in transports)
    one_line = f'    parser = argparse.ArgumentParser(description="{description}")'
    parser = (
        [one_line]
        if len(one_line) <= LINE_LENGTH
        else ["    parser = argparse.ArgumentParser(", f'        description="{description}"', "    )"]
    )
    return _render(
        "server/main.py.j2",
        class_name=class_name,
        parser=parser,
        arguments=arguments,
        parse="    args = parser.parse_args(argv)" if "http" in transports else "    parser.parse_args(argv)",
        serve=serve,
    )


def build_files(opts: ScaffoldOptions) -> dict[str, str]:
    """Relative path -> content of every file of the project."""
    facts = version_facts(opts.protocol)
    for feature in opts.features:
        for method in FEATURE_METHODS.get(feature, ()):
            facts.handler(method)
    if "logging" in opts.features and facts.log_handler is None:
        raise BindgenError(f"MCP {facts.version} has no logging (notifications/message); drop it from --features")

    pkg = opts.package
    class_name = _pascal(pkg) if _pascal(pkg).endswith("Server") else f"{_pascal(pkg)}Server"
    common = {"version": facts.version, "class_name": class_name, "package": pkg}
    parts = _Parts()
    parts.stdlib.add("import argparse")
    parts.third_party |= {
        "from mcp_bindings.runtime.context import RequestContext",
        f"from mcp_bindings.{facts.package} import models as m",
        f"from mcp_bindings.{facts.package}.server import Server",
    }
    parts.test_stdlib.add("from collections.abc import AsyncIterator")
    parts.test_imports |= {
        "import pytest",
        "from mcp_bindings.runtime.memory import connect_in_memory",
        f"from mcp_bindings.{facts.package} import models as m",
        f"from mcp_bindings.{facts.package}.client import Client",
        f"from {pkg}.server import {class_name}",
    }
    builders = {
        "tools": _tools,
        "resources": _resources,
        "prompts": _prompts,
        "completion": _completion,
        "logging": _logging,
    }
    for feature in opts.features:
        builders[feature](opts, facts, parts, common)
    if facts.cacheable:
        parts.attributes += [
            f"    # MCP {facts.version} caching hints, stamped on list/read results that leave them unset:",
            "    # how long (ms) a client may reuse a result, and whether shared caches may keep it.",
            "    cache_ttl_ms = 0",
            '    cache_scope = "private"',
        ]
    parts.sections.append(
        _render(
            "server/class.py.j2",
            class_name=class_name,
            dist_name=opts.dist_name,
            attributes=parts.attributes,
            methods=parts.methods,
        )
    )
    parts.sections.append(_main(opts, class_name))

    run_lines = _run_lines(opts)
    files: dict[str, str] = {}
    files[f"src/{pkg}/server.py"] = _render(
        "server.py.j2",
        doc={
            "dist_name": opts.dist_name,
            "version": facts.version,
            "stub": f"mcp_bindings.{facts.package}.server.Server",
            "run_lines": run_lines,
            "features": parts.feature_notes,
        },
        imports=_import_block(parts.stdlib, parts.third_party, first_party=set()),
        first_section=parts.sections[0],
        sections=parts.sections[1:],
    )
    files[f"src/{pkg}/__init__.py"] = _render("package_init.py.j2", dist_name=opts.dist_name, version=facts.version)
    files[f"src/{pkg}/__main__.py"] = _render("main.py.j2", package=pkg, dist_name=opts.dist_name)
    files[f"src/{pkg}/py.typed"] = ""
    files["tests/conftest.py"] = _render("tests/conftest.py.j2")
    files["tests/test_server.py"] = _render(
        "tests/test_server.py.j2",
        imports=_import_block(
            parts.test_stdlib, parts.test_imports, first_party={f"from {pkg}.server import {class_name}"}
        ),
        tests=parts.tests,
        **common,
    )
    client_imports = {
        "import anyio",
        "import pytest",
        f"from mcp_bindings.{facts.package} import models as m",
        f"from mcp_bindings.{facts.package}.client import Client",
    }
    if "stdio" in opts.transports:
        files["tests/test_stdio.py"] = _render(
            "tests/test_stdio.py.j2",
            imports=_import_block(
                {"import sys"},
                client_imports | {"from mcp_bindings.runtime.stdio import connect_stdio"},
                first_party=set(),
            ),
            smoke=["            " + line for line in parts.smoke],
            **common,
        )
    if "http" in opts.transports:
        files["tests/test_http.py"] = _render(
            "tests/test_http.py.j2",
            imports=_import_block(
                {
                    "import socket",
                    "import subprocess",
                    "import sys",
                    "import time",
                    "from collections.abc import Iterator",
                    "from pathlib import Path",
                },
                client_imports | {"from mcp_bindings.runtime.http_client import connect_http"},
                first_party=set(),
            ),
            transport_args='"--transport", "http", ' if opts.transport == "both" else "",
            smoke=["            " + line for line in parts.smoke],
            **common,
        )
    files["pyproject.toml"] = _render(
        "pyproject.toml.j2",
        dist_name=opts.dist_name,
        package=pkg,
        version=facts.version,
        requirement=opts.requirement,
        hatch_metadata=(
            [
                "",
                "[tool.hatch.metadata]",
                "allow-direct-references = true  # the mcp-bindgen requirement is a path or URL",
            ]
            if opts.direct_reference
            else []
        ),
    )
    files["README.md"] = _render(
        "README.md.j2", **_readme_context(opts, facts, class_name, parts.feature_notes, run_lines)
    )
    files[".gitignore"] = _render("gitignore.j2")
    return {path: text + "\n" if text else text for path, text in files.items()}


def _run_lines(opts: ScaffoldOptions) -> list[str]:
    """`command  # what it does` lines, comments aligned."""
    lines = []
    if "stdio" in opts.transports:
        lines.append((opts.dist_name, "stdio: what an MCP client spawns"))
    if "http" in opts.transports:
        flag = "--transport http " if opts.transport == "both" else ""
        lines.append((f"{opts.dist_name} {flag}--port 3001", "Streamable HTTP on http://127.0.0.1:3001/mcp"))
    width = max(len(command) for command, _ in lines)
    return [f"{command.ljust(width)}  # {what}" for command, what in lines]


def _import_block(stdlib: set[str], third_party: set[str], first_party: set[str]) -> list[str]:
    """Import lines as ruff's isort rules (`I`) order them: stdlib, third party, first party; in a
    group `import x` lines before `from x import ...` lines, by module; names from one module on one
    line, constants before classes before the rest (`as` imports stay on their own line)."""

    def name_key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() and len(name) > 1 else 1 if name[0].isupper() else 2
        return kind, name

    def ordered(lines: set[str]) -> list[str]:
        straight = sorted((line for line in lines if line.startswith("import ")), key=lambda line: line.split()[1])
        merged: dict[tuple[str, bool], set[str]] = {}
        for line in lines:
            if line.startswith("from "):
                module, _, names = line.removeprefix("from ").partition(" import ")
                for name in names.split(", "):
                    merged.setdefault((module, " as " in name), set()).add(name)
        from_ = [
            f"from {module} import {', '.join(sorted(names, key=name_key))}"
            for (module, _alias), names in sorted(merged.items(), key=lambda item: (item[0][0], not item[0][1]))
        ]
        return straight + from_

    out: list[str] = []
    for group in (ordered(stdlib), ordered(third_party - first_party), ordered(first_party)):
        if group:
            if out:
                out.append("")
            out.extend(group)
    return out


def _readme_context(
    opts: ScaffoldOptions, facts: VersionFacts, class_name: str, features: list[str], run_lines: list[str]
) -> dict[str, Any]:
    import json

    script = str(opts.path / ".venv" / "bin" / opts.dist_name)
    configs = []
    if "stdio" in opts.transports:
        stdio = {"mcpServers": {opts.dist_name: {"command": script, "args": []}}}
        configs.append(
            {"title": "stdio (the client starts the server)", "json": json.dumps(stdio, indent=2).splitlines()}
        )
    if "http" in opts.transports:
        http = {"mcpServers": {opts.dist_name: {"type": "http", "url": "http://127.0.0.1:3001/mcp"}}}
        configs.append(
            {
                "title": "Streamable HTTP (start the server yourself first)",
                "json": json.dumps(http, indent=2).splitlines(),
            }
        )
    return {
        "dist_name": opts.dist_name,
        "package": opts.package,
        "version": facts.version,
        "stub_package": facts.package,
        "class_name": class_name,
        "features": features,
        "run_lines": run_lines,
        "configs": configs,
        "requirement": opts.requirement,
        "http_command": [
            f".venv/bin/{opts.dist_name} " + ("--transport http " if opts.transport == "both" else "") + "--port 3001"
        ]
        if "http" in opts.transports
        else [],
    }


def scaffold(opts: ScaffoldOptions) -> list[Path]:
    """Write the project; refuse a non-empty directory unless `force`."""
    target = opts.path
    if target.exists() and not target.is_dir():
        raise BindgenError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not opts.force:
        raise BindgenError(
            f"{target} is not empty; pass --force to write into it (files of the same names are overwritten)"
        )
    files = build_files(opts)  # everything rendered before anything is written
    written = []
    for rel, text in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
