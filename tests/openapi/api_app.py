"""A real API for the end-to-end tests: a FastAPI application whose own `/openapi.json` is the
generator's input. Path, query, header and JSON body parameters, bearer auth, pagination, an error
with a message, a binary download, a rate limit answered with Retry-After, and the hostile cases
(a redirect to another host, an answer larger than the bound, the raw path as the server got it),
a multipart/form-data upload (files and form fields), and an operation behind OAuth client
credentials with the token endpoint that issues them (`OAUTH` records what it was asked)."""

from __future__ import annotations

import base64
import hashlib
import urllib.parse
from typing import Annotated

from fastapi import Depends, FastAPI, File, Form, Header, HTTPException, Query, Request, Response, Security, UploadFile
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer, OAuth2
from pydantic import BaseModel, Field

TOKEN = "s3cret-token"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4

api = FastAPI(title="Inventory", version="2.1.0", description="Items in stock.")
bearer = HTTPBearer(auto_error=False)


class ItemIn(BaseModel):
    name: str = Field(min_length=1, max_length=40, description="What it is called.")
    price: float = Field(ge=0)
    tags: list[str] = []


class Item(ItemIn):
    id: int
    note: str | None = None


class Page(BaseModel):
    items: list[Item]
    next_offset: int | None = None


ITEMS = {i: Item(id=i, name=f"item {i}", price=i * 1.5, tags=["even"] if i % 2 == 0 else []) for i in range(1, 8)}
_seen_limits: dict[str, int] = {}


def _auth(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
    if credentials is None or credentials.credentials != TOKEN:
        raise HTTPException(status_code=401, detail="a valid bearer token is needed")


@api.get("/items", operation_id="list_items", summary="List the items, a page at a time.")
def list_items(
    limit: Annotated[int, Query(ge=1, le=5, description="Items per page.")] = 3, offset: Annotated[int, Query(ge=0)] = 0
) -> Page:
    keys = sorted(ITEMS)[offset : offset + limit]
    more = offset + limit < len(ITEMS)
    return Page(items=[ITEMS[k] for k in keys], next_offset=offset + limit if more else None)


@api.get("/items/{item_id}", operation_id="get_item", summary="One item.")
def get_item(
    item_id: int,
    currency: Annotated[str, Query(pattern="^[A-Z]{3}$")] = "EUR",
    x_trace: Annotated[str | None, Header()] = None,
) -> Item:
    item = ITEMS.get(item_id)
    if item is None:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
    note = f"{currency} trace={x_trace}" if x_trace else currency
    return item.model_copy(update={"note": note})


@api.post("/items", operation_id="create_item", status_code=201, dependencies=[Depends(_auth)])
def create_item(item: ItemIn) -> Item:
    """Add an item (needs the bearer token)."""
    return Item(id=100, **item.model_dump())


@api.get("/teapot", operation_id="brew")
def brew() -> Item:
    raise HTTPException(status_code=418, detail="I refuse to brew coffee")


@api.get(
    "/files/{name}",
    operation_id="download",
    response_class=Response,
    responses={200: {"content": {"image/png": {"schema": {"type": "string", "format": "binary"}}}}},
)
def download(name: str) -> Response:
    return Response(PNG, media_type="image/png")


@api.get("/limited/{key}", operation_id="limited")
def limited(key: str) -> dict[str, int]:
    count = _seen_limits[key] = _seen_limits.get(key, 0) + 1
    if count < 2:
        return JSONResponse({"message": "slow down"}, status_code=429, headers={"Retry-After": "0"})  # type: ignore[return-value]
    return {"attempts": count}


@api.get("/echo/{value:path}", operation_id="echo_path")
def echo_path(value: str, request: Request) -> dict[str, str]:
    return {"raw_path": request.scope["raw_path"].decode("latin-1"), "value": value}


@api.get("/away", operation_id="away")
def away() -> RedirectResponse:
    return RedirectResponse("http://elsewhere.invalid/steal", status_code=302)


@api.get("/home", operation_id="home")
def home() -> RedirectResponse:
    return RedirectResponse("/items/1", status_code=307)


@api.get("/big", operation_id="big")
def big() -> dict[str, str]:
    return {"blob": "x" * 200_000}


@api.post("/upload", operation_id="upload", summary="Store files with a note.")
async def upload(
    file: Annotated[UploadFile, File(description="The main file.")],
    note: Annotated[str, Form(max_length=20)],
    extra: Annotated[list[UploadFile], File()] = [],  # noqa: B006 - FastAPI's way to make a form field optional
    tags: Annotated[list[str], Form()] = [],  # noqa: B006
) -> dict[str, object]:
    files = [file, *extra]
    read = [(f, await f.read()) for f in files]
    return {
        "note": note,
        "tags": tags,
        "files": [
            {"filename": f.filename, "type": f.content_type, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
            for f, d in read
        ],
    }


@api.post("/search", operation_id="search_form", summary="Search with a form.")
def search_form(q: Annotated[str, Form()], tags: Annotated[list[str], Form()] = []) -> dict[str, object]:  # noqa: B006
    return {"q": q, "tags": tags}


CLIENT = ("robot", "s3cret:/&+")  # a secret needing the form-encoding RFC 6749 asks of Basic credentials
OAUTH: dict[str, list[str]] = {"issued": [], "scopes": []}
oauth = OAuth2(
    flows=OAuthFlows(
        clientCredentials=OAuthFlowClientCredentials(tokenUrl="/oauth/token", scopes={"items:read": "Read."})
    ),
    scheme_name="oauth",
    auto_error=False,
)


@api.post("/oauth/token", include_in_schema=False)
async def token(request: Request) -> JSONResponse:
    form = await request.form()
    encoded = request.headers.get("authorization", "").removeprefix("Basic ")
    client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
    if (urllib.parse.unquote(client_id), urllib.parse.unquote(secret)) != CLIENT:
        return JSONResponse({"error": "invalid_client", "error_description": "client authentication failed"}, 401)
    if form.get("grant_type") != "client_credentials":
        return JSONResponse({"error": "unsupported_grant_type"}, 400)
    OAUTH["scopes"].append(str(form.get("scope")))
    OAUTH["issued"].append(f"cc-{len(OAUTH['scopes'])}")
    return JSONResponse({"access_token": OAUTH["issued"][-1], "token_type": "Bearer", "expires_in": 3600})


@api.get("/secure/count", operation_id="secure_count")
def secure_count(authorization: Annotated[str | None, Security(oauth, scopes=["items:read"])]) -> dict[str, int]:
    if (authorization or "").removeprefix("Bearer ") not in OAUTH["issued"]:
        raise HTTPException(status_code=401, detail="the access token is not valid")
    return {"items": len(ITEMS)}
