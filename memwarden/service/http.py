"""`memwarden serve`: the REST gateway and the MCP streamable HTTP endpoint (/mcp), one app.

Every request except /health and the OpenAPI document carries a bearer JWT (auth.py). A
thin ASGI layer in front of the routes gives each request an id, caps the body, checks the
token, applies the per-principal rate limit and writes one JSON access-log line; the routes
call the service core and nothing else.

Two more limits keep a few clients from denying service to the rest. A token's subject may
hold at most `max_connections_per_token` open connections (server.py puts each request's
connection in its scope): a request on one more is refused and its connection closed, so a
few tokens cannot fill the server's connection cap with idle keep-alives. And a client
address group (address_group: the addresses one client may send from count as one) gets
`auth_failures_burst` failed token checks (refilled at `auth_failures_per_minute`), then
429 before any signature is checked, so a flood of bad tokens cannot keep the event loop
busy verifying them; a token verified before still passes (checking it again costs
nothing), so agents already at work behind a shared address keep working.
"""

# Annotations stay evaluated at definition: the routes' schemas use the configured cap.

import contextlib
import datetime as _dt
import ipaddress
import json
import math
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator
from typing import IO, Annotated, Any, Literal

from fastapi import Body, Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from memwarden.service.auth import Verifier
from memwarden.service.core import MAX_QUERY_CHARS, MAX_TOP_K, MemoryService
from memwarden.service.errors import Principal, ServiceError
from memwarden.service.mcp_server import (
    AGENT_PATTERN,
    COMMIT_PATTERN,
    ID_PATTERN,
    ContextOut,
    DiffOut,
    Layer2Out,
    ProposeOut,
    ReadOut,
    SearchOut,
    SnapshotOut,
    StatusOut,
    Update,
    build_mcp,
)
from memwarden.service.request import safe_text
from memwarden.service.server import LINK, Link
from memwarden.version import __version__

# /docs and /redoc are off: undocumented pages that would load scripts from a CDN
PUBLIC = frozenset({"/health", "/openapi.json"})
# The defaults of [service] max_connections_per_token, auth_failures_per_minute and _burst
MAX_CONNECTIONS_PER_TOKEN = 8
AUTH_FAILURES_PER_MINUTE = 60
AUTH_FAILURES_BURST = 60
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class ErrorDetail(BaseModel):
    code: str
    message: str
    requestId: str | None = None


class ErrorOut(BaseModel):
    error: ErrorDetail


class HealthOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str
    version: str
    commit: str | None
    cache: dict[str, int]


class EntityOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    commit: str
    node: dict[str, Any]
    edges: list[dict[str, Any]]


class ProposeIn(BaseModel):
    """The propose-memory-update request (agentId comes from the path). Other fields are
    refused: `memwarden propose` would read some of them (params, agent_id) as the request."""

    model_config = ConfigDict(extra="forbid")
    runId: str = Field(pattern=ID_PATTERN)
    updates: list[Update] = Field(min_length=1)
    agentId: str | None = Field(default=None, pattern=AGENT_PATTERN)
    reasoning: str = Field(default="", max_length=4000)
    priority: Literal["normal", "high"] = "normal"
    proposalId: str | None = Field(default=None, pattern=ID_PATTERN)
    expectedVersion: int | None = Field(default=None, ge=0, le=2**31)
    factsUsed: list[Annotated[str, Field(pattern=ID_PATTERN)]] = Field(default=[],
                                                                       max_length=200)
    entityRefs: list[Annotated[str, Field(pattern=ID_PATTERN)]] = Field(default=[],
                                                                        max_length=200)
    # The run's record in the agent's timeline (apply writes them there; the gate judges them)
    task: str | None = Field(default=None, max_length=500)
    result: str | None = Field(default=None, max_length=500)
    durationSeconds: float | None = Field(default=None, ge=0, le=10**7)


