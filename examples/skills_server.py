"""A Skills server on the authoring layer: the Agent Skills of examples/skills/ (skill:// resources,
skills/list, skills/get with digests, resources/directory/read) and one generated skill.

    python examples/skills_server.py                               # stdio
    python examples/skills_server.py --transport http --port 3001
    python examples/skills_server.py --directory my-skills/      # another folder of skills
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from mcp_bindings.runtime.app import App

SKILLS = Path(__file__).with_name("skills")


def make_app(directory: Path = SKILLS) -> App:
    app = App("skills-demo", version="1.0.0")
    app.skills(directory)

    @app.skill("skill://reports/daily/SKILL.md", description="Assemble today's operational report")
    def daily() -> str:
        return f"# Daily report\n\nToday is {datetime.date.today().isoformat()}.\n"

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--directory", type=Path, default=SKILLS, help="the folder of skills to serve")
    args = parser.parse_args()
    make_app(args.directory).run(args.transport, port=args.port)


if __name__ == "__main__":
    main()
