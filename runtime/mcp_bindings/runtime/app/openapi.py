"""What every package `mcp-bindgen openapi` generates does the same way, in one place: the HTTP call a
tool makes (`Api.call`), its bounds, credentials, retries and errors, and the base of the models.

Safe by construction (docs/openapi.md, docs/security.md): the scheme, host and port of every request
are the base URL's, fixed in the generated code, and no argument can change them: path parameters
are percent-encoded whole (a `/`, `?`, `#` or a dot segment stays inside its segment), the URL is
checked against the base before it is sent, a redirect to another origin is refused, a header value
(or credential) holding CR, LF or NUL is refused, and an answer is read up to `max_response_bytes`
and no further. OAuth client credentials: `app.openapi_oauth`. Retries: a 429 or 503 is tried again
(`retries` times), after its `Retry-After` when it gives one no longer than `max_retry_wait`, else
after a short backoff. An answer other than 2xx is a tool error naming the status and the API's
message.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import secrets
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
import orjson
import pydantic_core
from pydantic import (
    VERSION as PYDANTIC_VERSION,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from mcp_bindings.runtime.app.content import Embedded
from mcp_bindings.runtime.app.errors import ToolError
from mcp_bindings.runtime.app.openapi_oauth import ClientCredentials

if TYPE_CHECKING:
    import httpx

__all__ = ["TOOL_SCHEMAS", "Answer", "Api", "ApiModel", "Body", "Operation", "Param", "Scheme", "tool_schemas"]

# The file of a generated package holding its tools' schemas (`tool_schemas`).
TOOL_SCHEMAS = "tool_schemas.json"

Location = Literal["path", "query", "header", "cookie"]
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_RETRIED = frozenset({429, 503})
_MESSAGE_KEYS = ("message", "error_description", "detail", "error", "title", "description")
_TEXT_MAX = 2000  # of an error answer quoted in the tool error


class ApiModel(BaseModel):
    """The base of the generated models: the API's extra keys kept, and written back as they came
    (a key the API left out stays out, rather than coming back as null or its default)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    # Unannotated: with a return annotation, pydantic would describe the answer by it instead of the model.
    @model_serializer(mode="wrap")
    def _as_received(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # noqa: ANN202
        data: Any = handler(self)
        _drop_unset(self, data, bool(info.by_alias))
        return data


def _drop_unset(model: BaseModel, data: Any, by_alias: bool) -> None:
    if not isinstance(data, dict):
        return
    out = cast("dict[str, Any]", data)
    for name, spec in type(model).model_fields.items():
        if name not in model.model_fields_set:
            out.pop(spec.alias if by_alias and spec.alias else name, None)


@dataclass(frozen=True, slots=True)
class Param:
    prop: str  # the tool's argument
    name: str  # on the wire
    location: Location
    explode: bool = True
    deep: bool = False


@dataclass(frozen=True, slots=True)
class Body:
    prop: str
    media_type: str
    kind: Literal["json", "form", "multipart", "text", "binary"]
    files: tuple[str, ...] = ()  # multipart: the parts that are files ({content, name?, mimeType?} objects)


@dataclass(frozen=True, slots=True)
class Answer:
    kind: Literal["json", "text", "binary", "empty"]
    media_type: str | None
    # The type a JSON answer is validated into (None: taken as it is), or where to import it from,
    # "module:name" (a generated package's model, imported on the first answer: not at start-up).
    returns: Any = None


@dataclass(frozen=True, slots=True)
class Scheme:
    kind: Literal["bearer", "basic", "api_key", "oauth2"]
    env: tuple[str, ...]
    location: Location | None = None
    param: str | None = None
    token_url: str | None = None  # oauth2: the client credentials flow's (app.openapi_oauth)
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Operation:
    tool: str
    method: str
    path: str
    params: tuple[Param, ...] = ()
    body: Body | None = None
    answer: Answer = Answer("empty", None)
    security: tuple[tuple[str, ...], ...] = ()

    @property
    def what(self) -> str:
        return f"{self.method} {self.path}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def _segment(value: Any, name: str) -> str:
    """A path parameter percent-encoded whole: never a `/`, `?`, `#` nor a dot segment of its own."""
    if isinstance(value, list | tuple):
        text = ",".join(_text(v) for v in cast("Sequence[Any]", value))
    else:
        text = _text(value)
    if not text:
        raise ToolError(f"path parameter {name!r} is empty")
    encoded = urllib.parse.quote(text, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def _header_value(value: str, name: str) -> str:
    if any(c in value for c in "\r\n\0"):
        raise ToolError(f"header {name!r}: a value holding CR, LF or NUL is refused")
    return value


def _query(param: Param, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in cast("Mapping[Any, Any]", value).items() if v is not None]
        if param.deep:
            return [(f"{param.name}[{k}]", _text(v)) for k, v in items]
        if param.explode:
            return [(k, _text(v)) for k, v in items]
        return [(param.name, ",".join(f"{k},{_text(v)}" for k, v in items))]
    if isinstance(value, list | tuple):
        values = [_text(v) for v in cast("Sequence[Any]", value)]
        return [(param.name, v) for v in values] if param.explode else [(param.name, ",".join(values))]
    return [(param.name, _text(value))]


def _base64(value: Any, what: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except ValueError:
        raise ToolError(f"{what}: not base64") from None


def _disposition(name: str, filename: str | None = None) -> str:
    """A part's Content-Disposition: names quoted (`"` as `%22`, as browsers and httpx write it), a
    name holding CR, LF or NUL refused."""

    def quoted(text: str) -> str:
        return '"' + _header_value(text, name).replace("\\", "\\\\").replace('"', "%22") + '"'

    line = f"form-data; name={quoted(name)}"
    return line + (f"; filename={quoted(filename)}" if filename is not None else "")


def _file(part: str, value: Any) -> tuple[str, bytes, str]:
    """A file part's (file name, bytes, media type) from its `{content, name?, mimeType?}` object."""
    if not isinstance(value, Mapping) or "content" not in value:
        raise ToolError(f"part {part!r}: a file is an object {{content (base64), name?, mimeType?}}")
    given = cast("Mapping[str, Any]", value)
    media = str(given.get("mimeType") or "application/octet-stream")
    return str(given.get("name") or part), _base64(given["content"], f"part {part!r}: content"), media


def _multipart(body: Body, data: Any) -> tuple[bytes, str]:
    """multipart/form-data (RFC 7578): each file part with its file name and media type, each array of
    scalars one part per item, objects as JSON, the rest as text. The boundary is random."""
    if not isinstance(data, Mapping):
        raise ToolError(f"argument {body.prop!r}: an object of the form's parts is needed")
    boundary = secrets.token_hex(16)
    chunks: list[bytes] = []

    def add(disposition: str, media: str | None, content: bytes) -> None:
        head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
        head += f"Content-Type: {_header_value(media, 'mimeType')}\r\n" if media else ""
        chunks.append(head.encode() + b"\r\n" + content + b"\r\n")

    for key, value in cast("Mapping[str, Any]", data).items():
        items = cast("list[Any]", value) if isinstance(value, list) else [value]
        for item in items:
            if item is None:
                continue
            if key in body.files:
                filename, content, media = _file(key, item)
                add(_disposition(key, filename), media, content)
            elif isinstance(item, Mapping | list):
                add(_disposition(key), "application/json", json.dumps(item, separators=(",", ":")).encode())
            else:
                add(_disposition(key), None, _text(item).encode())
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return (url.scheme, url.host, url.port or default)


@dataclass
class _Request:
    method: str
    url: httpx.URL
    query: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    headers: dict[str, str] = field(default_factory=dict[str, str])
    cookies: list[str] = field(default_factory=list[str])
    content: bytes | None = None


class Api:
    """The HTTP API behind a generated server: `base_url` (fixed in the generated code) and the security
    schemes its operations use, credentials read from the environment at each call."""

    def __init__(
        self,
        base_url: str,
        schemes: Mapping[str, Scheme] | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        max_retry_wait: float = 30.0,
        max_response_bytes: int = 16 * 1024 * 1024,
        max_redirects: int = 5,
        environ: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL {base_url!r}: an absolute http(s) URL is needed")
        self.base_url = base_url
        self._base: httpx.URL | None = None
        self.schemes = dict(schemes or {})
        self.timeout, self.retries, self.max_retry_wait = timeout, retries, max_retry_wait
        self.max_response_bytes, self.max_redirects = max_response_bytes, max_redirects
        self.environ = os.environ if environ is None else environ
        self.transport = transport
        self.credentials = {  # OAuth client credentials: a token each, cached (ValueError: a token URL in clear)
            name: ClientCredentials(name, s.token_url, s.env, s.scopes)
            for name, s in self.schemes.items()
            if s.kind == "oauth2" and s.token_url
        }
        self._adapters: dict[str, TypeAdapter[Any]] = {}

    @property
    def base(self) -> httpx.URL:
        """The base URL as httpx's, parsed on first use (a server's start-up does not import httpx)."""
        base = self._base
        if base is None:
            import httpx

            base = self._base = httpx.URL(self.base_url)
        return base

    # -- the request ------------------------------------------------------------------------------

    def url(self, op: Operation, arguments: Mapping[str, Any]) -> httpx.URL:
        """The request's URL: the base's scheme, host and port, the path with its parameters encoded."""
        import httpx

        path = op.path
        for param in op.params:
            if param.location == "path":
                value = arguments.get(param.prop)
                if value is None:
                    raise ToolError(f"{op.what}: path parameter {param.name!r} is missing")
                path = path.replace("{" + param.name + "}", _segment(value, param.name))
        base_path = self.base.raw_path.decode("ascii").split("?")[0].rstrip("/")
        url = self.base.copy_with(raw_path=(base_path + path).encode("ascii"))
        if _origin(url) != _origin(self.base) or not url.raw_path.decode("ascii").startswith(base_path):
            raise ToolError(f"{op.what}: the request would leave {self.base}")  # never, by construction
        return httpx.URL(url)

    def request(self, op: Operation, arguments: Mapping[str, Any], tokens: Mapping[str, str] | None = None) -> _Request:
        """The request `call` sends; `tokens`: the OAuth schemes' access tokens (`tokens`)."""
        req = _Request(op.method, self.url(op, arguments))
        for param in op.params:
            value = arguments.get(param.prop)
            if value is None or param.location == "path":
                continue
            value = pydantic_core.to_jsonable_python(value, by_alias=True)
            if param.location == "query":
                req.query += _query(param, value)
            elif param.location == "header":
                req.headers[param.name] = _header_value(_text(value), param.name)
            else:
                req.cookies.append(f"{param.name}={_header_value(_text(value), param.name)}")
        if op.body is not None and arguments.get(op.body.prop) is not None:
            req.content, req.headers["Content-Type"] = self._body(op.body, arguments[op.body.prop])
        if op.answer.media_type:
            req.headers["Accept"] = op.answer.media_type
        self._authorize(op, req, tokens or {})
        if req.cookies:
            req.headers["Cookie"] = "; ".join(req.cookies)
        return req

    @staticmethod
    def _body(body: Body, value: Any) -> tuple[bytes, str]:
        """The request's content and its Content-Type."""
        if body.kind == "binary":
            return _base64(value, f"argument {body.prop!r}"), body.media_type
        if body.kind == "text":
            return str(value).encode(), body.media_type
        data = pydantic_core.to_jsonable_python(value, by_alias=True)
        if body.kind == "multipart":
            return _multipart(body, data)
        if body.kind == "form" and isinstance(data, Mapping):  # an array: one pair per item (form, explode)
            pairs: list[tuple[str, str]] = []
            for key, value in cast("Mapping[Any, Any]", data).items():
                values = cast("list[Any]", value) if isinstance(value, list) else [value]
                pairs += [(str(key), _text(v)) for v in values if v is not None]
            return urllib.parse.urlencode(pairs).encode(), body.media_type
        return json.dumps(data, separators=(",", ":")).encode(), body.media_type

    def alternative(self, op: Operation) -> tuple[str, ...]:
        """The first alternative of the operation's security whose variables are all set: the schemes
        the request uses (none where it needs none); ToolError naming the variables where none is."""
        if not op.security:
            return ()
        for alternative in op.security:
            schemes = [self.schemes[name] for name in alternative if name in self.schemes]
            if len(schemes) == len(alternative) and all(self.environ.get(e) for s in schemes for e in s.env):
                return alternative
        needed = " or ".join(
            " and ".join(e for name in alt for e in (self.schemes[name].env if name in self.schemes else ()))
            for alt in op.security
        )
        raise ToolError(f"{op.what} needs credentials: set {needed}")

    async def tokens(
        self, op: Operation, client: httpx.AsyncClient, stale: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The access tokens of the OAuth schemes the operation's request uses (new ones in place of `stale`)."""
        found: dict[str, str] = {}
        for name in self.alternative(op):
            if name in self.credentials:
                old = (stale or {}).get(name)
                found[name] = await self.credentials[name].token(client, self.environ, old)
        return found

    def _authorize(self, op: Operation, req: _Request, tokens: Mapping[str, str]) -> None:
        for name in self.alternative(op):
            self._apply(name, self.schemes[name], req, tokens)

    def _apply(self, name: str, scheme: Scheme, req: _Request, tokens: Mapping[str, str]) -> None:
        if scheme.kind == "oauth2":
            if name not in tokens:
                raise ToolError(f"scheme {name!r}: no OAuth token was obtained for this request")
            req.headers["Authorization"] = f"Bearer {_header_value(tokens[name], 'access_token')}"
            return
        values = [_header_value(self.environ[e], e) for e in scheme.env]
        if scheme.kind == "bearer":
            req.headers["Authorization"] = f"Bearer {values[0]}"
        elif scheme.kind == "basic":
            pair = base64.b64encode(f"{values[0]}:{values[1]}".encode()).decode("ascii")
            req.headers["Authorization"] = f"Basic {pair}"
        elif scheme.location == "header" and scheme.param:
            req.headers[scheme.param] = values[0]
        elif scheme.location == "query" and scheme.param:
            req.query.append((scheme.param, values[0]))
        elif scheme.param:
            req.cookies.append(f"{scheme.param}={values[0]}")

    # -- sending ----------------------------------------------------------------------------------

    async def call(self, op: Operation, arguments: Mapping[str, Any]) -> Any:
        """Make the operation's request with the tool's arguments; the answer as the tool gives it back."""
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, transport=self.transport) as client:
            tokens = await self.tokens(op, client)
            status, headers, content, url = await self._with_retries(client, op, self.request(op, arguments, tokens))
            if status == 401 and tokens:  # a token the API no longer takes (revoked, expired early): once more
                tokens = await self.tokens(op, client, stale=tokens)
                req = self.request(op, arguments, tokens)
                status, headers, content, url = await self._with_retries(client, op, req)
        if not 200 <= status < 300:
            raise ToolError(_failure(op, status, headers, content))
        return self._answer(op, headers, content, url)

    async def _with_retries(
        self, client: httpx.AsyncClient, op: Operation, req: _Request
    ) -> tuple[int, httpx.Headers, bytes, httpx.URL]:
        attempt = 0
        while True:
            status, headers, content, url = await self._follow(client, op, req)
            if status not in _RETRIED or attempt >= self.retries:
                return status, headers, content, url
            from mcp_bindings.runtime.client.http import retry_after_seconds  # (httpx: not at start-up)

            wait = retry_after_seconds(headers.get("retry-after"))
            wait = min(0.25 * 2**attempt, 2.0) if wait is None else wait
            if wait > self.max_retry_wait:
                return status, headers, content, url
            attempt += 1
            await anyio.sleep(wait)

    async def _follow(
        self, client: httpx.AsyncClient, op: Operation, req: _Request
    ) -> tuple[int, httpx.Headers, bytes, httpx.URL]:
        """Send, following redirects to the base URL's origin only."""
        method, url, content = req.method, req.url, req.content
        headers = dict(req.headers)
        for _ in range(self.max_redirects + 1):
            request = client.build_request(
                method, url, params=cast("Any", req.query) or None, headers=headers, content=content
            )
            status, answer_headers, body = await self._send(client, op, request)
            location = answer_headers.get("location")
            if status not in _REDIRECTS or location is None:
                return status, answer_headers, body, request.url
            target = request.url.join(location)
            if _origin(target) != _origin(self.base):
                raise ToolError(f"{op.what}: the API redirected to another host ({target.host}); refused")
            url, req.query = target, []
            if status == 303 or (status in (301, 302) and method == "POST"):
                method, content = "GET", None
                headers.pop("Content-Type", None)
        raise ToolError(f"{op.what}: more than {self.max_redirects} redirects")

    async def _send(self, client: httpx.AsyncClient, op: Operation, request: httpx.Request) -> tuple[int, Any, bytes]:
        import httpx

        try:
            response = await client.send(request, stream=True)
        except httpx.TimeoutException:
            raise ToolError(f"{op.what}: the API did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"{op.what}: {type(exc).__name__}: {exc}") from None
        in_memory = response.is_stream_consumed  # an answer made in memory (a mock transport): read already
        try:
            raw = response.content if in_memory else await self._read(op, response)
        finally:
            await response.aclose()
        content = raw if in_memory else _decoded(raw, response.headers)
        if len(content) > self.max_response_bytes:
            raise ToolError(f"{op.what}: the answer is larger than {self.max_response_bytes} bytes; refused")
        return response.status_code, response.headers, content

    async def _read(self, op: Operation, response: httpx.Response) -> bytes:
        """The body as it comes over the wire, up to the bound (the rest is never read)."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ToolError(f"{op.what}: the answer is larger than {self.max_response_bytes} bytes; refused")
            chunks.append(chunk)
        return b"".join(chunks)

    # -- the answer -------------------------------------------------------------------------------

    def _answer(self, op: Operation, headers: httpx.Headers, content: bytes, url: httpx.URL) -> Any:
        kind = op.answer.kind
        if kind == "binary":
            media = headers.get("content-type") or op.answer.media_type or "application/octet-stream"
            return Embedded(str(url), content, media.split(";")[0].strip())
        if kind == "empty" or not content:
            if kind == "json" and op.answer.returns is not None:
                raise ToolError(f"{op.what}: the API answered with no content where its description promises JSON")
            return content.decode("utf-8", errors="replace") if content else "(no content)"
        if kind == "text":
            return content.decode("utf-8", errors="replace")
        try:
            data = json.loads(content)
        except ValueError:
            raise ToolError(f"{op.what}: the API's answer is not JSON: {_quote(content)}") from None
        if op.answer.returns is None:
            return data
        adapter = self._adapters.get(op.tool)
        if adapter is None:
            adapter = self._adapters[op.tool] = TypeAdapter(_imported(op.answer.returns))
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[:5]
            where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in first)
            raise ToolError(f"{op.what}: the API's answer does not match its description: {where}") from None


def _imported(returns: Any) -> Any:
    """An answer's type: `returns` itself, or the one a "module:name" reference names."""
    if not isinstance(returns, str):
        return returns
    module, _, name = returns.partition(":")
    return getattr(importlib.import_module(module), name)


def tool_schemas(package_file: str) -> dict[str, Any]:
    """The tools' schemas a generated package carries beside `package_file` (`tool_schemas.json`,
    written by `mcp-bindgen openapi` from the tools' own analysis): tool name -> its `inputSchema`
    and `outputSchema`, for `@app.tool(schemas=...)`. Empty where the file is missing or was written
    with another pydantic than this one (whose schemas may differ): the tools are then analysed
    when they are registered, as any tool is."""
    path = Path(package_file).with_name(TOOL_SCHEMAS)
    try:
        data: Any = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    found = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    if found.get("pydantic") != PYDANTIC_VERSION:
        return {}
    tools = found.get("tools")
    return cast("dict[str, Any]", tools) if isinstance(tools, dict) else {}


def _decoded(body: bytes, headers: httpx.Headers) -> bytes:
    """The raw body (read raw, so the bound counts what came over the wire) without its compression."""
    encoding = (headers.get("content-encoding") or "").strip().lower()
    if encoding in ("", "identity"):
        return body
    import httpx

    try:
        return httpx.Response(200, headers={"content-encoding": encoding}, content=body).read()
    except httpx.DecodingError:
        return body


def _quote(content: bytes) -> str:
    text = " ".join(content.decode("utf-8", errors="replace").split())
    return text if len(text) <= _TEXT_MAX else text[:_TEXT_MAX] + "..."


def _message(content: bytes) -> str:
    """The API's own message: a JSON error's `message` (or `detail`, `error`, ...), else the text."""
    try:
        data: Any = json.loads(content)
    except ValueError:
        return _quote(content)
    for _ in range(3):
        if not isinstance(data, dict):
            break
        mapping = cast("dict[str, Any]", data)
        found = next((mapping[k] for k in _MESSAGE_KEYS if k in mapping), None)
        if found is None:
            break
        if isinstance(found, str):
            return found[:_TEXT_MAX]
        data = found
    return _quote(content)


def _failure(op: Operation, status: int, headers: httpx.Headers, content: bytes) -> str:
    import httpx

    reason = httpx.codes.get_reason_phrase(status)
    text = f"{op.what} failed: HTTP {status}{f' {reason}' if reason else ''}"
    message = _message(content) if content else ""
    return f"{text}: {message}" if message else text
