"""One argument check per `@app.tool` call (issue 29, item 6): the runtime holds the arguments against
the inputSchema; the arguments model then runs only where it has something to convert or refuse."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, ValidationError, create_model

from mcp_bindings.runtime.app.arguments import arguments_reader
from mcp_bindings.runtime.app.signature import analyse


def plain(a: int, b: str = "x", c: float | None = None, d: bool = False, e: Any = 3) -> None: ...


def constrained(a: Annotated[int, Field(ge=0)]) -> None: ...


class Counting:
    """A model's validator that counts its calls."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.inner = model.__pydantic_validator__
        self.calls = 0

    def validate_python(self, value: Any) -> Any:
        self.calls += 1
        return self.inner.validate_python(value)


def _reader(fn: Any) -> tuple[Any, Counting, type[BaseModel]]:
    model = analyse(fn, "tool", model_name=f"{fn.__name__}Arguments").arguments
    counting = Counting(model)
    model.__pydantic_validator__ = counting  # type: ignore[assignment]
    return arguments_reader(model), counting, model


def test_plain_arguments_are_taken_as_given_with_defaults_and_no_second_validation() -> None:
    read, counting, _ = _reader(plain)
    marker = object()
    kwargs = read({"a": 1, "e": marker})
    assert kwargs == {"a": 1, "b": "x", "c": None, "d": False, "e": marker}
    assert kwargs["e"] is marker
    assert read({"a": 2, "b": "y", "c": 1.5, "d": True}) == {"a": 2, "b": "y", "c": 1.5, "d": True, "e": 3}
    assert counting.calls == 0


@pytest.mark.parametrize(
    "given",
    [
        {"a": 5.0},  # JSON Schema's integer admits 5.0; the function gets an int
        {"a": 1, "c": 2},  # an int for a float: a float
        {"a": "5"},  # the runtime's schema check refuses it first; the model alone converts it
        {},  # a required argument missing
        {"a": 1, "z": 0},  # an unknown argument
        {"a": True},
        {"a": None},
        [1],
    ],
)
def test_anything_else_goes_to_the_model_with_the_models_outcome(given: Any) -> None:
    read, counting, _ = _reader(plain)
    try:
        expected: Any = dict(counting.inner.validate_python(given).__dict__)
    except ValidationError as exc:
        expected = exc.errors()
    try:
        result: Any = read(given)
    except ValidationError as exc:
        result = exc.errors()
    assert result == expected
    if isinstance(expected, dict):
        assert [type(v) for v in result.values()] == [type(v) for v in expected.values()]
    assert counting.calls == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"a": (Annotated[int, Field(ge=0)], ...)},  # a constraint
        {"a": (list[int], ...)},  # a container
        {"a": (int, Field(..., alias="A"))},  # an alias
        {"a": (Any, [])},  # a mutable default
    ],
)
def test_signatures_the_model_must_convert_always_use_it(fields: dict[str, Any]) -> None:
    model = create_model("M", **fields)
    counting = Counting(model)
    model.__pydantic_validator__ = counting  # type: ignore[assignment]
    read = arguments_reader(model)
    try:
        read({"a": 1} if "alias" not in str(fields) else {"A": 1})
    except ValidationError:
        pass
    assert counting.calls == 1
