"""MW504, MW505, MW205, MW509: rules that compare a proposal's tree with its base.

runs/ files only grow (append-only), logic versions never change once written, and an
agent's status moves only along the status graph — with only humans setting
active/paused/archived/draft and a proposal allowed nothing but `error`.
"""

from __future__ import annotations

from collections.abc import Callable

from memwarden.model.findings import ERROR, WARNING, Finding, make
from memwarden.model.layout import classify
from memwarden.model.memfile import parse_frontmatter, split_lines
from memwarden.policies.registry import COMMIT, Rule, register

# The status graph (docs/memory-format.md); a new _agent.md starts as draft.
LEGAL = {
    "draft": {"active", "archived"},
    "active": {"paused", "error", "archived"},
    "paused": {"active", "archived"},
    "error": {"active", "paused", "archived"},
    "archived": {"draft"},
}


def _status(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        fm = parse_frontmatter(split_lines(data.decode("utf-8-sig")))
    except UnicodeDecodeError:
        return None
    if fm is None or fm.data is None:
        return None
    value = fm.data.get("status")
    return value if isinstance(value, str) else None


def _without_status(data: bytes | None) -> str:
    text = data.decode("utf-8-sig", "replace") if data else ""
    return "\n".join(line for line in text.split("\n") if not line.startswith("status:"))


def diff_findings(paths: list[str], old: Callable[[str], bytes | None],
                  new: Callable[[str], bytes | None], actor: str) -> list[Finding]:
    """MW504/505/205 for the changed `paths`; `actor` is "proposal" or "human"."""
    out: list[Finding] = []
    for path in sorted(paths):
        info = classify(path)
        if info is None:
            continue
        before, after = old(path), new(path)
        if info.kind == "run" and before is not None:
            if after is None:
                out.append(make("MW504", ERROR, path, 1, 1, "runs/ is append-only: a run "
                                "report cannot be deleted (retention does that)", path))
            elif not after.startswith(before):
                line = _first_diff_line(before, after)
                out.append(make("MW504", ERROR, path, line, 1, "runs/ is append-only: this "
                                "change rewrites existing lines of the run report", path,
                                "Append new lines at the end instead."))
        if info.area == "logic" and "/versions/" in path and before is not None \
                and after != before:
            out.append(make("MW505", ERROR, path, 1, 1, "logic versions are immutable once "
                            "written: add a new version instead of changing this one", path))
        if info.kind == "agent_contract":
            out += _status_findings(path, before, after, actor)
        if info.kind == "decisions" and actor == "proposal" and before is not None:
            out += _decision_findings(path, before, after)
    return out


def _decision_blocks(data: bytes | None) -> list[tuple[str, int]]:
    """Each decision block's text (heading to last line, trailing blanks dropped) and the
    line it starts on."""
    from memwarden.model.entries import parse_decisions

    lines = split_lines(data.decode("utf-8-sig", "replace")) if data else []
    decisions, _ = parse_decisions(lines)
    return [("\n".join(lines[d.line - 1:d.end_line]).rstrip(), d.line) for d in decisions]


def _decision_findings(path: str, before: bytes, after: bytes | None) -> list[Finding]:
    """MW509 for each decision of the base that a proposal changes or removes."""
    kept: dict[str, int] = {}
    for text, _ in _decision_blocks(after):
        kept[text] = kept.get(text, 0) + 1
    out = []
    for text, line in _decision_blocks(before):
        if kept.get(text, 0) > 0:
            kept[text] -= 1
            continue
        heading = text.split("\n", 1)[0].lstrip("# ").strip()
        out.append(make("MW509", WARNING, path, line, 1, f"a proposal changes or removes the "
                        f"decision '{heading}': decisions are a log, a human reviews that",
                        f"{path}:{heading}"))
    return out


def _first_diff_line(a: bytes, b: bytes) -> int:
    for n, (x, y) in enumerate(zip(a.split(b"\n"), b.split(b"\n"), strict=False), 1):
        if x != y:
            return n
    return 1


def _status_findings(path: str, before: bytes | None, after: bytes | None,
                     actor: str) -> list[Finding]:
    old, new = _status(before), _status(after)
    if before is None:
        # The owner who writes a new contract may start it active (`agent add --status
        # active`); anything else starts as draft.
        if new not in (None, "draft") and not (actor == "human" and new == "active"):
            return [make("MW205", ERROR, path, 1, 1, f"a new agent starts as draft, not "
                         f"{new!r} (an owner's Human-Edit commit may also start it active)",
                         f"{path}:new:{new}")]
        return []
    if after is None or old == new:
        return []
    out = []
    if old is not None and new is not None and new not in LEGAL.get(old, set()):
        out.append(make("MW205", ERROR, path, 1, 1, f"status {old!r} -> {new!r} is not an "
                        "allowed transition (see `memwarden rule MW205`)", f"{path}:{old}->{new}"))
    if actor == "proposal":
        if new != "error":
            out.append(make("MW205", ERROR, path, 1, 1, f"an agent's proposal may only set "
                            f"status 'error', not {new!r}; only owners (Human-Edit commits) "
                            "set active/paused/archived/draft", f"{path}:actor:{new}"))
        elif _without_status(before) != _without_status(after):
            out.append(make("MW501", ERROR, path, 1, 1, "a proposal may change only the "
                            "status of its _agent.md, nothing else", f"{path}:other"))
    return out


register(Rule(
    "MW504", "runs-append-only", ERROR,
    "A change rewrites or deletes an existing runs/ report instead of appending to it.",
    "Run reports are the audit trail of what a run saw and did; rewriting one rewrites "
    "history. Retention removes old reports, proposals never do.",
    "runs/run_41.md: '## Result\\nfailed' -> '## Result\\nsucceeded'",
    "runs/run_41.md: new lines appended at the end; runs/run_42.md created",
    COMMIT, None, None, "Append to the report or write a new run file."))
register(Rule(
    "MW505", "logic-version-immutable", ERROR,
    "A file under logic/<agent>/versions/ that already existed was changed or deleted.",
    "A logic version is what past runs executed; changing it in place makes every run that "
    "cites it unreproducible.",
    "logic/a/versions/v1.2/current.pseudo.md edited",
    "logic/a/versions/v1.3/ added; current.pseudo.md updated",
    COMMIT, None, None, "Write a new version folder instead."))
register(Rule(
    "MW509", "decision-rewritten", WARNING,
    "A proposal changes or removes a decision already in decisions.md (an ADR or a frozen "
    "open loop).",
    "decisions.md is a log of what was decided and what was set aside; an agent that "
    "rewrites an entry, or deletes a frozen loop, changes the record everyone reads. It may "
    "still be right (a decision superseded), so a human decides: never auto-approved.",
    "proposal diff: '**Status:** Frozen' -> '**Status:** Accepted' under an existing heading",
    "proposal diff: a new '## 2026-03-01 — ...' block appended (add_decision)",
    COMMIT, None, None, "Append a new decision that supersedes the old one, or have an owner "
    "edit the old one."))
register(Rule(
    "MW205", "illegal-status-transition", ERROR,
    "An agent's status changes along a transition the status graph does not allow, or by the "
    "wrong actor (a proposal may only set `error`; a new agent starts as `draft`, or as "
    "`active` when its owner writes it in a Human-Edit commit).",
    "Status decides whether an agent runs. An agent that re-activates itself, or jumps from "
    "draft straight to paused, bypasses the owner's decision.",
    "proposal: status: paused -> active;  human: status: draft -> paused",
    "runtime proposal: status: active -> error;  owner: status: error -> active",
    COMMIT, None, None, "Let the owner change the status in a Human-Edit commit."))
