"""The propose-memory-update request as the service takes it: its fields, the schema of one
update, and the check of a request as `memwarden propose` will read it.

`memwarden propose` (apply/propose.py) is lenient for files people write by hand: it takes
snake_case spellings and merges a `"params"` object over the top level. The service takes
only the documented camelCase fields, and checks agentId and the updates in the document
`parse_request` will actually see, so nothing inside the request can name another agent or
slip updates past the service's limits. REST (http.py), MCP (mcp_server.py) and the core
(core.py) all go through `check_request`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memwarden.apply.propose import as_read
from memwarden.service.errors import ServiceError

# The documented request fields (agentId comes from the path or the token).
FIELDS = ("agentId", "runId", "updates", "reasoning", "priority", "proposalId",
          "expectedVersion", "factsUsed", "entityRefs", "task", "result", "durationSeconds")
# Every key under which apply/propose.py's parse_request reads the agent.
AGENT_KEYS = ("agentId", "agent_id")


class Update(BaseModel):
    """One change of a proposal (the propose-memory-update contract)."""

    model_config = ConfigDict(extra="forbid")
    operation: Literal["append", "replace", "close", "remove_entry", "add_loop",
                       "add_decision"]
    file: str | None = Field(default=None, max_length=200, description=(
        "A file inside memory/<agent>/, e.g. facts.md, open_loops.md, decisions.md"))
    content: str | None = Field(default=None, max_length=65536)
    section: str | None = Field(default=None, max_length=200, description=(
        "The ## heading to append under (required for facts.md)"))
    loopId: str | None = Field(default=None, max_length=130)
    entryId: str | None = Field(default=None, max_length=130)
    title: str | None = Field(default=None, max_length=500)
    status: str | None = Field(default=None, max_length=100)
    resolution: str | None = Field(default=None, max_length=2000)
    loopPriority: Literal["high", "normal", "low"] | None = None


def check_request(agent: str, request: Any, max_updates: int, max_update_bytes: int
                  ) -> dict[str, Any]:
    """The request to hand to `propose`, for `agent` only; ServiceError otherwise."""
    if not isinstance(request, dict):
        raise ServiceError(422, "invalid_request", "the request must be a JSON object "
                           "with runId and updates")
    seen = as_read(request)  # what propose will read
    for key in AGENT_KEYS:
        if key in seen and seen[key] != agent:
            raise ServiceError(403, "other_agent", f"{key} {_show(seen[key])} in the body "
                               f"differs from the agent {agent!r} in the path; propose only "
                               "for yourself")
    updates = check_updates(seen.get("updates"), max_updates, max_update_bytes)
    unknown = sorted((k for k in request if k not in FIELDS), key=str)
    if unknown:
        raise ServiceError(422, "unknown_field", f"{_show(unknown[0])}: not a field of "
                           f"propose-memory-update; send only {', '.join(FIELDS[1:])}")
    doc = dict(request)
    doc["agentId"] = agent
    doc["updates"] = updates
    return doc


def check_updates(updates: Any, max_updates: int, max_update_bytes: int
                  ) -> list[dict[str, Any]]:
    """The updates, each checked against `Update` and the size cap (as normalised dicts)."""
    if not isinstance(updates, list) or not updates:
        raise ServiceError(422, "invalid_request", "updates: expected a non-empty list of "
                           "changes")
    if len(updates) > max_updates:
        raise ServiceError(422, "too_many_updates", f"{len(updates)} updates: at most "
                           f"{max_updates} per proposal; split the change into several "
                           "proposals")
    out = []
    for i, u in enumerate(updates):
        size = json_bytes(u, f"updates[{i}]")
        if size > max_update_bytes:
            raise ServiceError(422, "update_too_large", f"updates[{i}] is {size} bytes: at "
                               f"most {max_update_bytes}; write less, or several proposals")
        try:
            out.append(Update.model_validate(u).model_dump(exclude_none=True))
        except ValidationError as exc:
            raise ServiceError(422, "invalid_update",
                               describe(exc, f"updates[{i}]")) from None
    return out


def json_bytes(value: Any, where: str) -> int:
    """The UTF-8 size of `value` as JSON; a 422 for text that is not valid Unicode."""
    try:
        return len(json.dumps(value, ensure_ascii=False).encode())
    except UnicodeEncodeError:
        raise ServiceError(422, "invalid_text", f"{where}: not valid Unicode text (a lone "
                           "surrogate such as \\ud800); send UTF-8 text") from None
    except (TypeError, ValueError, RecursionError):
        raise ServiceError(422, "invalid_request", f"{where}: not a JSON value") from None


def describe(exc: ValidationError, where: str = "") -> str:
    """The first few problems of a pydantic error as 'field: what is wrong' sentences
    (without pydantic's echo of the input and its links)."""
    parts = []
    for e in exc.errors()[:5]:
        path = where
        for x in e.get("loc", ()):
            path += f"[{x}]" if isinstance(x, int) else f".{x}" if path else str(x)
        parts.append(f"{path or 'input'}: {e.get('msg')}")
    return safe_text("; ".join(parts) or f"{where or 'input'}: invalid")


def safe_text(text: str) -> str:
    """`text` with anything UTF-8 cannot carry (lone surrogates) escaped, so an error
    message that quotes the client's input can always be sent back."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _show(value: Any) -> str:
    return safe_text(repr(value)[:100])
