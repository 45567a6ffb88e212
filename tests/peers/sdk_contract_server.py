"""A FastMCP-style stdio server for the contract tests (`mcp-bindgen client` / `lock`), written with the
official SDK's high-level `MCPServer` (mcp==2.3.0). Runs in the SDK's venv. (FastMCP 4.2.3 itself is a
peer of the CLI, era and comparison tests: `contract_peers.fastmcp()`.)

Tools with nested models, enums, optional and list arguments and an output schema; one tool that
fails (`isError`), a prompt with arguments and a resource template.

`CONTRACT_VARIANT` in the environment changes the surface, one change per variant, for the
`lock --check` tests (see `VARIANTS`).
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

VARIANT = os.environ.get("CONTRACT_VARIANT", "")
app = MCPServer("contract-shop", instructions="A small shop for the contract tests.")


class Colour(StrEnum):
    red = "red"
    green = "green"
    blue = "blue"


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = None


class Customer(BaseModel):
    name: str
    address: Address
    tags: list[str] = Field(default_factory=list)


class Order(BaseModel):
    order_id: int
    total: float
    colour: Colour
    lines: list[str]
    customer: Customer


if VARIANT == "narrow_enum":
    Shade = Literal["red", "green"]
elif VARIANT == "widen_enum":
    Shade = Literal["red", "green", "blue", "black"]
else:
    Shade = Literal["red", "green", "blue"]


@app.tool(description="Add two integers.")
def add(a: int, b: int = 2) -> int:
    return a + b


if VARIANT == "new_required":

    @app.tool(name="place-order.v2", description="Place an order for a customer.")
    def place_order(
        customer: Customer, items: list[str], colour: Colour, note: str, quantity: int = 1, gift: bool | None = None
    ) -> Order:
        return _order(customer, items, colour, quantity)

elif VARIANT == "new_optional":

    @app.tool(name="place-order.v2", description="Place an order for a customer.")
    def place_order(
        customer: Customer,
        items: list[str],
        colour: Colour,
        quantity: int = 1,
        gift: bool | None = None,
        note: str | None = None,
    ) -> Order:
        return _order(customer, items, colour, quantity)

elif VARIANT == "narrow_type":

    @app.tool(name="place-order.v2", description="Place an order for a customer.")
    def place_order(
        customer: Customer, items: list[str], colour: Colour, quantity: bool, gift: bool | None = None
    ) -> Order:
        return _order(customer, items, colour, int(quantity))

else:

    @app.tool(name="place-order.v2", description="Place an order for a customer.")
    def place_order(
        customer: Customer, items: list[str], colour: Colour, quantity: int = 1, gift: bool | None = None
    ) -> Order:
        """Place an order; `quantity` of each item."""
        return _order(customer, items, colour, quantity)


def _order(customer: Customer, items: list[str], colour: Colour, quantity: int) -> Order:
    return Order(order_id=7, total=2.5 * quantity * len(items), colour=colour, lines=items, customer=customer)


@app.tool(description="Paint something in a shade.")
def paint(shade: Shade) -> str:  # type: ignore[valid-type]
    return f"painted {shade}"


if VARIANT != "removed_tool":

    @app.tool(description="Always fails.")
    def explode(reason: str = "boom") -> str:
        raise ValueError(f"exploded: {reason}")


if VARIANT == "added_tool":

    @app.tool(description="A tool added later.")
    def ping() -> str:
        return "pong"


@app.prompt(description="Greet someone.")
def greet(name: str, style: str = "plain") -> str:
    return f"Hello {name} ({style})"


@app.resource("shop://orders/{order_id}", description="One order as JSON.")
def order_resource(order_id: str) -> str:
    return f'{{"order": "{order_id}"}}'


if __name__ == "__main__":
    app.run("stdio")
