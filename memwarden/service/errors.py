"""The service's one error type and who may do what (shared by REST and MCP)."""

from __future__ import annotations

from dataclasses import dataclass

SCOPES = ("memory:read", "memory:propose", "memory:snapshot", "memory:admin")


class ServiceError(Exception):
    """A refusal with its HTTP status, a stable code and a sentence saying what to do."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message}}


@dataclass(frozen=True)
class Principal:
    """Who calls: the token's `sub`, its scopes, and the agents it may act for ("*": all).
    An agent acts for itself; `[service.grants]` or `memory:admin` give more."""

    sub: str
    scopes: frozenset[str]
    agents: frozenset[str]

    def has(self, scope: str) -> bool:
        return scope in self.scopes or "memory:admin" in self.scopes

    def acts_for(self, agent: str) -> bool:
        return "*" in self.agents or agent in self.agents or "memory:admin" in self.scopes

    @property
    def reads_everything(self) -> bool:
        return "*" in self.agents or "memory:admin" in self.scopes

    def require(self, scope: str, agent: str | None = None) -> None:
        if not self.has(scope):
            raise ServiceError(403, "missing_scope", f"this token lacks the scope {scope}; "
                               f"ask for a token with scope {scope}")
        if agent is not None and not self.acts_for(agent):
            raise ServiceError(403, "other_agent", f"{self.sub} may not act for agent "
                               f"{agent!r}; use your own agent id, or ask an operator for a "
                               "grant in memwarden.toml [service.grants]")


def make_principal(sub: str, scopes: set[str] | frozenset[str],
                   grants: dict[str, list[str]]) -> Principal:
    """The principal a verified `sub` with `scopes` is, given the configured grants."""
    agents = {sub, *grants.get(sub, [])}
    return Principal(sub, frozenset(s for s in scopes if s in SCOPES), frozenset(agents))
