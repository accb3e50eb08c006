"""The rule registry: each rule is registered once with its documentation and its check.

`memwarden rule MWxxx`, the README rule table and SARIF rule metadata are all generated
from these definitions, so they cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from typing import Any

from memwarden.model.findings import Finding

FILE = "file"  # check(mf: MemFile, ctx: FileContext) -> Iterable[Finding]; cached per blob
TREE = "tree"  # check(ctx: TreeContext) -> Iterable[Finding]; sees every governed file
META = "meta"  # produced by the engine itself (e.g. expired waivers); no check function
COMMIT = "commit"  # produced by commit/trailer checks (later issues)

FAMILIES = ("limits", "structure", "injection", "paths", "commits", "ownership",
            "transitions", "refs")
# The families that register FILE or TREE rules (what `memwarden check` runs); the others
# only hold commit and transition rules, which a check need not import.
# tests/test_check_single_fast.py proves every FILE/TREE rule and tree part lives here.
CHECK_FAMILIES = ("limits", "structure", "injection", "paths")


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: its documentation, scope, kinds and check function. Immutable."""

    id: str
    name: str
    severity: str
    summary: str
    why: str
    bad: str
    good: str
    scope: str
    kinds: frozenset[str] | None
    check: Callable[..., Iterable[Finding]] | None
    fix: str = ""

    def to_doc(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "severity": self.severity,
            "summary": self.summary, "why": self.why, "bad": self.bad, "good": self.good,
            "fix": self.fix, "scope": self.scope,
            "kinds": sorted(self.kinds) if self.kinds else None,
        }


_RULES: dict[str, Rule] = {}
_TREE_PARTS: dict[str, list[Callable[..., Iterable[Finding]]]] = {}


def rule(id: str, *, name: str, severity: str, summary: str, why: str, bad: str, good: str,
         fix: str = "", scope: str = FILE,
         kinds: Iterable[str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a check function as rule `id`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        register(Rule(id, name, severity, summary, why, bad, good, scope,
                      frozenset(kinds) if kinds else None, fn, fix))
        return fn

    return deco


def tree_part(rule_id: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add a tree-wide check to a FILE rule (e.g. MW203's "folder without _agent.md"), so
    the per-file part stays cached per blob while the cross-file part sees the tree."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        _TREE_PARTS.setdefault(rule_id, []).append(fn)
        return fn

    return deco


def tree_checks(r: Rule) -> list[Callable[..., Iterable[Finding]]]:
    """The tree-scoped check functions of a rule."""
    own = [r.check] if r.scope == TREE and r.check is not None else []
    return own + _TREE_PARTS.get(r.id, [])


def register(r: Rule) -> None:
    old = _RULES.get(r.id)
    if old is not None and (old.check is not r.check or old.name != r.name):
        raise RuntimeError(f"rule {r.id} registered twice ({old.name}, {r.name})")
    _RULES[r.id] = r


def _load(families: tuple[str, ...] = FAMILIES) -> None:
    for family in families:
        importlib.import_module(f"memwarden.policies.rules.{family}")


def check_rules() -> list[Rule]:
    """The rules a check can run (FILE and TREE scope, plus the engine's own), by id;
    imports only CHECK_FAMILIES."""
    _load(CHECK_FAMILIES)
    return [_RULES[k] for k in sorted(_RULES) if _RULES[k].scope in (FILE, TREE, META)]


def all_rules() -> list[Rule]:
    _load()
    return [_RULES[k] for k in sorted(_RULES)]


def get_rule(rule_id: str) -> Rule | None:
    _load()
    return _RULES.get(rule_id.upper())


register(Rule(
    "MW001", "expired-waiver", "error",
    "A waiver in memwarden.toml has passed its `expires` date.",
    "Waivers are temporary by design: an expired one must be renewed with a fresh reason or "
    "removed, otherwise exceptions silently become permanent.",
    '[[waivers]]\nrule = "MW305"\npath = "memory/a/facts.md"\nfingerprint = "sha256:…"\n'
    'expires = 2025-01-31\nreason = "migrated note"',
    'expires = 2026-12-31  # renewed after the owner re-reviewed the finding',
    META, None, None,
    "Renew the waiver with a new date and reason, or delete it and fix the file."))


register(Rule(
    "MW002", "history-invariant", "error",
    "main's history breaks an apply invariant: a merge commit, or an eviction commit that "
    "removes a Layer 1 entry without listing it.",
    "Nothing may be lost: every entry that leaves Layer 1 must be named by the commit that "
    "moved it, and main only moves by fast-forward, so history reads as one line of "
    "explained changes.",
    "Merge branch 'x' into main;  memory-evict: a / facts (no list of moved facts)",
    "memory-evict: a / facts listing '- facts.md 3f2a... (overflow): ...'",
    META, None, None, "Revert the offending commit (git revert) and land the change "
    "through apply."))
