"""`mcp-bindgen new`: the scaffolded project (a server on the authoring layer, `mcp_bindings.runtime.app`)
is ruff-clean, pyright-strict-clean and its own tests pass, for every pinned protocol version and
several feature / transport mixes; its server code is the same for every version; names, paths and the
mcp-bindgen requirement are validated; and (slow) a project installed in a fresh virtual environment
against this checkout passes its tests and serves the official MCP Python SDK client over stdio and
Streamable HTTP."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen import __version__
from mcp_bindgen.cli import main
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.scaffold import (
    ScaffoldOptions,
    bindgen_requirement,
    build_files,
    scaffold,
    validate_name,
)
from tests.support import REPO_ROOT, announced_url
from tests.support.sdk import SDK_VENV, create_sdk_venv

ALL = "tools,resources,prompts,completion,logging"
# (protocol, transport, features): every version with everything, plus subsets that change the shape.
PROJECTS = [
    ("2024-11-05", "both", ALL),
    ("2025-03-26", "stdio", "tools,prompts,completion"),
    ("2025-06-18", "http", "resources,completion,logging"),
    ("2025-11-25", "both", ALL),
    ("2026-07-28", "both", ALL),
    ("2026-07-28", "stdio", "prompts,logging"),
    # The extensions (issue 31): a tool opening an MCP Apps UI, a skills/ folder served.
    ("2025-11-25", "both", ALL + ",ui,skills"),
    ("2024-11-05", "http", "ui"),
    ("2026-07-28", "stdio", "skills"),
]
# Three of them take a long name: every line the name appears in must still be ruff-clean (a name of 13
# characters or more used to push generated lines past the project's line length).
LONG_NAME = "a-rather-long-project-name-that-wraps-every-line"
LONG_NAMED = {1, 3, 5, 7}
OFFICIAL_REQUIREMENTS = ("mcp==2.3.0", "mcp-types==2.3.0")
OFFICIAL_VENVS = (REPO_ROOT / ".cache" / "bench" / "official-venv", SDK_VENV)


def _project_id(spec: tuple[str, str, str]) -> str:
    protocol, transport, features = spec
    return f"{protocol}-{transport}-{'all' if features == ALL else features.replace(',', '+')}"


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would leak the checkout into a child interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(extra)
    return env


def _run(command: list[str], *, cwd: Path | None = None, timeout: float, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        command, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} exited {result.returncode}:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
        )
    return result.stdout


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("scaffold")
    out = {}
    for index, spec in enumerate(PROJECTS):
        protocol, transport, features = spec
        path = root / f"proj-{index}"
        code = main(
            [
                "new",
                str(path),
                "--protocol",
                protocol,
                "--transport",
                transport,
                "--features",
                features,
                "--bindgen",
                str(REPO_ROOT),
                *(["--name", f"{LONG_NAME}-{index}"] if index in LONG_NAMED else []),
            ]
        )
        assert code == 0
        out[_project_id(spec)] = path
    return out


# -- the scaffolded projects ---------------------------------------------------------------------


def _ruff() -> list[str]:
    if importlib.util.find_spec("ruff") is None:
        pytest.fail("ruff is not installed: it is in the `test` extra (pip install -e '.[test]')")
    return [sys.executable, "-m", "ruff"]


def test_projects_are_ruff_clean(projects: dict[str, Path]) -> None:
    root = next(iter(projects.values())).parent
    # Each project's own [tool.ruff] applies (ruff reads the closest pyproject.toml of every file).
    _run([*_ruff(), "check", "--no-cache", str(root)], timeout=120)
    _run([*_ruff(), "format", "--check", "--no-cache", str(root)], timeout=120)


def _pyright_strict(root: Path, paths: list[Path]) -> dict[str, Any]:
    """pyright strict over the `src` and `tests` of the projects at `paths` (under `root`): its report."""
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("the `pyright` package is not installed (pip install -e '.[test]')")
    config = {
        "include": [f"{p.name}/{d}" for p in paths for d in ("src", "tests")],
        "extraPaths": [f"{p.name}/src" for p in paths],
        "pythonVersion": "3.11",
        "typeCheckingMode": "strict",
    }
    (root / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    env = _clean_env(PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "--outputjson",
            "--project",
            str(root / "pyrightconfig.json"),
            "--pythonpath",
            sys.executable,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    try:
        report: dict[str, Any] = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.skip(f"pyright cannot run here: {(result.stderr or result.stdout)[-500:]}")
    return report


def _errors(report: dict[str, Any]) -> list[str]:
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report.get("generalDiagnostics", [])
        if d.get("severity") == "error"
    ]


def test_projects_are_pyright_strict_clean(projects: dict[str, Path]) -> None:
    for path in projects.values():  # what the project itself asks pyright for
        settings = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pyright"]
        assert settings["typeCheckingMode"] == "strict" and settings["include"] == ["src", "tests"]
    # One pyright run over every project, with those settings (one run per project costs ~8 s each);
    # pyright wants the config's paths relative to it, so it sits beside the projects.
    report = _pyright_strict(next(iter(projects.values())).parent, list(projects.values()))
    assert report["summary"]["filesAnalyzed"] >= 3 * len(projects)
    assert not _errors(report), "\n".join(_errors(report))


def test_a_misspelled_call_in_a_project_test_fails_pyright(projects: dict[str, Path], tmp_path: Path) -> None:
    """The project's tests use the version's typed `Client` (`app.test_client(Client)`): a call to a
    method or with an argument the version does not have is a pyright error, not a passing check."""
    path = shutil.copytree(projects["2025-11-25-both-all"], tmp_path / "misspelled")
    tests = path / "tests" / "test_server.py"
    source = tests.read_text(encoding="utf-8")
    typo = source.replace(
        'await client.call_tool(name="subtract", arguments={})', 'await client.cal_tool(name="subtract")'
    )
    typo = typo.replace('await client.get_prompt(name="greet", arguments={})', 'await client.get_prompt(nme="greet")')
    assert typo.count("cal_tool") == 1 and typo.count("nme=") == 1
    tests.write_text(typo, encoding="utf-8")
    errors = _errors(_pyright_strict(tmp_path, [path]))
    assert any('Cannot access attribute "cal_tool" for class "Client"' in e for e in errors), errors
    assert any('No parameter named "nme"' in e for e in errors), errors


@pytest.mark.parametrize("spec", PROJECTS, ids=_project_id)
def test_project_tests_pass(projects: dict[str, Path], spec: tuple[str, str, str]) -> None:
    """The project's own tests (in-memory, then a spawned stdio process and/or uvicorn on a free
    port), run with this environment's mcp-bindgen instead of an installed copy."""
    path = projects[_project_id(spec)]
    env = _clean_env(PYTHONPATH=os.pathsep.join([str(path / "src"), *sys.path[1:]]))
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=path, timeout=180, env=env)
    assert " passed" in out and "failed" not in out


