"""`call` arguments whose schema names no type of its own, such as an optional model
(`q: Point | None`: `anyOf: [{"$ref": ...}, {"type": "null"}]`), are JSON when they parse
(issue 45, item 6): `q='{"x":3,"y":4}'` is the object, not refused as "not null"."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import bindgen

SERVER = """
from pydantic import BaseModel
from mcp_bindings.runtime.app import App

app = App("objects")


class Point(BaseModel):
    x: int
    y: int


@app.tool
def move(p: Point, q: Point | None = None, path: list[Point] | None = None) -> str:
    \"\"\"Echo the points.\"\"\"
    return f"p={p.x},{p.y} q={q and (q.x, q.y)} path={[(s.x, s.y) for s in path or []]}"
"""


def test_object_and_array_arguments_are_json(tmp_path: Path) -> None:
    server = tmp_path / "objects.py"
    server.write_text(SERVER, encoding="utf-8")
    done = bindgen("call", server, "move", 'p={"x":1,"y":2}', 'q={"x":3,"y":4}', 'path=[{"x":5,"y":6}]')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "p=1,2 q=(3, 4) path=[(5, 6)]\n"
    none = bindgen("call", server, "move", 'p={"x":1,"y":2}', "q=null")
    assert none.returncode == 0 and none.stdout == "p=1,2 q=None path=[]\n", none.stderr
