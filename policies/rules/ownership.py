"""MW5xx ownership: what a proposal may touch (own agent's memory, not apply-owned files).

These rules compare a proposal with its base, so they run in the gate and the server hook,
not in `check` (which sees one tree).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import APPLY_OWNED_KINDS, classify
from memwarden.policies.registry import COMMIT, Rule, register


def proposal_path_findings(agent: str, touched: Iterable[str], label: str,
                           agent_known: bool | None = None) -> list[Finding]:
    """MW501/MW503 for the paths a proposal of `agent` changes; MW507 when the caller
    found that the agent is unknown on the base (no contract, no memory folder)."""
    out: list[Finding] = []
    if agent_known is False:
        out.append(make("MW507", ERROR, f"memory/{agent}/", 1, 1,
                        f"{agent!r} is not a known agent: the base has no "
                        f"agents/{agent}/_agent.md and no memory/{agent}/", f"{label}:unknown",
                        "An owner adds the agent (its contract) before it proposes."))
    for path in sorted(set(touched)):
        info = classify(path)
        if path == f"agents/{agent}/_agent.md":
            continue  # only its status may change, to `error` (MW205, checked by the gate)
        if info is None or info.area != "memory" or info.agent != agent:
            owner = f"agent {info.agent!r}" if info and info.agent else "humans"
            out.append(make("MW501", ERROR, path, 1, 1,
                            f"a proposal of {agent!r} may only change memory/{agent}/; this "
                            f"path belongs to {owner}", f"{label}:{path}",
                            "Split the change: humans edit it with a Human-Edit commit."))
        elif info.kind in APPLY_OWNED_KINDS:
            out.append(make("MW503", ERROR, path, 1, 1,
                            f"{path.rsplit('/', 1)[-1]} is written only by apply "
                            "(meta.json, changelog.md, timeline/)", f"{label}:{path}",
                            "Drop this file from the proposal; apply writes the bookkeeping."))
    return out


def human_bookkeeping_findings(label: str, touched: Iterable[str],
                               before: Callable[[str], bytes | None],
                               after: Callable[[str], bytes | None]) -> list[Finding]:
    """MW503 for a commit apply did not make (a human edit) that writes bookkeeping. The
    one exception is a new agent's first meta.json at version 0, as `memwarden agent add`
    writes it: that claims no history. `before`/`after` read a path in the parent and in
    the commit."""
    out: list[Finding] = []
    for path in sorted(set(touched)):
        info = classify(path)
        if info is None or info.kind not in APPLY_OWNED_KINDS:
            continue
        if info.kind == "meta" and before(path) is None and \
                _first_meta(after(path), info.agent):
            continue
        out.append(make("MW503", ERROR, path, 1, 1, f"commit {label} is not apply-made but "
                        f"changes {path.rsplit('/', 1)[-1]}, which only apply writes "
                        "(meta.json, changelog.md, timeline/)", f"{label}:{path}",
                        "Land the change as a proposal (or a branch that apply lands with "
                        "--approved-by)."))
    return out


def _first_meta(data: bytes | None, agent: str | None) -> bool:
    import json

    try:
        doc = json.loads(data or b"")
    except ValueError:
        return False
    return isinstance(doc, dict) and agent is not None and doc.get("agentId") == agent \
        and type(doc.get("version")) is int and doc.get("version") == 0


register(Rule(
    "MW501", "foreign-path", ERROR,
    "A proposal (or an apply-made commit for it) touches a path outside its own agent's "
    "memory folder.",
    "Agents are isolated: one agent's run must never rewrite another agent's memory, the "
    "agent contracts, logic or the policy config.",
    "proposals/a/p-1 changes memory/b/facts.md or memwarden.toml",
    "proposals/a/p-1 changes only memory/a/facts.md and memory/a/open_loops.md",
    COMMIT, None, None, "Propose only memory/<your agent>/ changes."))
register(Rule(
    "MW503", "apply-owned-file", ERROR,
    "A proposal or a human edit writes meta.json, changelog.md or timeline/, which only "
    "apply writes (an owner's commit may create a new agent's first meta.json at version 0, "
    "as `memwarden agent add` does).",
    "Bookkeeping must reflect what apply actually did; a proposal that writes it could claim "
    "a version or history that never happened.",
    "proposal diff: memory/a/meta.json version 7 -> 99",
    "proposal diff: memory/a/facts.md only; apply bumps meta.json",
    COMMIT, None, None, "Remove the bookkeeping files from the proposal."))
