"""The MCP Apps snippets run as written: the README's server with a UI (as a stdio server, driven by a
host that declared the extension) and docs/extensions-apps.md's authoring and host examples."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.apps import call_app_tool, declare_apps, list_apps, read_ui
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2025_11_25.client import Client
from tests.support import REPO_ROOT
from tests.support.docs import pages

README = "\n".join(pages().values())  # the README and the site: the snippets may live on either
APPS_DOC = (REPO_ROOT / "docs" / "extensions-apps.md").read_text(encoding="utf-8")


def blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def only(text: str, marker: str) -> str:
    found = [b for b in blocks(text) if marker in b]
    assert len(found) == 1, f"{len(found)} blocks hold {marker!r}"
    return found[0]


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_readme_server_with_a_ui_is_served_as_written(tmp_path: Path) -> None:
    code = only(README, 'app = App("counter", version="1.0")')
    assert len(code.splitlines()) < 25
    server = tmp_path / "ui_server.py"
    server.write_text(code, encoding="utf-8")

    async def host() -> None:
        handlers = client_handlers("2025-11-25")
        declare_apps(handlers)
        async with connect_stdio([sys.executable, str(server)], Client, handlers=handlers, cwd=str(REPO_ROOT)) as c:
            apps = {a.name: a.visibility for a in await list_apps(c)}
            assert apps == {"counter": ("model", "app"), "increment": ("app",)}
            view = await read_ui(c, "ui://counter/view")
            assert "<output id='value'>" in view.html and view.meta is not None and view.meta.csp is not None
            assert (await call_app_tool(c, "increment", {"value": 1})).structured_content == {"value": 2}

    anyio.run(host)


def test_apps_doc_authoring_example_runs() -> None:
    code = only(APPS_DOC, 'app = App("dashboards", version="1.0")')
    check = (
        "\nimport anyio\n"
        "async def _check():\n"
        "    async with app.test_client('2026-07-28') as c:\n"
        "        print(sorted(t.name for t in (await c.list_tools()).tools))\n"
        "anyio.run(_check)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code + check], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip() == "['show']"
    )  # `refresh` is for the view only: this client did not declare the extension


@pytest.mark.parametrize("marker", ['command = [sys.executable, "examples/app_ui_server.py"]'])
def test_apps_doc_host_example_runs(marker: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", only(APPS_DOC, marker)],
        cwd=REPO_ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "counter ui://counter/view ('model', 'app')",
        "increment ui://counter/view ('app',)",
        "True True",
        "{'value': 2}",
    ]


def test_every_apps_doc_snippet_is_run() -> None:
    claimed = ['app = App("dashboards", version="1.0")', 'command = [sys.executable, "examples/app_ui_server.py"]']
    assert all(any(m in b for m in claimed) for b in blocks(APPS_DOC))


def test_readme_server_with_skills_is_served_as_written(tmp_path: Path) -> None:
    from mcp_bindings.runtime.client.skills import download_skill, list_skills
    from mcp_bindings.v2026_07_28.client import Client as Client2026

    code = only(README, 'app = App("skills-demo", version="1.0")')
    assert len(code.splitlines()) < 25
    server = tmp_path / "skills_server.py"
    server.write_text(code, encoding="utf-8")

    async def host() -> None:
        async with connect_stdio([sys.executable, str(server)], Client2026, cwd=str(REPO_ROOT)) as c:
            listed = {s.uri: s.resources for s in await list_skills(c)}
            assert listed["skill://reports/daily/SKILL.md"] == "dynamic"
            assert "skill://acme/billing/refunds/SKILL.md" in listed
            dest = await download_skill(c, "skill://acme/billing/refunds/SKILL.md", tmp_path / "refunds")
            assert (dest / "examples" / "email.md").is_file()

    anyio.run(host)


SKILLS_DOC = (REPO_ROOT / "docs" / "extensions-skills.md").read_text(encoding="utf-8")


def test_skills_doc_authoring_example_runs() -> None:
    code = only(SKILLS_DOC, 'app = App("team-skills", version="1.0")')
    check = (
        "\nimport anyio\n"
        "from mcp_bindings.runtime.client.skills import list_skills\n"
        "async def _check():\n"
        "    async with app.test_client('2025-11-25') as c:\n"
        "        print(sorted((s.frontmatter.name, s.resources == 'dynamic') for s in await list_skills(c)))\n"
        "anyio.run(_check)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code + check], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "[('git-workflow', False), ('pdf-processing', False), ('refunds', False), ('weekly', True)]"
    )


def test_skills_doc_client_example_runs() -> None:
    code = only(SKILLS_DOC, 'connect_stdio([sys.executable, "examples/skills_server.py"], Client)')
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refunds skill://acme/billing/refunds/SKILL.md",
        "git-workflow skill://git-workflow/SKILL.md",
        "pdf-processing skill://pdf-processing/SKILL.md",
        "daily skill://reports/daily/SKILL.md",
        "Apache-2.0",
        "['skill://pdf-processing/templates/invoice.md', 'skill://pdf-processing/templates/regional']",
        "['SKILL.md', 'examples/email.md']",
    ]


def test_skills_doc_watch_example_runs() -> None:
    code = only(SKILLS_DOC, 'app = App("live-skills", version="1.0")')
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['skill://release-notes/SKILL.md']"]


def test_every_skills_doc_snippet_is_run() -> None:
    claimed = [
        'app = App("team-skills", version="1.0")',
        'app = App("live-skills", version="1.0")',
        'connect_stdio([sys.executable, "examples/skills_server.py"], Client)',
    ]
    assert all(any(m in b for m in claimed) for b in blocks(SKILLS_DOC))


def test_the_docs_scaffold_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mcp-bindgen new ... --features ...ui/skills` as docs/cli.md and the two extension pages write it."""
    import shlex

    from mcp_bindgen.cli import main

    texts = [(REPO_ROOT / "docs" / name).read_text(encoding="utf-8") for name in ("cli.md",)]
    texts += [APPS_DOC, SKILLS_DOC]
    commands = sorted(
        {c for text in texts for c in re.findall(r"`(mcp-bindgen new dashboard --features [a-z,]+)`", text)}
    )
    assert commands == [
        "mcp-bindgen new dashboard --features tools,skills",
        "mcp-bindgen new dashboard --features tools,ui",
        "mcp-bindgen new dashboard --features tools,ui,skills",
    ]
    for index, command in enumerate(commands):
        work = tmp_path / str(index)
        work.mkdir()
        monkeypatch.chdir(work)
        assert main(shlex.split(command)[1:]) == 0
        package = work / "dashboard" / "src" / "dashboard"
        server = (package / "server.py").read_text(encoding="utf-8")
        features = command.rsplit(" ", 1)[1].split(",")
        assert ("@app.ui_tool(VIEW_URI)" in server) == ("ui" in features)
        assert (package / "skills" / "getting-started" / "SKILL.md").is_file() == ("skills" in features)
