"""Lower a loaded description into the IR: one operation per path and method (less the excluded),
each with its tool name, input schema (path, query, header and cookie parameters and the body), its
success response and its security; the security schemes with the environment variables they read."""

from __future__ import annotations

import fnmatch
import keyword
import re
import urllib.parse
from dataclasses import dataclass, field, replace
from typing import Any, cast

from .errors import DescriptionError
from .ir import FILE_PART, ApiIR, Body, BodyKind, Location, Operation, Param, Response, Scheme, Skipped
from .load import Loaded
from .normalise import DEFS_PREFIX, Schemas, as_dict, pascal, resolve, unique
from .routes import DEFAULT_ROUTES, Route, route_kind

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_LOCATIONS: tuple[Location, ...] = ("path", "query", "header", "cookie")
# Headers the client sets itself (OpenAPI says such parameters are ignored).
_OWN_HEADERS = frozenset({"accept", "content-type", "authorization"})
# What hosts accept as a tool name (the strictest, Anthropic's and OpenAI's: 64 of these).
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]+")
TOOL_NAME_MAX = 64
# Module-level names of the generated server module a tool function must not take.
RESERVED_FUNCTIONS = frozenset({"app", "api", "ops", "main"})
DESCRIPTION_MAX = 4000


@dataclass(frozen=True)
class Options:
    """What `mcp-bindgen openapi` takes besides the description."""

    name: str  # the Python package
    base_url: str | None = None
    exclude_tags: frozenset[str] = frozenset()
    exclude_paths: tuple[str, ...] = ()  # fnmatch patterns over the path template
    exclude_methods: frozenset[str] = frozenset()  # upper case
    env_prefix: str | None = None  # default: the package name in upper case
    routes: tuple[Route, ...] = DEFAULT_ROUTES  # which operations are tools, resources, left out (routes.py)


