"""`memwarden mcp`: the memory tools over the Model Context Protocol (official `mcp` SDK).

Nine tools keep the product's names. Inputs carry their ceilings in the schema (modes,
maxTokens <= the server's cap, top_k <= 50, the number and size of updates); outputs have
schemas; reads are marked read-only and idempotent. A refusal is a tool error whose text
says what to do instead. Over stdio the caller is the configured agent (stdio carries no
credentials); over streamable HTTP it is the bearer token's subject, checked by the SDK's
token verifier and then by the same rules as REST.
"""

# Annotations stay evaluated at definition: the tools' schemas use the configured cap.

import json
import logging
from typing import Annotated, Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memwarden.service.auth import Verifier
from memwarden.service.core import MAX_QUERY_CHARS, MAX_TOP_K, MemoryService
from memwarden.service.errors import Principal, ServiceError
from memwarden.service.request import Update, describe, safe_text

AGENT_PATTERN = r"^[a-z0-9][a-z0-9-]{0,127}$"
COMMIT_PATTERN = r"^[0-9a-f]{7,40}$"
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_log = logging.getLogger("memwarden.service")
READ = ToolAnnotations(readOnlyHint=True, idempotentHint=True, destructiveHint=False,
                       openWorldHint=False)

AgentArg = Annotated[str | None, Field(default=None, pattern=AGENT_PATTERN, description=(
    "The agent whose memory to use; default: your own agent."))]
AtArg = Annotated[str | None, Field(default=None, pattern=COMMIT_PATTERN, description=(
    "A commit id from main's history (default: main now)."))]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ReadOut(_Open):
    agentId: str
    version: int
    commit: str
    mode: str
    tokenCount: int
    content: dict[str, str]
    truncated: list[str]
    excluded: list[dict[str, Any]]
    meta: dict[str, Any]


class DiffOut(_Open):
    agentId: str
    tokenCount: int
    files: dict[str, str]
    diff: dict[str, str]
    truncated: list[Any]


class SearchOut(_Open):
    query: str
    commit: str
    results: list[dict[str, Any]]


class ContextOut(_Open):
    agentId: str
    commit: str
    budget: int
    tokenCount: int
    layer1: list[dict[str, Any]]
    sources: list[dict[str, Any]]
    dropped: list[Any]


class Layer2Out(_Open):
    agentId: str
    commit: str
    file: str
    tokenCount: int
    content: str
    truncated: bool


class EntitiesOut(_Open):
    commit: str


class ProposeOut(_Open):
    proposalId: str
    status: str
    branch: str
    commit: str
    targetFiles: list[str]
    diffBytes: int


class SnapshotOut(_Open):
    snapshotId: str
    label: str
    agentId: str
    gitCommit: str
    sha256: str
    size: int


class StatusOut(_Open):
    proposalId: str
    state: str | None
    history: list[dict[str, Any]]


def _result(doc: dict[str, Any], text: str | None = None) -> CallToolResult:
    body = text if text is not None else json.dumps(doc, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=body)], structuredContent=doc)


