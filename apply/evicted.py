"""What left an agent's Layer 1, reconstructed from git history, and how to bring a fact back.

Eviction (`memory-evict:`) and maintenance (`memory-maintain:`) commits on main's
first-parent history are the only places entries leave facts.md / open_loops.md without a
proposal. The commit message lists them truncated to 160 characters, so the full text is
taken from the parent commit's file; the reason comes from the listing line
`- <file> <id> (<reason>): ...`, else from the commit's trailers. Read-only and
working-tree free, so it works in bare repositories.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any

from memwarden.git.repo import Repo
from memwarden.model.entries import parse_facts, parse_loops, valid_date
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import AGENT_ID_RE
from memwarden.model.memfile import split_lines
from memwarden.model.times import iso_utc
from memwarden.model.trailers import parse_trailers

PREFIXES = (b"memory-evict:", b"memory-maintain:")
FILES = (("facts.md", "fact"), ("open_loops.md", "loop"))
# A listing line: `- facts.md 0a1b2c3d4e (stale-fact): text` (the file part is optional).
LISTING_RE = re.compile(r"^[-*]\s+(?:\S+\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)\s+"
                        r"\(([A-Za-z][A-Za-z0-9_-]*)\)")
AGENT_FILES = ("meta.json", "snapshot.md", "facts.md", "open_loops.md", "decisions.md")


@dataclass(frozen=True)
class Removed:
    """One entry that left Layer 1 in one commit."""

    id: str
    file: str  # facts.md | open_loops.md
    kind: str  # fact | loop
    reason: str
    entry: str  # full text from the parent commit
    commit: str
    time: int  # committer time (seconds since the epoch)
    restorable: bool  # not present in the file on main now
    section: str = ""
    date: str | None = None  # a fact's own [YYYY-MM-DD] prefix, kept when restoring

    @property
    def when(self) -> str:
        return iso_utc(self.time)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "kind": self.kind, "reason": self.reason,
                "entry": self.entry, "commit": self.commit, "date": self.when,
                "restorable": self.restorable, "section": self.section}


def _entries(data: bytes | None, kind: str) -> dict[str, tuple[str, str, str | None, int]]:
    """id -> (text, section, fact date, line); first occurrence wins."""
    if data is None:
        return {}
    lines = split_lines(data.decode("utf-8", "replace"))
    out: dict[str, tuple[str, str, str | None, int]] = {}
    if kind == "fact":
        for f in parse_facts(lines)[0]:
            out.setdefault(f.id, (f.text, f.section, f.date, f.line))
    else:
        for lp in parse_loops(lines)[0]:
            out.setdefault(lp.id, (lp.text, lp.section, None, lp.line))
    return out


def _reasons(message: str) -> tuple[dict[str, str], str]:
    """Reasons named per entry in the listing, and the commit-wide fallback."""
    per_id: dict[str, str] = {}
    for line in message.splitlines():
        m = LISTING_RE.match(line)
        if m:
            per_id.setdefault(m.group(1), m.group(2))
    trailers = {t.key.lower(): t.value for t in parse_trailers(message)}
    fallback = (trailers.get("memory-eviction") or trailers.get("memory-maintenance")
                or ("eviction" if message.startswith("memory-evict:") else "maintenance"))
    return per_id, " ".join(fallback.split()) or "maintenance"


def _oid(repo: Repo, rev: str, path: str) -> str | None:
    entry = repo.entry_at(rev, path)
    return entry.oid if entry is not None and entry.mode != 0o160000 else None  # no gitlinks


def agent_known(repo: Repo, main: str, agent: str) -> bool:
    """An agent exists when main holds one of its memory files."""
    return bool(AGENT_ID_RE.match(agent)) and any(
        repo.entry_at(main, f"memory/{agent}/{name}") is not None for name in AGENT_FILES)


def evicted_entries(repo: Repo, main: str, agent: str,
                    since: _dt.datetime | None = None) -> list[Removed]:
    """Every fact/loop that left memory/<agent>/ in an eviction or maintenance commit on
    main's first-parent history: newest commit first, then facts before loops, then the
    order the commit lists them in, then their line in the parent."""
    root = f"memory/{agent}"
    present = {kind: set(_entries(repo.read_path(main, f"{root}/{name}"), kind))
               for name, kind in FILES}
    cutoff = since.timestamp() if since is not None else None
    cache: dict[tuple[str | None, str], dict[str, tuple[str, str, str | None, int]]] = {}

    def parsed(oid: str | None, kind: str) -> dict[str, tuple[str, str, str | None, int]]:
        # consecutive evictions share a blob (one's result is the next one's parent)
        if (oid, kind) not in cache:
            cache[oid, kind] = _entries(repo.read_blob(oid) if oid else None, kind)
        return cache[oid, kind]

    out: list[Removed] = []
    for sha, raw in repo.first_parent_log(main):
        if not raw.startswith(PREFIXES):
            continue
        when = repo.commit_time(sha)
        if cutoff is not None and when < cutoff:
            continue
        parents = repo.commit_info(sha)["parents"]
        if not parents:
            continue
        message = raw.decode("utf-8", "replace")
        reasons: tuple[dict[str, str], str] | None = None
        for name, kind in FILES:
            path = f"{root}/{name}"
            old, new = _oid(repo, parents[0], path), _oid(repo, sha, path)
            if old == new:
                continue
            before, after = parsed(old, kind), parsed(new, kind)
            gone = [k for k in before if k not in after]
            if not gone:
                continue
            reasons = reasons or _reasons(message)
            order = {k: n for n, k in enumerate(reasons[0])}
            # the order the commit lists them in (eviction order), unlisted ones last
            gone.sort(key=lambda k: (order.get(k, len(order)), before[k][3]))
            for entry_id in gone:
                text, section, date, _line = before[entry_id]
                out.append(Removed(entry_id, name, kind,
                                   reasons[0].get(entry_id, reasons[1]), text, sha, when,
                                   entry_id not in present[kind], section, date))
    return out


def find_fact(removed: list[Removed], wanted: str) -> Removed:
    """The newest eviction of the fact whose id is `wanted` (or starts with it, if only
    one id does). Errors name the candidates."""
    facts = [r for r in removed if r.kind == "fact"]
    exact = [r for r in facts if r.id == wanted]
    matches = exact or [r for r in facts if r.id.startswith(wanted)]
    ids = sorted({r.id for r in matches})
    if len(ids) > 1:
        listing = "; ".join(f"{i} ({next(r.entry for r in matches if r.id == i)[:60]})"
                            for i in ids)
        raise MemwardenError(f"fact id {wanted!r} is ambiguous: {listing}")
    if not ids:
        if any(r.id == wanted or r.id.startswith(wanted) for r in removed):
            raise MemwardenError(f"{wanted} is an open loop: restore-fact restores facts only "
                                 "(frozen loops are kept in decisions.md)")
        raise MemwardenError(f"no evicted fact with id {wanted!r} (see `memwarden evicted`)")
    return matches[0]  # newest first


def restore_request(agent: str, fact: Removed) -> dict[str, Any]:
    """A propose-memory-update request appending the fact to its original `##` section,
    written canonically (one line, its own date kept, so its id is unchanged)."""
    dated = fact.date is not None and valid_date(fact.date)
    content = "- " + (f"[{fact.date}] " if dated else "") + fact.entry
    return {"agentId": agent, "runId": f"restore-{fact.id}",
            "updates": [{"file": "facts.md", "operation": "append",
                         "section": fact.section or "Restored", "content": content}],
            "reasoning": f"restore evicted fact {fact.id} from {fact.commit}"}
