"""Search hit rates on a real API's catalog: GitHub's REST description (npm ``@octokit/openapi``,
pinned below) lowered into tools by the project's OpenAPI generator (``mcp_bindgen.openapi``: the
tools ``mcp-bindgen openapi`` would serve, one per operation), served behind ours' ``ToolSearch``
and FastMCP's ``BM25SearchTransform`` (``ours_catalog_server.py --search``, ``peers/fastmcp_catalog_server.py
--search``, stdio) and searched with the same queries; top-1 / top-5 hit rates of each.

Two query sets. ``tasks``: requests as a user words them (below, written for this benchmark
without looking at either engine's answers), each with the operation(s) that do it. ``summaries``:
every operation's own summary as the query (an answer counts when it is any operation with that
summary: several share one), a mechanical set over the whole catalog.

    .venv/bin/python -m benchmarks.curves.hits [--description api.github.com.json] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.config import CACHE_DIR, RESULTS_DIR
from benchmarks.curves.catalog import catalog_server
from benchmarks.curves.common import Ids, call, timed_stdio
from benchmarks.driver import DriverError, StdioClient
from benchmarks.procs import stop_all
from benchmarks.setup_env import prepare

PACKAGE = "@octokit/openapi@23.0.2"
DESCRIPTION = "generated/api.github.com.json"
ENGINES = {"ours": "ours (ToolSearch, bm25s)", "fastmcp": "FastMCP 4.2.3 (BM25SearchTransform)"}
TOP = 5  # both engines answer five tools a search by default

# (request, the operationIds that do it)
TASKS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (query, frozenset(ids))
    for query, ids in (
        ("star a repository for the signed-in user", {"activity/star-repo-for-authenticated-user"}),
        ("open a new issue in a repository", {"issues/create"}),
        ("add labels to an issue", {"issues/add-labels"}),
        ("merge a pull request", {"pulls/merge"}),
        ("list the open pull requests of a repository", {"pulls/list"}),
        ("request reviewers for a pull request", {"pulls/request-reviewers"}),
        ("create a gist", {"gists/create"}),
        ("fork a repository", {"repos/create-fork"}),
        ("delete a repository", {"repos/delete"}),
        ("get the README of a repository", {"repos/get-readme"}),
        ("download the logs of a workflow run", {"actions/download-workflow-run-logs"}),
        ("re-run a failed workflow", {"actions/re-run-workflow", "actions/re-run-workflow-failed-jobs"}),
        ("cancel a running workflow", {"actions/cancel-workflow-run"}),
        ("trigger a workflow manually with a dispatch event", {"actions/create-workflow-dispatch"}),
        ("list the members of an organization", {"orgs/list-members"}),
        ("invite someone to join an organization", {"orgs/create-invitation"}),
        ("add a collaborator to a repository", {"repos/add-collaborator"}),
        ("publish a new release", {"repos/create-release"}),
        ("upload an asset to a release", {"repos/upload-release-asset"}),
        ("protect a branch with required reviews", {"repos/update-branch-protection"}),
        ("create a webhook for a repository", {"repos/create-webhook"}),
        ("search code across GitHub", {"search/code"}),
        ("search for issues and pull requests", {"search/issues-and-pull-requests"}),
        ("comment on an issue", {"issues/create-comment"}),
        ("lock the conversation of an issue", {"issues/lock"}),
        ("get the profile of the authenticated user", {"users/get-authenticated"}),
        ("follow a user", {"users/follow"}),
        ("list the repositories of a user", {"repos/list-for-user"}),
        ("create a repository in an organization", {"repos/create-in-org"}),
        ("read the contents of a file in a repository", {"repos/get-content"}),
        ("create or update a file in a repository", {"repos/create-or-update-file-contents"}),
        ("compare two commits", {"repos/compare-commits"}),
        ("list the branches of a repository", {"repos/list-branches"}),
        ("rename a branch", {"repos/rename-branch"}),
        ("add a deploy key to a repository", {"repos/create-deploy-key"}),
        ("add an SSH key to my account", {"users/create-public-ssh-key-for-authenticated-user"}),
        ("mark all notifications as read", {"activity/mark-notifications-as-read"}),
        ("list the Dependabot alerts of a repository", {"dependabot/list-alerts-for-repo"}),
        ("list code scanning alerts for a repository", {"code-scanning/list-alerts-for-repo"}),
        ("set a secret for GitHub Actions in a repository", {"actions/create-or-update-repo-secret"}),
        ("check my API rate limit", {"rate-limit/get"}),
        ("render Markdown as HTML", {"markdown/render"}),
        ("create a check run for a commit", {"checks/create"}),
        ("set the status of a commit", {"repos/create-commit-status"}),
        ("list the teams of an organization", {"teams/list"}),
        ("add a member to a team", {"teams/add-or-update-membership-for-user-in-org"}),
        ("transfer a repository to another owner", {"repos/transfer"}),
        ("list who starred a repository", {"activity/list-stargazers-for-repo"}),
        ("create an annotated tag object", {"git/create-tag"}),
        ("get a single commit", {"repos/get-commit"}),
    )
)


def description_path(given: Path | None) -> Path:
    """GitHub's REST description: `given`, or the pinned npm package unpacked under .cache/bench."""
    if given is not None:
        return given
    folder = CACHE_DIR / "octokit"
    path = folder / "package" / DESCRIPTION
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        packed = subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=folder, capture_output=True, text=True)
        if packed.returncode != 0:
            raise DriverError(f"npm pack {PACKAGE} failed: {packed.stderr.strip()[-500:]}")
        tarball = folder / packed.stdout.strip().splitlines()[-1]
        subprocess.run(["tar", "xzf", str(tarball)], cwd=folder, check=True)
    return path