def build_mcp(service: MemoryService, stdio_principal: Principal | None = None,
              verifier: Verifier | None = None, http: bool = False) -> FastMCP:
    """The MCP server over `service`. `stdio_principal` is the caller over stdio; over
    HTTP `verifier` checks the bearer token of every request."""
    settings = service.settings
    cap = service.cap
    max_updates = int(settings["max_updates"])
    kwargs: dict[str, Any] = {}
    if http:
        from mcp.server.auth.settings import AuthSettings
        from mcp.server.transport_security import TransportSecuritySettings

        assert verifier is not None
        kwargs["token_verifier"] = _SdkVerifier(verifier)
        kwargs["auth"] = AuthSettings(issuer_url="http://127.0.0.1/", resource_server_url=None,
                                      required_scopes=[])
        hosts = list(settings.get("allowed_hosts") or [])
        kwargs["transport_security"] = TransportSecuritySettings(
            enable_dns_rebinding_protection=not hosts or "*" not in hosts,
            allowed_hosts=[*hosts, "127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    mcp = _Server("memwarden", instructions=(
        "Long-term memory of agents, governed in git. Start a run with read-memory (mode "
        "basic); propose changes with propose-memory-update (they land after review); use "
        "memory-search, memory-context and memory-layer2 for more."),
        stateless_http=True, json_response=True, streamable_http_path="/mcp",
        log_level="WARNING", **kwargs)

    def who() -> Principal:
        if stdio_principal is not None:
            return stdio_principal
        token = get_access_token()
        if token is None or verifier is None:
            raise ServiceError(401, "unauthorized", "no bearer token; send one")
        return verifier.verify(token.token)[0]

    def own(p: Principal, agent: str | None) -> str:
        if agent is not None:
            return agent
        if p.sub in p.agents and _is_agent(p.sub):
            return p.sub
        raise ServiceError(422, "agent_required", "pass agentId: your identity is not an "
                           "agent id")

    async def call(method: Any, *args: Any, **kw: Any) -> Any:
        try:
            return await service.call(method, *args, **kw)
        except ServiceError as exc:
            raise ToolFailure(exc) from None
        except Exception:
            # the model sees a refusal, never a Python error's text; the operator the rest
            _log.exception("memwarden: tool call failed")
            raise ToolFailure(ServiceError(500, "internal_error", "the server failed on "
                                           "this call; the operator's log has the "
                                           "details")) from None

    @mcp.tool(name="read-memory", annotations=READ, description=(
        "Load an agent's memory at one commit of main within a token budget. mode basic = "
        "snapshot + open loops (start here); wide adds facts and the last 5 decisions; deep "
        "and temporal add changelog, timeline and diffs. What did not fit is listed in "
        "'truncated'/'excluded'."))
    async def read_memory(
            agentId: AgentArg = None,
            mode: Literal["basic", "wide", "deep", "temporal"] = "basic",
            maxTokens: Annotated[int | None, Field(ge=1, le=cap, description=(
                f"Budget for the whole response (at most {cap}))"))] = None,
            at: AtArg = None,
            since: Annotated[str | None, Field(max_length=40, description=(
                "temporal mode: diffs since this date (YYYY-MM-DD)"))] = None,
    ) -> Annotated[CallToolResult, ReadOut]:
        p = who()
        text = await call(service.read, p, own(p, agentId), mode, maxTokens, at, since)
        return _result(json.loads(text), text)

    @mcp.tool(name="propose-memory-update", description=(
        "Propose a change to your agent's memory: it becomes a proposal branch that the "
        "gate checks and apply lands on main later (never directly). Returns the "
        "proposalId; follow it with proposal-status."), annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False))
    async def propose_memory_update(
            runId: Annotated[str, Field(pattern=ID_PATTERN, description=(
                "Your run's id"))],
            updates: Annotated[list[Update], Field(min_length=1, max_length=max_updates)],
            agentId: AgentArg = None,
            reasoning: Annotated[str, Field(max_length=4000)] = "",
            priority: Literal["normal", "high"] = "normal",
            proposalId: Annotated[str | None, Field(default=None, pattern=ID_PATTERN)] = None,
            expectedVersion: Annotated[int | None, Field(default=None, ge=0,
                                                         le=2**31)] = None,
            factsUsed: Annotated[list[Annotated[str, Field(pattern=ID_PATTERN)]],
                                 Field(max_length=200)] = [],  # noqa: B006
            entityRefs: Annotated[list[Annotated[str, Field(pattern=ID_PATTERN)]],
                                  Field(max_length=200)] = [],  # noqa: B006
            task: Annotated[str | None, Field(default=None, max_length=500, description=(
                "What the run was asked to do (recorded in your timeline)"))] = None,
            result: Annotated[str | None, Field(default=None, max_length=500, description=(
                "What the run achieved (recorded in your timeline)"))] = None,
            durationSeconds: Annotated[float | None, Field(default=None, ge=0,
                                                           le=10**7)] = None,
    ) -> Annotated[CallToolResult, ProposeOut]:
        p = who()
        agent = own(p, agentId)
        doc: dict[str, Any] = {"agentId": agent, "runId": runId, "reasoning": reasoning,
                               "priority": priority,
                               "updates": [u.model_dump(exclude_none=True) for u in updates]}
        for key, value in (("proposalId", proposalId), ("expectedVersion", expectedVersion),
                           ("task", task), ("result", result),
                           ("durationSeconds", durationSeconds)):
            if value is not None:
                doc[key] = value
        if factsUsed:
            doc["factsUsed"] = factsUsed
        if entityRefs:
            doc["entityRefs"] = entityRefs
        return _result(await call(service.propose, p, agent, doc))

    @mcp.tool(name="memory-diff", annotations=READ, description=(
        "What changed in an agent's memory: per-file unified diffs between two commits of "
        "main (from/to) or since a date."))
    async def memory_diff(
            agentId: AgentArg = None,
            since: Annotated[str | None, Field(default=None, max_length=40)] = None,
            fromCommit: Annotated[str | None, Field(default=None, pattern=COMMIT_PATTERN,
                                                    description="start of the range")] = None,
            to: AtArg = None,
            files: Annotated[list[Annotated[str, Field(max_length=200)]] | None,
                             Field(default=None, max_length=20)] = None,
            maxTokens: Annotated[int | None, Field(ge=1, le=cap)] = None,
    ) -> Annotated[CallToolResult, DiffOut]:
        p = who()
        text = await call(service.diff, p, own(p, agentId), since, fromCommit, to, files,
                          maxTokens)
        return _result(json.loads(text), text)

    @mcp.tool(name="memory-snapshot", description=(
        "Write a verified, reproducible snapshot (tar.gz with a sha256 manifest) of an "
        "agent's files at a commit into the server's snapshot folder."),
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False,
                                    idempotentHint=False, openWorldHint=False))
    async def memory_snapshot(
            label: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")],
            agentId: AgentArg = None,
            at: AtArg = None,
    ) -> Annotated[CallToolResult, SnapshotOut]:
        p = who()
        return _result(await call(service.snapshot, p, own(p, agentId), label, at))

    @mcp.tool(name="memory-search", annotations=READ, description=(
        "BM25 search over the memory of main: best entries first, each with file, line and "
        "excerpt. Pass agentId to search one agent (needed unless you may read every "
        "agent); layer 2 searches decisions, changelog, timeline and runs."))
    async def memory_search(
            query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)],
            agentId: AgentArg = None,
            layer: Literal[1, 2] | None = None,
            top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K)] = 10,
            at: AtArg = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        p = who()
        agent = agentId
        if agent is None and not p.reads_everything:
            agent = own(p, None)
        return _result(await call(service.search, p, query, agent, layer, top_k, at))

    @mcp.tool(name="memory-context", annotations=READ, description=(
        "The context snapshot for a run: Layer 1, the agent's sources and, with a hint, "
        "the best search hits, whole items within the budget (what did not fit is listed "
        "in 'dropped')."))
    async def memory_context(
            agentId: AgentArg = None,
            hint: Annotated[str | None, Field(default=None, max_length=MAX_QUERY_CHARS)] = None,
            maxTokens: Annotated[int | None, Field(ge=1, le=cap)] = None,
            top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K)] = 10,
            at: AtArg = None,
    ) -> Annotated[CallToolResult, ContextOut]:
        p = who()
        return _result(await call(service.context, p, own(p, agentId), hint, maxTokens,
                                  top_k, at))

    @mcp.tool(name="memory-entities", annotations=READ, description=(
        "The entity graph from [[wiki-links]] and Entity-Refs: one entity with its edges, "
        "or without entityId the entity ids (first 'limit')."))
    async def memory_entities(
            entityId: Annotated[str | None, Field(default=None, max_length=200)] = None,
            limit: Annotated[int, Field(ge=1, le=500)] = 100,
            at: AtArg = None,
    ) -> Annotated[CallToolResult, EntitiesOut]:
        p = who()
        return _result(await call(service.entity, p, entityId, at, limit))

    @mcp.tool(name="memory-layer2", annotations=READ, description=(
        "Read one Layer 2 file on explicit request (decisions.md, changelog.md, "
        "relationships.md, timeline/<date>.md, runs/run_<id>.md), whole lines within the "
        "budget; 'truncated' says when it was cut."))
    async def memory_layer2(
            file: Annotated[str, Field(min_length=1, max_length=200)],
            agentId: AgentArg = None,
            maxTokens: Annotated[int | None, Field(ge=1, le=cap)] = None,
            at: AtArg = None,
    ) -> Annotated[CallToolResult, Layer2Out]:
        p = who()
        return _result(await call(service.layer2, p, own(p, agentId), file, maxTokens, at))

    @mcp.tool(name="proposal-status", annotations=READ, description=(
        "A proposal's lifecycle (pending, approved, applying, applied, failed, rejected) "
        "with links run -> proposal -> commit -> changelog -> timeline."))
    async def proposal_status(
            proposalId: Annotated[str, Field(pattern=ID_PATTERN)],
    ) -> Annotated[CallToolResult, StatusOut]:
        return _result(await call(service.proposal_status, who(), proposalId))

    return mcp