class SnapshotIn(BaseModel):
    label: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    at: str | None = Field(default=None, pattern=COMMIT_PATTERN)


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text} for code, text in (
        (400, "A body that cannot be parsed"),
        (401, "No valid bearer token"), (403, "Scope or agent not granted"),
        (404, "Unknown agent, file, entity or proposal"), (409, "Already exists"),
        (413, "Body over the size cap"), (422, "Invalid input"),
        (429, "Rate limited, too many bad tokens from this address, or too many connections "
         "of this token"),
        (503, "Too many connections, or the repository or search index unavailable"))}


class _Bucket:
    """Token buckets per principal: `rate` requests a minute, bursts of `burst`."""

    def __init__(self, per_minute: int, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.state: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def take(self, who: str) -> float:
        """0 when allowed, else the seconds to wait."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self.lock:
            tokens, last = self.state.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1:
                self.state[who] = (tokens - 1, now)
                return 0.0
            self.state[who] = (tokens, now)
            return (1 - tokens) / self.rate


MAX_ADDRESSES = 65536  # client addresses whose failed token checks are remembered one by one


def address_group(address: str) -> str:
    """The key failed token checks of `address` are counted under: every loopback address
    is one (a local client may send from any of 127.0.0.0/8), an IPv4-mapped IPv6 address
    is its IPv4 one, and another IPv6 address is its /64 (what one site is given)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # not an IP address (a Unix socket): nothing to group
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return f"{ipaddress.IPv6Address(int(ip) >> 64 << 64)}/64"
    return str(ip)


class _Failures:
    """Failed token checks per client address (its address_group), a token bucket each:
    `burst` of them, then one more every 60/`per_minute` seconds. Addresses whose bucket
    is full again are forgotten; while more than MAX_ADDRESSES are still being limited, any
    other address shares one bucket (the table stays bounded, and a new address is not let
    off)."""

    def __init__(self, per_minute: int, burst: int) -> None:
        self.rate = max(1, per_minute) / 60.0
        self.burst = float(max(1, burst))
        self.state: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()
        self.skip = 0  # new addresses to send to the shared bucket before the next sweep

    def _key(self, address: str, now: float) -> str:
        if address in self.state or len(self.state) < MAX_ADDRESSES:
            return address
        if self.skip > 0:
            self.skip -= 1
            return "*"
        self.state = {a: (t, last) for a, (t, last) in self.state.items()
                      if t + (now - last) * self.rate < self.burst}
        if len(self.state) < MAX_ADDRESSES:
            return address
        # a sweep that freed nothing waits for as many new addresses as it looked at, so
        # many addresses cannot make every request pay for one
        self.skip = len(self.state)
        return "*"

    def wait(self, address: str) -> float:
        """0 when `address` may have one more token checked, else the seconds until it may."""
        now = time.monotonic()
        with self.lock:
            held = self.state.get(self._key(address, now))
            if held is None:
                return 0.0
            tokens = min(self.burst, held[0] + (now - held[1]) * self.rate)
            return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def failed(self, address: str) -> None:
        """Count one failed token check of `address`."""
        now = time.monotonic()
        with self.lock:
            key = self._key(address, now)
            tokens, last = self.state.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            self.state[key] = (max(0.0, tokens - 1), now)


class _Holds:
    """Open connections per token subject. A connection is held by the subject of the
    last authenticated request on it, and let go when it closes (server.Link); the event
    loop's thread is the only one that calls in, so there is no lock."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.holder: dict[Link, str] = {}
        self.count: dict[str, int] = {}

    def claim(self, link: Link | None, sub: str) -> bool:
        """Whether `sub` may use the connection `link` (None: not a network connection)."""
        if link is None or self.holder.get(link) == sub:
            return True
        if not link.open:
            return True  # closed already: nothing to hold, and the answer goes nowhere
        if self.count.get(sub, 0) >= self.limit:
            return False
        self.release(link)
        self.holder[link] = sub
        self.count[sub] = self.count.get(sub, 0) + 1
        link.on_close(lambda: self.release(link))
        return True

    def release(self, link: Link) -> None:
        sub = self.holder.pop(link, None)
        if sub is None:
            return
        left = self.count[sub] - 1
        if left:
            self.count[sub] = left
        else:
            del self.count[sub]


class _AccessLog:
    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        if self.stream is None:
            return
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self.lock:
            try:
                self.stream.write(line)
                self.stream.flush()
            except (OSError, ValueError):
                pass


class _Gate:
    """Request id, body cap, authentication, rate limit and access log (pure ASGI, so the
    MCP endpoint passes through it too)."""

    def __init__(self, app: Any, verifier: Verifier, max_body: int, bucket: _Bucket,
                 log: _AccessLog, holds: _Holds, failures: _Failures) -> None:
        self.app = app
        self.verifier = verifier
        self.max_body = max_body
        self.bucket = bucket
        self.log = log
        self.holds = holds
        self.failures = failures

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope.get("headers") or [])
        rid = headers.get(b"x-request-id", b"").decode("latin-1")
        if not _REQUEST_ID.match(rid):
            rid = uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        status = {"code": 500, "bytes": 0}
        who: str | None = None

        async def send_wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [*message.get("headers", []),
                                      (b"x-request-id", rid.encode())]
            elif message["type"] == "http.response.body":
                status["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            refusal, extra = self._check(scope, headers, state)
            who = state.get("principal").sub if state.get("principal") else None
            if refusal is not None:
                await _send_error(send_wrapped, refusal, rid, extra)
                return
            if scope.get("method") in ("POST", "PUT", "PATCH"):
                body, ok = await self._buffered(receive)
                if body is None and ok:
                    return  # the client left (or was dropped) before its body came
                if not ok:
                    await _send_error(send_wrapped, ServiceError(
                        413, "body_too_large", f"the body is over {self.max_body} bytes; "
                        "send less (split a proposal)"), rid)
                    return
                if _too_deep(body):
                    # json.loads would recurse into it (REST and MCP alike) and fail with
                    # a RecursionError
                    await _send_error(send_wrapped, ServiceError(
                        422, "nested_too_deeply", f"the body nests arrays or objects more "
                        f"than {MAX_JSON_DEPTH} levels deep; send a flat JSON document"), rid)
                    return
                if scope.get("path") == "/mcp" and _lone_surrogate(body):
                    # the MCP SDK would fail with a 500 writing its answer, which quotes it
                    await _send_error(send_wrapped, ServiceError(
                        422, "invalid_text", "the body holds a lone surrogate (an escape such "
                        "as \\ud800 without its pair), which is not Unicode text; send "
                        "UTF-8 text"), rid)
                    return
                receive = _replay(body, receive)
            await self.app(scope, receive, send_wrapped)
        finally:
            self.log.write({
                "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
                "requestId": rid, "method": scope.get("method"), "path": scope.get("path"),
                "status": status["code"], "ms": round((time.perf_counter() - started) * 1000,
                                                      2),
                "principal": who, "bytes": status["bytes"]})

    def _check(self, scope: dict[str, Any], headers: dict[bytes, bytes],
               state: dict[str, Any]) -> tuple[ServiceError | None, list[tuple[bytes, bytes]]]:
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                return ServiceError(400, "bad_length", "Content-Length is not a number"), []
            if int(length) > self.max_body:
                return ServiceError(413, "body_too_large", f"the body is over {self.max_body}"
                                    " bytes; send less (split a proposal)"), []
        if sum(1 for name, _ in scope.get("headers") or () if name == b"authorization") > 1:
            # the gate would check one and the MCP SDK act on another
            return ServiceError(400, "duplicate_authorization", "the request has more than "
                                "one Authorization header; send exactly one"), []
        if scope.get("path") in PUBLIC:
            return None, []
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return ServiceError(401, "unauthorized", "send Authorization: Bearer <JWT> "
                                "(memwarden token issue makes one for development)"), \
                [(b"www-authenticate", b'Bearer realm="memwarden"')]
        token = token.strip()
        client = scope.get("client")
        address = address_group(str(client[0])) if client else "-"
        if not self.verifier.known(token):
            wait = self.failures.wait(address)
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                return ServiceError(429, "too_many_auth_failures", "too many requests with "
                                    "tokens that are not valid came from this address; retry "
                                    f"in {seconds} s with a valid token"), \
                    [(b"retry-after", str(seconds).encode())]
        try:
            principal, _claims = self.verifier.verify(token)
        except ServiceError as exc:
            self.failures.failed(address)
            return exc, [(b"www-authenticate", b'Bearer realm="memwarden", '
                          b'error="invalid_token"')]
        if not self.holds.claim(scope.get(LINK), principal.sub):
            return ServiceError(429, "too_many_connections_for_token", f"{principal.sub} "
                                f"holds {self.holds.limit} open connections already, the "
                                "most one token subject may; send this request on one of "
                                "them (keep-alive), or close one first"), \
                [(b"retry-after", b"1"), (b"connection", b"close")]
        state["principal"] = principal
        wait = self.bucket.take(principal.sub)
        if wait > 0:
            return ServiceError(429, "rate_limited", f"too many requests from {principal.sub}; "
                                f"retry in {wait:.1f} s"), \
                [(b"retry-after", str(max(1, int(wait + 0.999))).encode())]
        return None, []

    async def _buffered(self, receive: Any) -> tuple[bytes | None, bool]:
        """Read the whole body (at most the cap) before the app runs: (the body, whether
        it stayed within the cap); (None, True) when the client is gone first."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None, True  # http.disconnect: nobody is left to answer
            size += len(message.get("body", b""))
            if size > self.max_body:
                return None, False
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        return b"".join(chunks), True


def _replay(body: bytes, receive: Any) -> Any:
    """A receive() that gives the app the buffered body, then what the client sends."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


MAX_JSON_DEPTH = 64  # no request of the service nests half as deep
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*+"|[\[\]{}]')


def _too_deep(body: bytes) -> bool:
    """Whether a JSON body nests arrays and objects deeper than MAX_JSON_DEPTH (a scan
    that skips strings, needing no parse)."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    depth = 0
    for m in _JSON_TOKEN.finditer(body):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif tok in (b"]", b"}"):
            depth -= 1
    return False


# What json.loads (the MCP SDK's parser) can make a lone surrogate of: a \u escape, one
# encoded as UTF-8 bytes (it decodes with surrogatepass), or a UTF-16 or UTF-32 text (NULs)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]|\x00")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(body: bytes) -> bool:
    """Whether a JSON body holds a lone surrogate in a string or a key (a pair has become
    one character once parsed, so any surrogate left is lone)."""
    if not _SURROGATE_ESCAPE.search(body):
        return False
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return False  # not JSON: the MCP SDK answers with its parse error
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


async def _send_error(send: Any, err: ServiceError, rid: str,
                      extra: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    body = json.dumps({"error": {"code": err.code, "message": safe_text(err.message),
                                 "requestId": rid}}, ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": err.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *extra]})
    await send({"type": "http.response.body", "body": body})


def _error_response(request: Request, err: ServiceError,
                    headers: dict[str, str] | None = None) -> JSONResponse:
    rid = request.scope.get("state", {}).get("request_id")
    if err.status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": "Bearer"}
    # safe_text: a message may quote the client's input, lone surrogates included
    return JSONResponse({"error": {"code": err.code, "message": safe_text(err.message),
                                   "requestId": rid}}, status_code=err.status, headers=headers)


# Starlette's and FastAPI's own refusals by status, in the service's error shape
_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
               413: "body_too_large", 415: "unsupported_media_type"}
_UNPARSED = "There was an error parsing the body"  # FastAPI's, e.g. for a non-UTF-8 body


_bearer = HTTPBearer(auto_error=False, description="A JWT from your operator "
                     "(memwarden token issue for development)")


async def _principal(request: Request,
                     _creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
                     ) -> Principal:
    # async: a plain function would hop to a thread pool on every request
    principal = request.scope.get("state", {}).get("principal")
    if principal is None:
        raise ServiceError(401, "unauthorized", "send Authorization: Bearer <JWT>")
    return principal


Who = Annotated[Principal, Depends(_principal)]
AgentPath = Annotated[str, Path(pattern=AGENT_PATTERN, max_length=128,
                                description="The agent's id, like archivist-violin")]
AtQuery = Annotated[str | None, Query(pattern=COMMIT_PATTERN,
                                      description="A commit id of main (default: main now)")]


def _json(text: str) -> Response:
    return Response(text, media_type="application/json")


def create_app(service: MemoryService, verifier: Verifier, log_stream: IO[str] | None = None
               ) -> FastAPI:
    """The whole HTTP app: REST routes, /health, OpenAPI, and MCP at /mcp."""
    settings = service.settings
    cap = service.cap
    mcp = build_mcp(service, verifier=verifier, http=True)
    mcp_app = mcp.streamable_http_app()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield
        service.close()

    app = FastAPI(title="memwarden", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, responses=_ERRORS,
                  description="Agents' long-term memory, governed in git: reads from a "
                  "commit of main, writes as proposals.")
    max_updates = int(settings["max_updates"])

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return _error_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts, errors = [], exc.errors()
        for e in errors[:5]:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            parts.append(f"{where}: {e.get('msg')}")
        unknown = bool(errors) and errors[0].get("type") == "extra_forbidden"
        return _error_response(request, ServiceError(
            422, "unknown_field" if unknown else "invalid_input",
            "; ".join(parts) or "invalid input"))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = str(exc.detail)
        if exc.status_code == 400 and message == _UNPARSED:
            message = ("the body could not be read as JSON (it must be UTF-8 text); send "
                       "one JSON object")
        return _error_response(request, ServiceError(
            exc.status_code, _HTTP_CODES.get(exc.status_code, "http_error"), message),
            dict(exc.headers) if exc.headers else None)

    @app.get("/health", response_model=HealthOut, tags=["operations"])
    async def health() -> dict[str, Any]:
        """Liveness and what is served: main's commit, cache state, version (no auth)."""
        return await service.call(service.health)

    @app.get("/memory/search", response_model=SearchOut, tags=["memory"])
    async def search(who: Who,
                     q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
                     agent: Annotated[str | None, Query(pattern=AGENT_PATTERN)] = None,
                     # an int range, not Literal[1, 2]: a query string's "2" is no int 2
                     layer: Annotated[int | None, Query(ge=1, le=2)] = None,
                     top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K)] = 10,
                     at: AtQuery = None) -> Any:
        """BM25 search (as `memwarden search --format json`)."""
        return await service.call(service.search, who, q, agent, layer, top_k, at)

    @app.get("/memory/{agentId}/read", response_model=ReadOut, tags=["memory"],
             response_class=Response, responses={200: {"model": ReadOut,
                                                        "content": {"application/json": {}}}})
    async def read(who: Who, agentId: AgentPath,
                   mode: Literal["basic", "wide", "deep", "temporal"] = "basic",
                   maxTokens: Annotated[int | None, Query(ge=1, le=cap)] = None,
                   at: AtQuery = None,
                   since: Annotated[str | None, Query(max_length=40)] = None) -> Response:
        """The read-memory response: byte for byte `memwarden read --format json`."""
        if at is None:
            hit = service.cached_read(who, agentId, mode, maxTokens, since)
            if hit is not None:
                return _json(hit)
        return _json(await service.call(service.read, who, agentId, mode, maxTokens, at,
                                        since))

    @app.post("/memory/{agentId}/propose", response_model=ProposeOut, status_code=201,
              tags=["memory"])
    async def propose(who: Who, agentId: AgentPath, body: Annotated[ProposeIn, Body()]
                      ) -> Any:
        """A proposal branch with one commit (`memwarden propose`); main never moves."""
        if len(body.updates) > max_updates:
            raise ServiceError(422, "too_many_updates", f"at most {max_updates} updates per "
                               "proposal; split the change")
        doc = body.model_dump(exclude_none=True)
        doc["updates"] = [u.model_dump(exclude_none=True) for u in body.updates]
        return await service.call(service.propose, who, agentId, doc)

    @app.get("/memory/{agentId}/diff", response_model=DiffOut, tags=["memory"],
             response_class=Response, responses={200: {"model": DiffOut,
                                                        "content": {"application/json": {}}}})
    async def diff(who: Who, agentId: AgentPath,
                   since: Annotated[str | None, Query(max_length=40)] = None,
                   frm: Annotated[str | None, Query(alias="from", pattern=COMMIT_PATTERN)] = None,
                   to: AtQuery = None,
                   files: Annotated[list[str] | None, Query(max_length=20)] = None,
                   maxTokens: Annotated[int | None, Query(ge=1, le=cap)] = None) -> Response:
        """Per-file unified diffs (as `memwarden diff --format json`)."""
        return _json(await service.call(service.diff, who, agentId, since, frm, to, files,
                                        maxTokens))

    @app.post("/memory/{agentId}/snapshot", response_model=SnapshotOut, status_code=201,
              tags=["memory"])
    async def snapshot(who: Who, agentId: AgentPath, body: Annotated[SnapshotIn, Body()]
                       ) -> Any:
        """A verified snapshot archive in the server's snapshot folder."""
        return await service.call(service.snapshot, who, agentId, body.label, body.at)

    @app.get("/memory/{agentId}/context", response_model=ContextOut, tags=["memory"])
    async def context(who: Who, agentId: AgentPath,
                      hint: Annotated[str | None, Query(max_length=MAX_QUERY_CHARS)] = None,
                      maxTokens: Annotated[int | None, Query(ge=1, le=cap)] = None,
                      top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K)] = 10,
                      at: AtQuery = None) -> Any:
        """The context snapshot (as `memwarden context --budget`)."""
        return await service.call(service.context, who, agentId, hint, maxTokens, top_k, at)

    @app.get("/memory/{agentId}/layer2", response_model=Layer2Out, tags=["memory"])
    async def layer2(who: Who, agentId: AgentPath,
                     file: Annotated[str, Query(min_length=1, max_length=200)],
                     maxTokens: Annotated[int | None, Query(ge=1, le=cap)] = None,
                     at: AtQuery = None) -> Any:
        """One Layer 2 file on explicit request."""
        return await service.call(service.layer2, who, agentId, file, maxTokens, at)

    @app.get("/entities/{entityId}", response_model=EntityOut, tags=["memory"])
    async def entity(who: Who,
                     entityId: Annotated[str, Path(min_length=1, max_length=200)],
                     at: AtQuery = None) -> Any:
        """One entity and its edges (as `memwarden entities ID --format json`)."""
        return await service.call(service.entity, who, entityId, at)

    @app.get("/proposals/{proposalId}", response_model=StatusOut, tags=["proposals"])
    async def proposal(who: Who,
                       proposalId: Annotated[str, Path(pattern=ID_PATTERN)]) -> Any:
        """A proposal's lifecycle (as `memwarden status ID --format json`)."""
        return await service.call(service.proposal_status, who, proposalId)

    async def mcp_or_404(scope: Any, receive: Any, send: Any) -> None:
        rid = scope.get("state", {}).get("request_id", "")
        if scope["type"] == "http" and scope.get("path") != "/mcp":
            await _send_error(send, ServiceError(404, "not_found", "no such route; see "
                                                 "/openapi.json, or /mcp for MCP"), rid)
            return
        if scope["type"] == "http" and scope.get("method") == "GET":
            # Stateless MCP never sends on a GET stream, which would hold a connection
            # (and its slot under the cap) open for good with a ping every 15 s.
            await _send_error(send, ServiceError(405, "method_not_allowed", "GET /mcp "
                                                 "opens no stream here; POST JSON-RPC "
                                                 "requests to /mcp"), rid,
                              [(b"allow", b"POST")])
            return
        await mcp_app(scope, receive, send)

    app.mount("/", mcp_or_404)  # /mcp: after every REST route, so those match first
    bucket = _Bucket(int(settings["rate_limit_per_minute"]), int(settings["rate_limit_burst"]))
    holds = _Holds(int(settings.get("max_connections_per_token", MAX_CONNECTIONS_PER_TOKEN)))
    failures = _Failures(int(settings.get("auth_failures_per_minute", AUTH_FAILURES_PER_MINUTE)),
                         int(settings.get("auth_failures_burst", AUTH_FAILURES_BURST)))
    gate = _Gate(app, verifier, int(settings["max_body_bytes"]), bucket, _AccessLog(log_stream),
                 holds, failures)
    gate.fastapi = app  # type: ignore[attr-defined]  # the OpenAPI document and tests
    return gate  # type: ignore[return-value]
