"""The Jinja2 environment: StrictUndefined, so a missing value is an error, never an empty string."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from ..paths import templates_dir


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