def _flat(schema: Any) -> Any:
    """A definition without references (each referenced part an object, its description kept): a
    tool's input schema standing alone, as a catalog file holds it."""
    if isinstance(schema, Mapping):
        node: Mapping[str, Any] = schema
        if "$ref" in json.dumps(node):
            if "properties" in node:
                return {**node, "properties": {k: _flat(v) for k, v in node["properties"].items()}}
            kept = {k: node[k] for k in ("description",) if k in node}
            return {"type": "object", **kept}
        return dict(node)
    return schema


def github_catalog(path: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The tools (name, description, input schema) and each operationId's tool name."""
    from mcp_bindgen.openapi import build_ir
    from mcp_bindings.openapi.lower import Options

    ir = build_ir(str(path), Options(name="github"))
    tools = [
        {"name": op.tool, "description": op.description, "inputSchema": _flat(ir.schemas[op.arguments])}
        for op in ir.operations
    ]
    by_route = {(op.method.lower(), op.path): op.tool for op in ir.operations}
    raw = json.loads(path.read_text())
    ids = {
        op["operationId"]: by_route[(method, route)]
        for route, item in raw["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op and (method, route) in by_route
    }
    return tools, ids


def summaries(path: Path, ids: Mapping[str, str]) -> list[tuple[str, frozenset[str]]]:
    """Every distinct summary, with the tools of every operation that has it."""
    raw = json.loads(path.read_text())
    by_summary: dict[str, set[str]] = {}
    for item in raw["paths"].values():
        for op in item.values():
            if isinstance(op, dict) and op.get("summary") and "operationId" in op:
                by_summary.setdefault(op["summary"], set()).add(ids[op["operationId"]])
    return [(summary, frozenset(tools)) for summary, tools in by_summary.items()]


def found(result: Mapping[str, Any]) -> list[str]:
    """The tool names a search answered, best first (ours: structured `tools`; FastMCP: a JSON list)."""
    structured = result.get("structuredContent")
    if isinstance(structured, Mapping):
        listed = structured.get("tools", structured.get("result"))
    else:
        listed = json.loads(result["content"][0]["text"]) if result.get("content") else []
    if isinstance(listed, Mapping):
        listed = listed.get("tools", [])
    return [str(t["name"]) for t in listed]


def rank(client: StdioClient, ids: Ids, query: str) -> list[str]:
    req = ids()
    _, result = timed_stdio(client, call(req, "search_tools", {"query": query}), req, "search_tools")
    if result.get("isError"):
        raise DriverError(f"search_tools({query!r}) answered {str(result)[:300]}")
    return found(result)


def rates(answers: list[list[str]], sets: list[tuple[str, frozenset[str]]]) -> dict[str, float]:
    top1 = sum(1 for got, (_, want) in zip(answers, sets, strict=True) if got[:1] and got[0] in want)
    top5 = sum(1 for got, (_, want) in zip(answers, sets, strict=True) if want & set(got[:TOP]))
    return {"queries": len(sets), "top1": top1 / len(sets), "top5": top5 / len(sets)}


def main(argv: list[str] | None = None) -> int:
    about = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m benchmarks.curves.hits", description=about)
    parser.add_argument("--description", type=Path, help=f"GitHub's description (default: {PACKAGE}'s {DESCRIPTION})")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "curves", help="where hits.md and hits.json go")
    args = parser.parse_args(argv)
    path = description_path(args.description)
    tools, ids = github_catalog(path)
    sets = {"tasks": [(q, frozenset(ids[i] for i in want)) for q, want in TASKS], "summaries": summaries(path, ids)}
    env = prepare(need_mixed=False, need_fastmcp=True)
    results: dict[str, dict[str, Any]] = {}
    misses: dict[str, list[dict[str, Any]]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="hits-") as folder:
            catalog_file = Path(folder) / "github.json"
            catalog_file.write_text(json.dumps(tools))
            for engine in ENGINES:
                with catalog_server(env, engine, True, catalog_file, 300.0) as (_proc, client, _started):
                    counter = Ids()
                    for name, queries in sets.items():
                        answers = [rank(client, counter, query) for query, _ in queries]
                        results.setdefault(name, {})[engine] = rates(answers, queries)
                        if name == "tasks":
                            misses[engine] = [
                                {"query": q, "want": sorted(w), "got": got}
                                for got, (q, w) in zip(answers, queries, strict=True)
                                if not (w & set(got[:TOP]))
                            ]
    finally:
        stop_all()
    lines = [
        f"Search hit rates on GitHub's REST API ({PACKAGE}, {len(tools)} operations as tools, by "
        "mcp_bindgen.openapi), stdio, each engine's default of 5 results a search.",
        "",
        "| query set | queries | engine | top-1 | top-5 |",
        "|---|---|---|---|---|",
    ]
    for name, by_engine in results.items():
        for engine, got in by_engine.items():
            lines.append(f"| {name} | {got['queries']} | {ENGINES[engine]} | {got['top1']:.1%} | {got['top5']:.1%} |")
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hits.md").write_text(text)
    doc = {"package": PACKAGE, "tools": len(tools), "results": results, "task_misses": misses}
    (args.out / "hits.json").write_text(json.dumps(doc, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
