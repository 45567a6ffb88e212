"""`mcp-bindgen new PATH`: a complete, runnable MCP server project written on the authoring layer
(`mcp_bindings.runtime.app`: decorated, typed functions over the chosen version's stub).

The layer derives the schemas, the capabilities and each client version's shape of the results, so
the server's code is the same for every protocol version: only `App(protocol=...)` names the
version it is written against. Everything the project's files vary by (the features, transports,
names, the requirement on mcp-bindgen) is decided here, in Python; the Jinja2 templates under
`templates/scaffold/` only loop over and print what this module hands them: they hold no conditions.
"""

from __future__ import annotations

import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .errors import BindgenError
from .installed import default_version, installed_versions
from .origin import Origin, install_origin

# `ui`: a tool that opens an MCP Apps UI (`ui://` HTML); `skills`: a skills/ folder served with the
# Skills extension. Both are extensions: asked for by name, not in the default.
FEATURES: tuple[str, ...] = ("tools", "resources", "prompts", "completion", "logging", "ui", "skills")
TRANSPORTS: tuple[str, ...] = ("stdio", "http", "both")
DEFAULT_FEATURES = "tools,resources,prompts,completion,logging"
_OFFERING = ("tools", "resources", "prompts", "ui", "skills")  # a server must offer one of these
PROJECT_VERSION = "0.1.0"  # pyproject.toml's and server.json's (templates/scaffold/pyproject.toml.j2)

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
    # The distribution holding the chosen version where it is not mcp-bindgen's own (a draft
    # installed from `generate --package`): the project depends on it too.
    version_requirement: str | None = None
    # The server's name in the MCP Registry (server.json, the README's `mcp-name:` line); the
    # placeholder namespace of `registry.default_name` when not given.
    registry_name: str = ""
    # Where the requirement on mcp-bindgen came from when --bindgen was not given: the wheel, folder or
    # repository this mcp-bindgen was installed from (`origin.install_origin`), else None (the index).
    bindgen_origin: Origin | None = None

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
        registry_name: str | None = None,
    ) -> ScaffoldOptions:
        path = path.expanduser().resolve()
        dist_name, package = validate_name(name or path.name, from_path=name is None)
        registry = validate_registry_name(registry_name, dist_name)
        version = choose_protocol(protocol)
        if transport not in TRANSPORTS:
            raise BindgenError(f"--transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
        chosen = parse_features(features if features is not None else DEFAULT_FEATURES)
        extras = runtime_extras(transport) + (["skills"] if "skills" in chosen else [])
        origin = install_origin("mcp-bindgen") if bindgen is None else None
        requirement, direct = bindgen_requirement(origin.url if origin is not None else bindgen, extras)
        holder = installed_versions()[version].requirement
        return cls(
            path, dist_name, package, version, transport, chosen, requirement, direct, force, holder, registry, origin
        )

    @property
    def transports(self) -> tuple[str, ...]:
        return ("stdio", "http") if self.transport == "both" else (self.transport,)

    def next_steps(self) -> str:
        lines = [
            "next:",
            f"  cd {self.path}",
            "  python -m venv .venv && .venv/bin/pip install -e '.[dev]'",
            "  .venv/bin/pytest",
            f"  .venv/bin/{self.dist_name}" + ("" if "stdio" in self.transports else " --port 3001"),
        ]
        lines.append(f"(it {self.requirement_note()})")
        if self.version_requirement:
            lines.append(f"(protocol {self.protocol} comes from {self.version_requirement}: {self.holder_step()})")
        from .registry import PLACEHOLDER_OWNER

        if PLACEHOLDER_OWNER in self.registry_name:
            lines.append(
                f"(server.json names it {self.registry_name} in the MCP Registry: put your GitHub user in place of "
                f"{PLACEHOLDER_OWNER} there and in README.md, or scaffold with --registry-name io.github.USER/"
                f"{self.dist_name}; then `mcp-bindgen registry check {self.path / 'server.json'}`)"
            )
        return "\n".join(lines)

    def holder_step(self) -> str:
        """What installing the distribution holding the chosen version takes."""
        if self.version_requirement is not None and " @ " in self.version_requirement:
            return "where it was installed from, which the project's install installs too"
        return "install it in .venv first"

    def requirement_note(self, code: str = "") -> str:
        """Where the project's mcp-bindgen comes from, and how to choose another source (`code`
        around commands and requirements: "`" in the README)."""
        if self.bindgen_origin is not None:
            return (
                f"depends on mcp-bindgen from {self.bindgen_origin.describe()}, which this mcp-bindgen was "
                f"installed from; once mcp-bindgen is on the package index, scaffold with "
                f"{code}--bindgen =={__version__}{code} for a project that installs anywhere"
            )
        if self.direct_reference:
            return f"depends on {code}{self.requirement}{code}, as --bindgen asked"
        return (
            f"depends on {code}{self.requirement}{code} from the package index; to use a local wheel or folder "
            f"instead, scaffold with {code}--bindgen PATH{code}"
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


def validate_registry_name(name: str | None, dist_name: str) -> str:
    """The server's MCP Registry name: `name` if valid, else `io.github.<placeholder>/<dist_name>`."""
    from .registry import default_name, name_problem

    chosen = name or default_name(dist_name)
    problem = name_problem(chosen)
    if problem is None:
        return chosen
    if name:
        raise BindgenError(f"--registry-name: {problem}")
    raise BindgenError(f"the MCP Registry name {chosen!r} is not valid ({problem}): pass --registry-name")


def available_versions() -> dict[str, str]:
    """Version name -> generated package, as the installed `mcp_bindings` lists them (pinned versions
    and any generated later: `draft`, a version installed from another package), found as the
    runtime's registry finds them but without importing the runtime (`installed.py`)."""
    return {name: v.package for name, v in installed_versions().items()}


def choose_protocol(protocol: str | None) -> str:
    versions = available_versions()
    if not versions:
        raise BindgenError("mcp_bindings lists no protocol versions; run `mcp-bindgen generate` first")
    if protocol is None:
        return default_version(installed_versions())
    if protocol not in versions:
        raise BindgenError(f"--protocol {protocol!r} is not a generated version (generated: {', '.join(versions)})")
    return protocol


def parse_features(text: str) -> tuple[str, ...]:
    asked = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in asked if item not in FEATURES]
    if unknown:
        raise BindgenError(f"--features: unknown {', '.join(unknown)} (choose from {', '.join(FEATURES)})")
    chosen = tuple(f for f in FEATURES if f in asked)
    if not set(_OFFERING) & set(chosen):
        raise BindgenError(f"--features needs at least one of {', '.join(_OFFERING)} (a server must offer something)")
    if "logging" in chosen and not {"tools", "resources", "prompts"} & set(chosen):
        raise BindgenError("--features logging logs from the tools, prompts or resources example: add one of them")
    if "completion" in chosen and not {"prompts", "resources"} & set(chosen):
        raise BindgenError(
            "--features completion completes a prompt argument or a resource template variable: "
            "add prompts or resources"
        )
    return chosen


def runtime_extras(transport: str) -> list[str]:
    return {"stdio": ["runtime"], "http": ["http"], "both": ["http", "runtime"]}[transport]


def bindgen_requirement(spec: str | None, extras: list[str]) -> tuple[str, bool]:
    """The requirement line on mcp-bindgen and whether it is a direct (`@ url`) reference.

    SPEC: a local path or file:// URL (a checkout: `mcp-bindgen[...] @ file:///...`), a version
    (`1.2.0` -> `==1.2.0`), a version specifier (`>=0.1`), a VCS/archive URL, or a full requirement
    starting with `mcp-bindgen`. None: this version of mcp-bindgen, from the package index (portable:
    nothing of this machine in it); `--bindgen .` (a checkout) or a wheel's path installs a local copy.
    (`new` without --bindgen first takes where this mcp-bindgen was installed from: `origin`.)
    """
    base = f"mcp-bindgen[{','.join(sorted(extras))}]"
    if spec is None:
        return f"{base}=={__version__}", False
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


# -- the files -----------------------------------------------------------------------------------

LINE_LENGTH = 100  # the generated project's ruff line length


@dataclass
class _Parts:
    """Pieces of the server module and the tests, collected feature by feature."""

    stdlib: set[str] = field(default_factory=set)
    third_party: set[str] = field(default_factory=set)
    sections: list[str] = field(default_factory=list)
    test_stdlib: set[str] = field(default_factory=set)
    test_imports: set[str] = field(default_factory=set)
    tests: list[str] = field(default_factory=list)
    smoke: list[str] = field(default_factory=list)  # lines run against `app.test_client(version)`
    typed_smoke: list[str] = field(default_factory=list)  # ... against the version's typed `Client`
    feature_notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # other files of the project (skills/...)


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


def _logs(opts: ScaffoldOptions, feature: str, message: str) -> tuple[list[str], list[str]]:
    """(extra parameter lines, body lines): the first feature's function logs, when logging was chosen."""
    if "logging" not in opts.features or feature != _first_feature(opts):
        return [], []
    return ["    ctx: Context,"], [
        "    # A log message to the client (where it asked for logs); your own diagnostics go to stderr.",
        f"    await ctx.info({message})",
    ]


def _tools(opts: ScaffoldOptions, parts: _Parts) -> None:
    parts.test_imports.add(f"from mcp_bindings.{_version_package(opts.protocol)} import models as m")
    parts.stdlib.add("from typing import Annotated")
    parts.third_party.add("from pydantic import BaseModel, Field")
    params, log_lines = _logs(opts, "tools", 'f"add: {a} + {b}"')
    parts.sections.append(_render("app/tools.py.j2", params=params, log_lines=log_lines))
    parts.test_stdlib.add("import json")
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    parts.tests.append(_render("tests/test_tools.py.j2", tool_names=_listed(opts)["tools"]))
    parts.smoke += [
        'result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})',
        'assert json.loads(result.content[0].text) == {"total": 5}',
    ]
    parts.typed_smoke += [
        'result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})',
        "assert result.is_error is not True and len(result.content) == 1",
    ]
    parts.feature_notes.append("`add`: a tool with typed arguments and a structured result")


def _resources(opts: ScaffoldOptions, parts: _Parts) -> None:
    parts.test_imports.add(f"from mcp_bindings.{_version_package(opts.protocol)} import models as m")
    params, log_lines = _logs(opts, "resources", '"read example://about"')
    parts.sections.append(
        _render(
            "app/resources.py.j2",
            dist_name=opts.dist_name,
            params=params[0].strip().rstrip(",") if params else "",
            log_lines=log_lines,
        )
    )
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    listed = _listed(opts)
    parts.tests.append(
        _render(
            "tests/test_resources.py.j2",
            dist_name=opts.dist_name,
            resource_uris=listed["resources"],
            template_uris=listed["templates"],
        )
    )
    parts.smoke += [
        'read = await client.read_resource(uri="example://greeting/Ada")',
        'assert read.contents[0].text == "Hello, Ada!"',
    ]
    parts.typed_smoke += [
        'read = await client.read_resource(uri="example://greeting/Ada")',
        'assert read.contents[0].uri == "example://greeting/Ada"',
    ]
    parts.feature_notes.append("`example://about`: a static resource; `example://greeting/{name}`: a template")


def _prompts(opts: ScaffoldOptions, parts: _Parts) -> None:
    parts.test_imports.add(f"from mcp_bindings.{_version_package(opts.protocol)} import models as m")
    parts.stdlib.add("from typing import Annotated")
    parts.third_party.add("from pydantic import Field")
    params, log_lines = _logs(opts, "prompts", 'f"greet: {name}"')
    parts.sections.append(_render("app/prompts.py.j2", params=params, log_lines=log_lines))
    parts.test_imports.add("from mcp_bindings.runtime.errors import McpError")
    parts.tests.append(_render("tests/test_prompts.py.j2"))
    parts.smoke += [
        'prompt = await client.get_prompt(name="greet", arguments={"name": "Ada"})',
        "assert len(prompt.messages) == 1",
    ]
    parts.typed_smoke += [
        'prompt = await client.get_prompt(name="greet", arguments={"name": "Ada"})',
        "assert len(prompt.messages) == 1",
    ]
    parts.feature_notes.append("`greet`: a prompt with a required `name` argument")


def _completion(opts: ScaffoldOptions, parts: _Parts) -> None:
    parts.test_imports.add(f"from mcp_bindings.{_version_package(opts.protocol)} import models as m")
    targets: list[dict[str, str]] = []
    refs: list[str] = []
    if "prompts" in opts.features:
        targets.append(
            {"where": 'prompt="greet"', "function": "complete_greet_name", "what": "the `greet` prompt's `name`"}
        )
        refs.append('m.PromptReference(type="ref/prompt", name="greet")')
    if "resources" in opts.features:
        targets.append(
            {
                "where": 'template="example://greeting/{name}"',
                "function": "complete_greeting_name",
                "what": "the greeting template's `{name}`",
            }
        )
        template_ref = "ResourceReference" if opts.protocol < "2025-06-18" else "ResourceTemplateReference"
        refs.append(f'm.{template_ref}(type="ref/resource", uri="example://greeting/{{name}}")')
    parts.sections.append(_render("app/completion.py.j2", targets=targets))
    parts.tests.append(_render("tests/test_completion.py.j2", refs=refs))
    what = " and ".join(
        x for x, on in (("prompt argument", "prompts"), ("template variable", "resources")) if on in opts.features
    )
    parts.feature_notes.append(f"completion of the `name` {what}, by prefix")


def _listed(opts: ScaffoldOptions) -> dict[str, list[str]]:
    """What the app lists, by kind, in registration order (the features' order)."""
    tools = (["add"] if "tools" in opts.features else []) + (["show_greeting"] if "ui" in opts.features else [])
    resources = ["example://about"] if "resources" in opts.features else []
    templates = ["example://greeting/{name}"] if "resources" in opts.features else []
    if "ui" in opts.features:
        resources.append(_view_uri(opts))
    if "skills" in opts.features:
        resources.append(SKILL_URI)
        templates.append("skill://{+path}")
    return {"tools": tools, "resources": resources, "templates": templates}


def _view_uri(opts: ScaffoldOptions) -> str:
    return f"ui://{opts.dist_name}/greeting"


SKILL_URI = "skill://getting-started/SKILL.md"


def _ui(opts: ScaffoldOptions, parts: _Parts) -> None:
    models = f"from mcp_bindings.{_version_package(opts.protocol)} import models as m"
    parts.stdlib.add("from typing import Annotated")
    parts.third_party |= {"from pydantic import BaseModel, Field", "from mcp_bindings.runtime.app.ui import Csp"}
    parts.sections.append(_render("app/ui.py.j2", dist_name=opts.dist_name))
    parts.test_stdlib.add("import json")
    parts.test_imports |= {
        models,
        "from mcp_bindings.runtime.app.testing import client_handlers",
        "from mcp_bindings.runtime.client.apps import declare_apps, list_apps, read_ui",
    }
    parts.tests.append(_render("tests/test_ui.py.j2", version=opts.protocol, dist_name=opts.dist_name))
    parts.smoke += [
        'result = await client.call_tool(name="show_greeting", arguments={"name": "Ada"})',
        'assert "Hello, Ada!" in result.content[0].text',
    ]
    parts.typed_smoke += [
        'result = await client.call_tool(name="show_greeting", arguments={"name": "Ada"})',
        "assert result.is_error is not True and len(result.content) == 1",
    ]
    parts.feature_notes.append("`show_greeting`: a tool that opens a UI (MCP Apps): its view, `VIEW_URI`")


def _skills(opts: ScaffoldOptions, parts: _Parts) -> None:
    parts.stdlib.add("from pathlib import Path")
    parts.sections.append(_render("app/skills.py.j2"))
    parts.test_stdlib.add("import hashlib")
    parts.test_imports |= {
        f"from mcp_bindings.{_version_package(opts.protocol)} import models as m",
        "from mcp_bindings.runtime.errors import McpError",
        "from mcp_bindings.runtime.client.skills import get_skill, list_skills",
    }
    parts.tests.append(_render("tests/test_skills.py.j2"))
    parts.smoke += [
        f'read = await client.read_resource(uri="{SKILL_URI}")',
        'assert read.contents[0].text.startswith("---\\nname: getting-started")',
    ]
    parts.typed_smoke += [
        f'read = await client.read_resource(uri="{SKILL_URI}")',
        f'assert read.contents[0].uri == "{SKILL_URI}"',
    ]
    parts.feature_notes.append(f"`{SKILL_URI}`: an Agent Skill in the watched skills/ folder (Skills)")


def _logging(opts: ScaffoldOptions, parts: _Parts) -> None:
    first = _first_feature(opts)
    action = {
        "tools": 'await client.call_tool(name="add", arguments={"a": 2, "b": 3})',
        "prompts": 'await client.get_prompt(name="greet", arguments={"name": "Ada"})',
        "resources": 'await client.read_resource(uri="example://about")',
    }[first]
    parts.test_stdlib.add("from typing import Any")
    parts.tests.append(_render("tests/test_logging.py.j2", action=action))
    parts.feature_notes.append(f"logging: the `{first}` example sends the client a log message (`ctx.info`)")


def _main(opts: ScaffoldOptions) -> str:
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
    serve_http = 'app.run("http", host=args.host, port=args.port, path=args.path)'
    serve_stdio = "app.run()  # stdio"
    if len(transports) == 2:
        serve = ['    if args.transport == "http":', f"        {serve_http}", "    else:", f"        {serve_stdio}"]
    else:
        serve = [f"    {serve_http if transports == ('http',) else serve_stdio}"]
    what = {"stdio": "over stdio", "http": "over Streamable HTTP"}
    description = f"{opts.dist_name}: an MCP server " + " or ".join(what[t] for t in transports)
    one_line = f'    parser = argparse.ArgumentParser(description="{description}")'
    split = description.index(": ") + 2  # after the name: two string literals if one is too long
    parser = (
        [one_line]
        if len(one_line) <= LINE_LENGTH
        else [
            "    parser = argparse.ArgumentParser(",
            f'        description="{description}"'
            if len(description) + 22 <= LINE_LENGTH
            else f'        description="{description[:split]}"\n        "{description[split:]}"',
            "    )",
        ]
    )
    return _render(
        "app/main.py.j2",
        parser=parser,
        arguments=arguments,
        parse="    args = parser.parse_args(argv)" if "http" in transports else "    parser.parse_args(argv)",
        serve=serve,
    )


def build_files(opts: ScaffoldOptions) -> dict[str, str]:
    """Relative path -> content of every file of the project."""
    pkg = opts.package
    common = {"version": opts.protocol, "package": pkg}
    parts = _Parts()
    parts.stdlib.add("import argparse")
    app_names = "App, Context" if "logging" in opts.features else "App"
    parts.third_party.add(f"from mcp_bindings.runtime.app import {app_names}")
    # The feature tests use the version's typed `Client` (`app.test_client(Client)`): pyright strict
    # sees a misspelled call in them.
    parts.test_imports |= {
        "import pytest",
        "from mcp_bindings.runtime import registry",
        f"from mcp_bindings.{_version_package(opts.protocol)}.client import Client",
    }
    builders = {
        "tools": _tools,
        "resources": _resources,
        "prompts": _prompts,
        "completion": _completion,
        "logging": _logging,
        "ui": _ui,
        "skills": _skills,
    }
    for feature in opts.features:
        builders[feature](opts, parts)
    if "skills" in opts.features:  # written last: it lists what the server offers
        parts.files[f"src/{pkg}/skills/getting-started/SKILL.md"] = _render(
            "skills/SKILL.md.j2", dist_name=opts.dist_name, features=parts.feature_notes
        )
    head = _render(
        "app/head.py.j2",
        version=opts.protocol,
        dist_name=opts.dist_name,
        app_options="" if "logging" in opts.features else ", logging=False",
    )
    parts.sections.append(_main(opts))

    run_lines = _run_lines(opts)
    files: dict[str, str] = {}
    files[f"src/{pkg}/server.py"] = _render(
        "server.py.j2",
        doc={
            "dist_name": opts.dist_name,
            "version": opts.protocol,
            "run_lines": run_lines,
            "features": parts.feature_notes,
        },
        imports=_import_block(parts.stdlib, parts.third_party, first_party=set()),
        first_section=head,
        sections=parts.sections,
    )
    files[f"src/{pkg}/__init__.py"] = _render("package_init.py.j2", dist_name=opts.dist_name, version=opts.protocol)
    files[f"src/{pkg}/__main__.py"] = _render("main.py.j2", package=pkg, dist_name=opts.dist_name)
    files[f"src/{pkg}/py.typed"] = ""
    files["tests/conftest.py"] = _render("tests/conftest.py.j2")
    files["tests/test_server.py"] = _render(
        "tests/test_server.py.j2",
        imports=_import_block(parts.test_stdlib, parts.test_imports, first_party={f"from {pkg}.server import app"}),
        tests=parts.tests,
        smoke=["        " + line for line in parts.smoke],
        **common,
    )
    package = _version_package(opts.protocol)
    client_imports = {
        "import anyio",
        "import pytest",
        f"from mcp_bindings.{package}.client import Client",
    }
    transport_smoke = ["            " + line for line in parts.typed_smoke]
    if "stdio" in opts.transports:
        files["tests/test_stdio.py"] = _render(
            "tests/test_stdio.py.j2",
            imports=_import_block(
                {"import sys"},
                client_imports | {"from mcp_bindings.runtime.stdio import connect_stdio"},
                first_party=set(),
            ),
            smoke=transport_smoke,
            **common,
        )
    if "http" in opts.transports:
        files["tests/test_http.py"] = _render(
            "tests/test_http.py.j2",
            imports=_import_block(
                {
                    "import re",
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
            smoke=transport_smoke,
            **common,
        )
    files["pyproject.toml"] = _render(
        "pyproject.toml.j2",
        dist_name=opts.dist_name,
        project_version=PROJECT_VERSION,
        package=pkg,
        version=opts.protocol,
        requirements=[opts.requirement, *([opts.version_requirement] if opts.version_requirement else [])],
        hatch_metadata=(
            [
                "",
                "[tool.hatch.metadata]",
                "allow-direct-references = true  # a requirement is a path or URL (where it was installed from)",
            ]
            if opts.direct_reference or " @ " in (opts.version_requirement or "")
            else []
        ),
    )
    files["README.md"] = _render("README.md.j2", **_readme_context(opts, parts.feature_notes, run_lines))
    files["server.json"] = _server_json(opts)
    files[".gitignore"] = _render("gitignore.j2")
    files.update(parts.files)
    files = {path: text + "\n" if text else text for path, text in files.items()}
    from .format import format_python  # black comes with the `generator` extra, as jinja2 (`_render`)

    # The project's own `ruff format` agrees with black at its line length: code lines that a long
    # project name makes too long are wrapped here (names in prose are laid out by the templates).
    return {path: format_python(text, path) if path.endswith(".py") else text for path, text in files.items()}


def _server_json(opts: ScaffoldOptions) -> str:
    import json

    from .registry import server_entry

    description = f"An MCP server (protocol {opts.protocol}) built on mcp-bindgen's typed bindings"
    entry = server_entry(
        name=opts.registry_name,
        description=description,
        version=PROJECT_VERSION,
        package=opts.dist_name,
        transport=opts.transport,
    )
    return json.dumps(entry, indent=2)


def _version_package(version: str) -> str:
    return available_versions()[version]


def _run_lines(opts: ScaffoldOptions) -> list[str]:
    """`command  # what it does` lines, comments aligned."""
    lines = []
    if "stdio" in opts.transports:
        lines.append((opts.dist_name, "stdio: what an MCP client spawns"))
    if "http" in opts.transports:
        flag = "--transport http " if opts.transport == "both" else ""
        lines.append((f"{opts.dist_name} {flag}--port 3001", "Streamable HTTP on http://127.0.0.1:3001/mcp"))
    width = max(len(command) for command, _ in lines)
    if width + max(len(what) for _, what in lines) + 10 > LINE_LENGTH:  # a long name: comments above
        return [line for command, what in lines for line in (f"# {what}", command)]
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


def _readme_context(opts: ScaffoldOptions, features: list[str], run_lines: list[str]) -> dict[str, Any]:
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
    from .registry import mcp_name_line

    return {
        "dist_name": opts.dist_name,
        "registry_name": opts.registry_name,
        "mcp_name_line": mcp_name_line(opts.registry_name),
        "package": opts.package,
        "version": opts.protocol,
        "features": features,
        "run_lines": run_lines,
        "configs": configs,
        "requirement_note": _prose(f"The project {opts.requirement_note('`')}."),
        "version_lines": (
            [
                "",
                f"Protocol {opts.protocol} is not one of mcp-bindgen's own versions: it comes from",
                f"`{opts.version_requirement}` (made with `mcp-bindgen generate --package`), which the",
                f"project depends on too: {opts.holder_step()}.",
            ]
            if opts.version_requirement
            else []
        ),
        "http_command": [
            f".venv/bin/{opts.dist_name} " + ("--transport http " if opts.transport == "both" else "") + "--port 3001"
        ]
        if "http" in opts.transports
        else [],
    }


def _prose(text: str) -> list[str]:
    """`text` in lines of the README's width, never breaking a `code span` or a hyphenated word."""
    spans = re.split(r"(`[^`]*`)", text)
    kept = "".join(part.replace(" ", "\xa0") if part.startswith("`") else part for part in spans)
    lines = textwrap.wrap(kept, LINE_LENGTH, break_on_hyphens=False, break_long_words=False)
    return [line.replace("\xa0", " ") for line in lines]


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