def identifier(text: str, fallback: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", text)
    name = re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_").lower() or fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in RESERVED_FUNCTIONS:
        name += "_"
    return name


def _text(*parts: Any) -> str:
    text = "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return text if len(text) <= DESCRIPTION_MAX else text[: DESCRIPTION_MAX - 1] + "…"


def base_url(loaded: Loaded, given: str | None) -> str:
    """The API's base URL: `--base-url`, else the first server's (variables at their defaults, a
    relative URL against the description's own URL; none at all: `/`, as OpenAPI says). Always http(s)
    with a host."""
    url = given
    if url is None:
        servers: Any = loaded.document.get("servers") or ([{"url": "/"}] if loaded.url else [])
        server = servers[0] if isinstance(servers, list) and servers and isinstance(servers[0], dict) else {}
        url = str(server.get("url", "")) if server else ""
        for var, spec in (server.get("variables") or {}).items():
            default = spec.get("default") if isinstance(spec, dict) else None
            url = url.replace("{" + var + "}", str(default if default is not None else ""))
        if loaded.url and url and not urllib.parse.urlsplit(url).netloc:
            url = urllib.parse.urljoin(loaded.url, url)
    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        found = f"its server URL is {url!r}" if url else "it names no server"
        raise DescriptionError(f"{loaded.origin}: {found}; pass --base-url https://... (the API's absolute base URL)")
    if parts.query or parts.fragment or "{" in url:
        raise DescriptionError(f"{loaded.origin}: the base URL {url!r} has a query, a fragment or an unset variable")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def _env(prefix: str, scheme: str, *suffixes: str) -> tuple[str, ...]:
    slug = identifier(scheme, "auth").strip("_").upper()
    out = []
    for suffix in suffixes:
        out.append(f"{prefix}_{slug}" if slug.endswith(suffix) else f"{prefix}_{slug}_{suffix}")
    return tuple(out)


def _scopes(doc: dict[str, Any], name: str) -> tuple[str, ...]:
    """Every scope the description's security requirements ask of scheme `name` (sorted)."""
    found: set[str] = set()
    requirements = [doc.get("security")]
    for item in as_dict(doc.get("paths")).values():
        requirements += [as_dict(op).get("security") for op in as_dict(item).values()]
    for listed in requirements:
        for requirement in listed if isinstance(listed, list) else []:
            scopes = as_dict(requirement).get(name)
            found |= {s for s in scopes if isinstance(s, str)} if isinstance(scopes, list) else set()
    return tuple(sorted(found))


def _client_credentials(scheme: dict[str, Any], base: str) -> str | None:
    """The token URL of an OAuth 2 scheme's client credentials flow (a relative one against the base
    URL), or None where it has none."""
    flow = as_dict(as_dict(scheme.get("flows")).get("clientCredentials"))
    token = flow.get("tokenUrl")
    return urllib.parse.urljoin(base + "/", token) if isinstance(token, str) and token else None


def schemes(doc: dict[str, Any], prefix: str, base: str = "") -> dict[str, Scheme]:
    """The security schemes this package can satisfy: HTTP bearer and basic, API keys, OAuth 2's client
    credentials flow."""
    components = doc.get("components") or {}
    out: dict[str, Scheme] = {}
    for name, raw in (components.get("securitySchemes") or {}).items():
        try:
            scheme = resolve(doc, raw, f"security scheme {name}")
        except DescriptionError:
            continue
        if not isinstance(scheme, dict):
            continue
        kind, text = scheme.get("type"), str(scheme.get("description") or "")
        http = str(scheme.get("scheme", "")).lower()
        if kind == "http" and http == "bearer":
            out[name] = Scheme(name, "bearer", _env(prefix, name, "TOKEN"), description=text)
        elif kind == "http" and http == "basic":
            out[name] = Scheme(name, "basic", _env(prefix, name, "USERNAME", "PASSWORD"), description=text)
        elif kind == "apiKey" and scheme.get("in") in ("header", "query", "cookie") and scheme.get("name"):
            where: Location = scheme["in"]
            out[name] = Scheme(name, "api_key", _env(prefix, name, "KEY"), where, str(scheme["name"]), text)
        elif kind == "oauth2" and (token_url := _client_credentials(scheme, base)):
            env = _env(prefix, name, "CLIENT_ID", "CLIENT_SECRET")
            out[name] = Scheme(name, "oauth2", env, description=text, token_url=token_url, scopes=_scopes(doc, name))
    return out


def _security(requirements: Any, known: dict[str, Scheme]) -> tuple[tuple[str, ...], ...]:
    """The alternatives this package can meet (each a set of schemes used together); `()` when none is
    needed. An alternative naming a scheme it cannot use (OAuth flows other than client credentials,
    OpenID Connect) is left out."""
    if not isinstance(requirements, list):
        return ()
    alternatives: list[tuple[str, ...]] = []
    for requirement in requirements:
        if not isinstance(requirement, dict):
            continue
        if not requirement:
            return ()  # one alternative is no security at all
        if all(name in known for name in requirement):
            alternatives.append(tuple(sorted(requirement)))
    return tuple(alternatives)


def _media(content: Any) -> tuple[str, Any] | None:
    """The media type (and its entry) a JSON-speaking client prefers."""
    if not isinstance(content, dict) or not content:
        return None
    types = [str(t) for t in content]
    for pick in (
        lambda t: t.split(";")[0].strip() == "application/json",
        lambda t: t.split(";")[0].strip().endswith("+json") or "json" in t,
        lambda t: t.startswith("application/x-www-form-urlencoded"),
        lambda t: t.startswith("text/"),
    ):
        for media in types:
            if pick(media):
                return media, content[media]
    return types[0], content[types[0]]


def _kind(media: str) -> str:
    base = media.split(";")[0].strip().lower()
    if base == "application/json" or base.endswith("+json") or "json" in base or base == "*/*":
        return "json"
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base.startswith("text/") or base in ("application/xml", "application/yaml", "application/javascript"):
        return "text"
    if base.startswith("multipart/"):
        return "multipart"
    return "binary"


@dataclass
class _Lowering:
    loaded: Loaded
    options: Options
    schemas: Schemas
    known: dict[str, Scheme]
    tools: set[str] = field(default_factory=set[str])
    functions: set[str] = field(default_factory=lambda: set(RESERVED_FUNCTIONS))
    file_def: str | None = None  # the name of `FILE_PART`'s definition, once a multipart body needs it

    @property
    def doc(self) -> dict[str, Any]:
        return self.loaded.document

    def excluded(self, method: str, path: str, op: dict[str, Any]) -> bool:
        o = self.options
        tags = {str(t) for t in op.get("tags") or [] if isinstance(t, str)}
        return (
            method.upper() in o.exclude_methods
            or bool(tags & o.exclude_tags)
            or any(fnmatch.fnmatchcase(path, pattern) for pattern in o.exclude_paths)
        )

    def names(self, method: str, path: str, op: dict[str, Any]) -> tuple[str, str]:
        given = op.get("operationId")
        if isinstance(given, str) and given.strip():
            tool = _TOOL_NAME.sub("_", given).strip("_")
        else:  # `GET /users/{id}/posts` -> `get_users_id_posts`
            tool = re.sub(r"_+", "_", _TOOL_NAME.sub("_", f"{method}_{path}")).strip("_")
        tool = tool[:TOOL_NAME_MAX] or method
        if tool in self.tools:  # `_2`, `_3`, ... in place of the name's end where it would pass the limit
            base, n = tool[: TOOL_NAME_MAX - 4], 2
            while f"{base}_{n}" in self.tools:
                n += 1
            tool = f"{base}_{n}"
        self.tools.add(tool)
        function = unique(identifier(tool, "call"), self.functions, "_")
        return tool, function

    def parameters(self, item: dict[str, Any], op: dict[str, Any], where: str) -> list[dict[str, Any]]:
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        for raw in [*(item.get("parameters") or []), *(op.get("parameters") or [])]:
            param = resolve(self.doc, raw, where)
            if not isinstance(param, dict) or param.get("in") not in _LOCATIONS or not param.get("name"):
                continue
            if param["in"] == "header" and str(param["name"]).lower() in _OWN_HEADERS:
                continue
            merged[(str(param["name"]), str(param["in"]))] = param
        return list(merged.values())

    def param_schema(self, param: dict[str, Any]) -> dict[str, Any]:
        schema = param.get("schema")
        if schema is None:
            media = _media(param.get("content"))
            schema = media[1].get("schema") if media and isinstance(media[1], dict) else None
        out = self.schemas.convert(schema if schema is not None else {"type": "string"})
        out = out if isinstance(out, dict) else {}
        text = _text(param.get("description"))
        if text and "$ref" not in out:
            out = {**out, "description": text}
        elif text:
            out = {"allOf": [out], "description": text}
        return out

    def body(self, op: dict[str, Any], base: str, props: dict[str, Any], where: str) -> Body | str | None:
        raw = op.get("requestBody")
        if raw is None:
            return None
        body = resolve(self.doc, raw, where)
        media = _media(body.get("content") if isinstance(body, dict) else None)
        if media is None:
            return None
        media_type, entry = media
        kind = _kind(media_type)
        prop = unique("body", set(props), "_")
        if kind == "multipart":
            return self.multipart(body, entry, media_type, (base, prop, props), where)
        schema: Any
        if kind in ("json", "form"):
            schema = self.schemas.convert(entry.get("schema", {}) if isinstance(entry, dict) else {})
        elif kind == "text":
            schema = {"type": "string"}
        else:
            schema = {"type": "string", "description": "the content, base64-encoded"}
        text = _text(body.get("description"), f"The request body ({media_type}).")
        if (
            isinstance(schema, dict)
            and "$ref" not in schema
            and schema.get("type") == "object"
            and schema.get("properties")
        ):
            name = self.schemas.claim(f"{base}Body")
            self.schemas.defs[name] = schema
            schema = {"$ref": DEFS_PREFIX + name}
        props[prop] = {"allOf": [schema], "description": text} if "$ref" in schema else {**schema, "description": text}
        required = bool(body.get("required"))
        return Body(prop, media_type, _body_kind(kind), required)

    def multipart(
        self, body: dict[str, Any], entry: Any, media_type: str, into: tuple[str, str, dict[str, Any]], where: str
    ) -> Body:
        """A multipart body: an object of its parts, each file part (a binary string, or an array of
        them) a `FILE_PART` object (or an array of them), the others as their schemas say."""
        base, prop, props = into
        raw = as_dict(resolve(self.doc, as_dict(entry).get("schema", {}), where))
        fields: dict[str, Any] = {}
        files: list[str] = []
        for key, value in as_dict(raw.get("properties")).items():
            part = as_dict(resolve(self.doc, value, where))
            items = as_dict(resolve(self.doc, part.get("items"), where)) if part.get("type") == "array" else {}
            if _is_file(part) or _is_file(items):
                ref = {"$ref": DEFS_PREFIX + self.file_part()}
                fields[key] = {"allOf": [ref]} if _is_file(part) else {"type": "array", "items": ref}
                if isinstance(part.get("description"), str):
                    fields[key]["description"] = part["description"]
                files.append(key)
            else:
                fields[key] = self.schemas.convert(value)
        schema: dict[str, Any] = {"type": "object", "properties": fields}
        required = [str(r) for r in raw.get("required") or [] if r in fields]
        if required:
            schema["required"] = required
        name = self.schemas.claim(f"{base}Body")
        self.schemas.defs[name] = schema
        text = _text(body.get("description"), f"The request body ({media_type}).")
        props[prop] = {"allOf": [{"$ref": DEFS_PREFIX + name}], "description": text}
        return Body(prop, media_type, "multipart", bool(body.get("required")), tuple(files))

    def file_part(self) -> str:
        """The definition every file part shares (`ir.FILE_PART`), added the first time one is met."""
        if self.file_def is None:
            self.file_def = self.schemas.claim("FilePart")
            self.schemas.defs[self.file_def] = FILE_PART
        return self.file_def

    def response(self, op: dict[str, Any], base: str, where: str) -> Response:
        responses = as_dict(op.get("responses"))
        codes = sorted(str(c) for c in responses if str(c)[:1] == "2")
        status = codes[0] if codes else ("default" if "default" in responses else "")
        if not status:
            return Response("", "empty", None, None)
        answer = resolve(self.doc, responses[status], where)
        media = _media(answer.get("content") if isinstance(answer, dict) else None)
        if media is None:
            return Response(status, "empty", None, None)
        media_type, entry = media
        kind = _kind(media_type)
        if kind != "json":
            return Response(status, "text" if kind in ("text", "form") else "binary", media_type, None)
        raw = entry.get("schema") if isinstance(entry, dict) else None
        if raw is None or raw == {}:
            return Response(status, "json", media_type, None)
        schema = self.schemas.convert(raw)
        if isinstance(schema, dict) and set(schema) == {"$ref"}:
            return Response(status, "json", media_type, schema["$ref"][len(DEFS_PREFIX) :])
        name = self.schemas.claim(f"{base}Response")
        self.schemas.defs[name] = schema
        return Response(status, "json", media_type, name)

    def operation(self, method: str, path: str, item: dict[str, Any], op: dict[str, Any]) -> Operation | Skipped:
        where = f"{method.upper()} {path}"
        tool, function = self.names(method, path, op)
        base = pascal(function, "Call")
        props: dict[str, Any] = {}
        required: list[str] = []
        params: list[Param] = []
        for param in self.parameters(item, op, where):
            location: Location = param["in"]
            name = str(param["name"])
            prop = name if name not in props else unique(f"{name}_{location}", set(props), "_")
            props[prop] = self.param_schema(param)
            is_required = location == "path" or param.get("required") is True
            if is_required:
                required.append(prop)
            style = param.get("style")
            explode = param.get("explode", style in (None, "form")) is not False
            params.append(Param(prop, name, location, is_required, explode, style == "deepObject"))
        body = self.body(op, base, props, where)
        if isinstance(body, str):
            return Skipped(where, body)
        if body is not None and body.required:
            required.append(body.prop)
        missing = sorted(set(re.findall(r"{([^}]+)}", path)) - {p.name for p in params if p.location == "path"})
        for name in missing:  # a path variable the description forgot to declare: a required string
            prop = unique(name, set(props), "_")
            props[prop] = {"type": "string"}
            required.append(prop)
            params.append(Param(prop, name, "path", True))
        arguments = self.schemas.claim(f"{base}Arguments")
        schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            schema["required"] = required
        self.schemas.defs[arguments] = schema
        security = _security(op.get("security", self.doc.get("security")), self.known)
        return Operation(
            tool=tool,
            function=function,
            method=method.upper(),
            path=path,
            description=_text(op.get("summary"), op.get("description")) or where,
            tags=tuple(str(t) for t in op.get("tags") or [] if isinstance(t, str)),
            arguments=arguments,
            params=tuple(params),
            body=body,
            response=self.response(op, base, where),
            security=security,
            deprecated=op.get("deprecated") is True,
        )

    def readable(self, op: Operation) -> bool:
        """Whether a `resource` route can make `op` a resource: a GET without a body, its path and query
        parameters scalars (URI template variables), its header and cookie parameters optional (never
        sent from a resource), answering JSON or text."""
        if op.method != "GET" or op.body is not None or op.response.kind not in ("json", "text"):
            return False
        props = as_dict(self.schemas.defs.get(op.arguments, {}).get("properties"))
        return all(
            self.scalar(props.get(p.prop)) if p.location in ("path", "query") else not p.required for p in op.params
        )

    def scalar(self, schema: Any) -> bool:
        for _ in range(8):  # through `allOf: [$ref]` wrappers and references to named definitions
            if not isinstance(schema, dict):
                return False
            node = cast("dict[str, Any]", schema)
            if isinstance(node.get("$ref"), str):
                schema = self.schemas.defs.get(node["$ref"][len(DEFS_PREFIX) :])
            elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
                schema = node["allOf"][0]
            else:
                kinds = node.get("type")
                kinds = [kinds] if isinstance(kinds, str) else kinds
                scalars = {"string", "integer", "number", "boolean", "null"}
                return isinstance(kinds, list) and bool(kinds) and set(cast("list[Any]", kinds)) <= scalars
        return False

    def run(self) -> tuple[list[Operation], list[Skipped]]:
        operations: list[Operation] = []
        skipped: list[Skipped] = []
        for path, raw in (self.doc.get("paths") or {}).items():
            try:
                item = resolve(self.doc, raw, f"path {path}")
            except DescriptionError as exc:
                skipped.append(Skipped(str(path), str(exc)))
                continue
            if not isinstance(item, dict):
                continue
            for method in METHODS:
                op = item.get(method)
                if not isinstance(op, dict) or self.excluded(method, str(path), op):
                    continue
                tags = [str(t) for t in op.get("tags") or [] if isinstance(t, str)]
                kind = route_kind(self.options.routes, method, str(path), tags)
                if kind == "exclude":
                    continue
                try:
                    lowered = self.operation(method, str(path), item, op)
                except DescriptionError as exc:
                    lowered = Skipped(f"{method.upper()} {path}", str(exc))
                if kind == "resource" and isinstance(lowered, Operation) and self.readable(lowered):
                    lowered = replace(lowered, resource=True)
                (skipped if isinstance(lowered, Skipped) else operations).append(lowered)  # pyright: ignore[reportArgumentType]
        return operations, skipped


def _body_kind(kind: str) -> BodyKind:
    return {"json": "json", "form": "form", "text": "text"}.get(kind, "binary")  # pyright: ignore[reportReturnType]


def _is_file(schema: dict[str, Any]) -> bool:
    """A file in a multipart body: a binary string (3.0's `format: binary` / `base64`, 3.1's
    `contentMediaType` / `contentEncoding`; Swagger 2.0's `type: file`)."""
    if schema.get("type") == "file":
        return True
    return schema.get("type") == "string" and (
        schema.get("format") in ("binary", "base64") or "contentMediaType" in schema or "contentEncoding" in schema
    )


def lower(loaded: Loaded, options: Options) -> ApiIR:
    doc = loaded.document
    info = as_dict(doc.get("info"))
    prefix = options.env_prefix or re.sub(r"[^0-9A-Za-z]+", "_", options.name).upper()
    schemas = Schemas(doc)
    base = base_url(loaded, options.base_url)
    known = schemes(doc, prefix, base)
    lowering = _Lowering(loaded, options, schemas, known)
    operations, skipped = lowering.run()
    return ApiIR(
        title=str(info.get("title") or options.name),
        api_version=str(info.get("version") or ""),
        description=_text(info.get("description")),
        source=loaded.origin,
        sha256=loaded.sha256,
        openapi=loaded.openapi,
        base_url=base,
        uri_scheme=options.name.replace("_", "-").strip("-") or "api",
        schemas=schemas.defs,
        operations=operations,
        schemes=known,
        skipped=skipped,
    )