class _Server(FastMCP):
    """FastMCP whose refusals of arguments read like the service's others: an unknown
    argument is refused (FastMCP would drop it silently), and an invalid one is named with
    what is wrong, without pydantic's echo of the input or its links."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            known = tool.parameters.get("properties", {})
            unknown = sorted((k for k in arguments or {} if k not in known), key=str)
            if unknown:
                raise ToolError(_refusal(name, ServiceError(
                    422, "unknown_field", f"{unknown[0]!r}: not an argument of {name}")))
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_refusal(name, ServiceError(
                    422, "invalid_input", describe(exc.__cause__)))) from None
            raise


def _refusal(tool: str, err: ServiceError) -> str:
    return f"Error executing tool {tool}: {ToolFailure(err)}"


def _is_agent(sub: str) -> bool:
    from memwarden.service.core import AGENT_RE

    return bool(AGENT_RE.match(sub))


class ToolFailure(Exception):
    """A refusal as the model sees it: the code and what to do."""

    def __init__(self, err: ServiceError) -> None:
        super().__init__(safe_text(f"{err.code} ({err.status}): {err.message}"))


class _SdkVerifier:
    """The SDK's TokenVerifier over memwarden's Verifier."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            principal, claims = self.verifier.verify(token)
        except ServiceError:
            return None
        return AccessToken(token=token, client_id=principal.sub,
                           scopes=sorted(principal.scopes), expires_at=int(claims["exp"]),
                           subject=principal.sub)