def _server(projects: dict[str, Path], spec: tuple[str, str, str]) -> str:
    path = projects[_project_id(spec)]
    return next((path / "src").glob("*/server.py")).read_text(encoding="utf-8")


def test_the_server_is_the_same_on_every_version(projects: dict[str, Path]) -> None:
    """On the layer, only `protocol=` (and the version in the docstring) says which version the app is
    written against: the 2024-11-05 and 2026-07-28 servers with every feature are otherwise the same."""
    old = _server(projects, PROJECTS[0]).replace("2024-11-05", "VERSION").replace("proj-0", "NAME")
    new = _server(projects, PROJECTS[4]).replace("2026-07-28", "VERSION").replace("proj-4", "NAME")
    assert old == new
    assert 'app = App("NAME", version="0.1.0", protocol="VERSION")' in new
    assert "@app.tool" in new and "@app.complete(" in new and "await ctx.info(" in new
    assert "logging=False" in _server(projects, PROJECTS[1])  # no logging chosen
    assert "Context" not in _server(projects, PROJECTS[1])
    tests = (projects[_project_id(PROJECTS[4])] / "tests" / "test_server.py").read_text(encoding="utf-8")
    assert "VERSIONS = list(registry.versions())" in tests  # the app is tested at every version


def test_pyproject_readme_and_layout(tmp_path: Path) -> None:
    target = tmp_path / "weather_server"
    assert main(["new", str(target), "--transport", "both", "--bindgen", str(REPO_ROOT)]) == 0
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == [
        ".gitignore",
        "README.md",
        "pyproject.toml",
        "server.json",
        "src/weather_server/__init__.py",
        "src/weather_server/__main__.py",
        "src/weather_server/py.typed",
        "src/weather_server/server.py",
        "tests/conftest.py",
        "tests/test_http.py",
        "tests/test_server.py",
        "tests/test_stdio.py",
    ]
    pyproject = tomllib.loads((target / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    assert project["name"] == "weather-server"
    assert project["dependencies"] == [f"mcp-bindgen[http,runtime] @ {REPO_ROOT.as_uri()}"]
    assert project["scripts"] == {"weather-server": "weather_server.server:main"}
    assert "pytest>=8" in project["optional-dependencies"]["test"]
    assert pyproject["tool"]["hatch"]["metadata"]["allow-direct-references"] is True
    # The HTTP test's server binds its port once (port 0) and says where: the test picks none to
    # close and hand over, which another process could take in between (issue 45, item 1).
    http_test = (target / "tests" / "test_http.py").read_text(encoding="utf-8")
    assert '"--port", "0"]' in http_test and ".bind(" not in http_test and "free_port" not in http_test
    readme = (target / "README.md").read_text(encoding="utf-8")
    assert f'"command": "{target / ".venv" / "bin" / "weather-server"}"' in readme
    assert '"url": "http://127.0.0.1:3001/mcp"' in readme
    assert "## Regenerate after a spec upgrade" in readme and "mcp-bindgen diff 2026-07-28" in readme
    assert pyproject["tool"]["pyright"]["venvPath"] == "." and pyproject["tool"]["pyright"]["venv"] == ".venv"
    assert "--bindgen /path/to/mcp-bindgen" in readme
    server = (target / "src" / "weather_server" / "server.py").read_text(encoding="utf-8")
    assert 'app = App("weather-server", version="0.1.0", protocol="2026-07-28")' in server
    assert "from mcp_bindings.runtime.app import App, Context" in server


def test_the_extension_features_add_their_files_requirement_and_tests(tmp_path: Path) -> None:
    target = tmp_path / "dashboard"
    assert main(["new", str(target), "--features", "ui,skills", "--bindgen", str(REPO_ROOT)]) == 0
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert "src/dashboard/skills/getting-started/SKILL.md" in files
    skill = (target / "src" / "dashboard" / "skills" / "getting-started" / "SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: getting-started\ndescription: How to use the dashboard MCP server.")
    pyproject = tomllib.loads((target / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["dependencies"] == [f"mcp-bindgen[runtime,skills] @ {REPO_ROOT.as_uri()}"]
    server = (target / "src" / "dashboard" / "server.py").read_text(encoding="utf-8")
    assert "@app.ui_tool(VIEW_URI)" in server and 'VIEW_URI = "ui://dashboard/greeting"' in server
    assert 'app.skills(Path(__file__).parent / "skills")' in server
    assert "@app.tool\n" not in server and "@app.prompt" not in server  # only what was asked for
    tests = (target / "tests" / "test_server.py").read_text(encoding="utf-8")
    assert "async def test_the_tool_opens_its_ui()" in tests and "async def test_the_skills_folder_is_served()" in tests


def test_new_help_shows_the_extension_features(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    out = capsys.readouterr().out
    assert "mcp-bindgen new dashboard --features tools,ui,skills" in out
    assert "ui (a tool opening an MCP Apps UI) and skills (a skills/ folder served)" in " ".join(out.split())


@pytest.mark.parametrize(("transport", "extras"), [("stdio", "runtime"), ("http", "http"), ("both", "http,runtime")])
def test_requirement_follows_the_transport(transport: str, extras: str) -> None:
    assert bindgen_requirement(
        "0.1.0", {"stdio": ["runtime"], "http": ["http"], "both": ["runtime", "http"]}[transport]
    ) == (f"mcp-bindgen[{extras}]==0.1.0", False)


def test_bindgen_spec_forms(tmp_path: Path) -> None:
    extras = ["runtime"]
    assert bindgen_requirement(str(REPO_ROOT), extras) == (f"mcp-bindgen[runtime] @ {REPO_ROOT.as_uri()}", True)
    assert bindgen_requirement(REPO_ROOT.as_uri(), extras) == (f"mcp-bindgen[runtime] @ {REPO_ROOT.as_uri()}", True)
    assert bindgen_requirement("v1.2.0", extras) == ("mcp-bindgen[runtime]==1.2.0", False)
    assert bindgen_requirement(">=0.1,<0.3", extras) == ("mcp-bindgen[runtime]>=0.1,<0.3", False)
    assert bindgen_requirement("git+https://example.org/mcp-bindgen.git@v1", extras) == (
        "mcp-bindgen[runtime] @ git+https://example.org/mcp-bindgen.git@v1",
        True,
    )
    assert bindgen_requirement("mcp-bindgen[http]~=0.1", extras) == ("mcp-bindgen[http]~=0.1", False)
    # No spec: this version, from the package index (`new` first takes where mcp-bindgen was installed
    # from: tests/generator/test_origin.py).
    assert bindgen_requirement(None, extras) == (f"mcp-bindgen[runtime]=={__version__}", False)
    with pytest.raises(BindgenError, match="no mcp-bindgen project"):
        bindgen_requirement(str(tmp_path), extras)
    with pytest.raises(BindgenError, match="neither a path, a URL, a version"):
        bindgen_requirement("latest please", extras)
    written = build_files(
        ScaffoldOptions.from_cli(path=tmp_path / "x", bindgen="0.1.0", transport="stdio", features="tools")
    )
    assert '"mcp-bindgen[runtime]==0.1.0"' in written["pyproject.toml"]
    assert "allow-direct-references" not in written["pyproject.toml"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("-server", "not a valid distribution name"),
        ("my server", "not a valid distribution name"),
        ("my_server!", "not a valid distribution name"),
        ("9lives", "not a Python identifier"),
        ("class", "Python keyword"),
        ("json", "would shadow"),
        ("mcp-bindings", "would shadow"),
        ("tests", "would shadow"),
    ],
)
def test_invalid_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(BindgenError, match=message):
        validate_name(name)


def test_names_are_normalised() -> None:
    assert validate_name("Weather.Server") == ("weather-server", "weather_server")
    assert validate_name("a") == ("a", "a")


def test_directory_name_is_the_default_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(tmp_path / "bad name")]) == 1
    err = capsys.readouterr().err
    assert "the directory name 'bad name'" in err and "--name" in err
    assert main(["new", str(tmp_path / "bad name"), "--name", "good-name", "--features", "tools"]) == 0
    assert (tmp_path / "bad name" / "src" / "good_name" / "server.py").is_file()


def test_non_empty_directory_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "existing"
    target.mkdir()
    (target / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["new", str(target)]) == 1
    assert "is not empty; pass --force" in capsys.readouterr().err
    assert not (target / "pyproject.toml").exists()
    assert main(["new", str(target), "--force"]) == 0
    assert (target / "pyproject.toml").is_file() and (target / "notes.txt").read_text(encoding="utf-8") == "keep me"
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    with pytest.raises(BindgenError, match="not a directory"):
        scaffold(ScaffoldOptions.from_cli(path=tmp_path / "a-file", force=True))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["new", str(empty)]) == 0  # an empty directory is fine


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "2023-01-01"], "is not a generated version"),
        (
            ["--features", "tools,sampling"],
            "unknown sampling (choose from tools, resources, prompts, completion, logging, ui, skills)",
        ),
        (["--features", "ui,logging"], "logging logs from the tools, prompts or resources example: add one"),
        (["--features", "logging"], "needs at least one of tools, resources, prompts"),
        (["--features", "tools,completion"], "completion completes a prompt argument"),
        (["--bindgen", "what?"], "neither a path, a URL"),
        (["--registry-name", "weather"], "--registry-name: 'weather' has no namespace"),
        (["--registry-name", "io.github.a/b/c"], "has more than one '/'"),
    ],
)
def test_bad_options_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["new", str(tmp_path / "p"), *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


# -- end to end: a fresh virtual environment and the official SDK -------------------------------------

OFFICIAL_DRIVER = '''
"""Drive a scaffolded server with the official MCP Python SDK client; print one JSON report each."""
import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def exercise(server, mode):
    report = {"mode": mode}
    async with Client(server, mode=mode, read_timeout_seconds=20) as client:
        report["protocol_version"] = client.protocol_version
        tools = await client.list_tools()
        report["tools"] = [t.name for t in tools.tools]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        report["call"] = {
            "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
            "structured": result.structured_content,
            "is_error": bool(result.is_error),
        }
        read = await client.read_resource("example://about")
        report["resource"] = [getattr(c, "text", None) for c in read.contents]
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        report["prompt"] = [getattr(m.content, "text", None) for m in prompt.messages]
    return report


async def main(spec):
    reports = []
    for entry in spec:
        if entry["transport"] == "stdio":
            server = StdioServerParameters(command=entry["command"][0], args=entry["command"][1:])
        else:
            server = entry["url"]
        with anyio.fail_after(60):
            reports.append({"transport": entry["transport"], **await exercise(server, entry["mode"])})
    print(json.dumps(reports))


anyio.run(main, json.loads(sys.argv[1]))
'''


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _official_python() -> Path:
    """An interpreter with the pinned official SDK: the benchmarks' venv when present, else the suite's
    (tests/support/sdk.py builds it once, under a lock shared with the `sdk_python` fixture)."""
    for venv in OFFICIAL_VENVS:
        python = _venv_python(venv)
        if python.is_file():
            probe = subprocess.run(
                [str(python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if probe.returncode == 0 and f"mcp=={probe.stdout.strip()}" in OFFICIAL_REQUIREMENTS:
                return python
    problem = create_sdk_venv()
    assert problem is None, problem
    return _venv_python(SDK_VENV)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Any]:
    """Start `command + [--port 0]` (it binds a port and says which) and yield its URL once it listens;
    stop it after."""
    started: list[subprocess.Popen[bytes]] = []
    log = tmp_path / "http-server.log"

    def start(command: list[str]) -> str:
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                [*command, "--port", "0"], stdout=subprocess.DEVNULL, stderr=stderr, env=_clean_env()
            )
        started.append(process)
        return announced_url(log, process)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_installed_project_serves_the_official_sdk(tmp_path: Path, http_server: Any) -> None:
    """Scaffold, install into a fresh venv against this checkout, run the project's tests, then let
    the official SDK client (mcp 2.3.0) list and call the tool, read the resource and get the prompt,
    over stdio and over Streamable HTTP, both in its default (2026-07-28 discover) and legacy
    (initialize handshake) modes. Phase timings are printed (pytest -s shows them)."""
    timings: dict[str, float] = {}
    mark = time.monotonic()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.monotonic()
        timings[name] = round(now - mark, 1)
        mark = now

    project = tmp_path / "hello-mcp"
    assert main(["new", str(project), "--transport", "both", "--bindgen", str(REPO_ROOT)]) == 0
    lap("scaffold")
    venv = tmp_path / "venv"
    # No ensurepip in the new venv (saves ~8 s): this interpreter's pip installs into it.
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(_venv_python(venv)),
            "install",
            "--quiet",
            "-e",
            f"{project}[test]",
        ],
        timeout=900,
    )
    lap("venv + pip install -e")
    out = _run([str(_venv_python(venv)), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, timeout=300)
    assert " passed" in out and "failed" not in out
    lap("project tests")
    official = _official_python()
    lap("official SDK venv")
    command = [str(venv / "bin" / "hello-mcp")]  # the console script, as in the README's client config
    url = http_server([*command, "--transport", "http"])
    driver = tmp_path / "official_client.py"
    driver.write_text(OFFICIAL_DRIVER, encoding="utf-8")
    spec = [
        {"transport": "stdio", "mode": "auto", "command": command},
        {"transport": "stdio", "mode": "legacy", "command": command},
        {"transport": "http", "mode": "auto", "url": url},
        {"transport": "http", "mode": "legacy", "url": url},
    ]
    reports = json.loads(_run([str(official), str(driver), json.dumps(spec)], cwd=tmp_path, timeout=300))
    lap("official SDK client")
    assert [(r["transport"], r["protocol_version"]) for r in reports] == [
        ("stdio", "2026-07-28"),
        ("stdio", "2025-11-25"),
        ("http", "2026-07-28"),
        ("http", "2025-11-25"),
    ]
    for report in reports:
        assert report["tools"] == ["add"]
        assert report["call"] == {"text": ['{"total":5}'], "structured": {"total": 5}, "is_error": False}
        assert report["resource"] == ["hello-mcp 0.1.0: an MCP server built with mcp-bindgen."]
        assert report["prompt"] == ["Write a short, friendly greeting for Ada."]
    print(f"\nscaffold end-to-end timings (s): {timings}, total {round(sum(timings.values()), 1)}")
