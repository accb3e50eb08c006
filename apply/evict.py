"""Eviction: bring an agent's Layer 1 back under its HARD limits before a proposal lands.

Facts go least recently used first, where "used" comes only from git: the last change of
the fact's line (blame) and the latest `Facts-Used` trailer naming it (full or short id,
model/factids.py); the facts the proposal itself cites are in use at its time. Facts under a
Deprecated section go first, then facts unused for longer than `stale_fact_age` days, then
the oldest. Open loops: closed loops older than `closed_loops` days are dropped, then low
priority loops open longer than `frozen_loop_age` days are frozen into decisions.md.
Entries the proposal touches or cites are never evicted; eviction stops at the low-water mark
(`low_water_ratio` of the limit) so every apply does not evict again. Pure functions: the
clock and the usage map are parameters.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from memwarden.git.repo import Repo
from memwarden.model import factids
from memwarden.model.config import Config
from memwarden.model.entries import loop_span, parse_facts, parse_loops
from memwarden.model.layout import LAYER1
from memwarden.model.memfile import split_lines
from memwarden.model.trailers import parse_trailers
from memwarden.tokens.counter import PartCounts, count_text


class PartCounter(PartCounts):
    """Exact token counts of the versions of a file eviction tries, in memory, with
    tiktoken's encoder (see PartCounts)."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding, encoder=True)


@dataclass(frozen=True)
class Evicted:
    file: str
    id: str
    entry: str
    reason: str  # stale-fact | overflow | expired-loop | frozen-loop
    lines: tuple[int, int]  # 1-based, inclusive, in the file it was removed from

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "id": self.id, "entry": self.entry, "reason": self.reason}


def _remove(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    drop = {n for a, b in spans for n in range(a, b + 1)}
    return [line for n, line in enumerate(lines, 1) if n not in drop]


def evict_facts(text: str, protected: set[str], last_used: dict[str, float],
                now: _dt.datetime, limit: int, ratio: float, stale_days: int,
                encoding: str) -> tuple[str, list[Evicted]]:
    """Remove facts until the file is at or under the low-water mark (if it was over
    `limit`); returns the new text and what left. Deterministic for the same inputs."""
    if count_text(text, encoding) <= limit:
        return text, []
    target = int(limit * ratio)
    lines = split_lines(text)
    facts, _ = parse_facts(lines)
    stale_before = (now - _dt.timedelta(days=stale_days)).timestamp()

    def rank(f: object) -> tuple[int, float, int]:
        used = last_used.get(f.id, 0.0)  # type: ignore[attr-defined]
        group = 0 if f.deprecated else (1 if used < stale_before else 2)  # type: ignore
        return group, used, f.line  # type: ignore[attr-defined]

    cands = sorted((f for f in facts if f.id not in protected), key=rank)
    if not cands:
        return text, []

    def without(k: int) -> str:
        return "\n".join(_remove(lines, [(f.line, f.end_line) for f in cands[:k]])) + "\n"

    # The fewest candidates, in rank order, that bring the file to the target: a binary
    # search (removing whole lines lowers the count), then a step back while one fewer
    # still fits: the answer of removing one by one and re-counting, at log2(n) counts
    # instead of n.
    fits = {}
    count = PartCounter(encoding)

    def ok(k: int) -> bool:
        if k not in fits:
            fits[k] = count(without(k)) <= target
        return fits[k]

    lo, hi = 1, len(cands)
    if ok(hi):
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid + 1
        while hi > 1 and ok(hi - 1):
            hi -= 1
    out = []
    for f in cands[:hi]:
        used = last_used.get(f.id, 0.0)
        reason = "stale-fact" if f.deprecated or used < stale_before else "overflow"
        out.append(Evicted("facts.md", f.id, f.text, reason, (f.line, f.end_line)))
    return without(hi), out


def evict_loops(text: str, protected: set[str], now: _dt.datetime, limit: int, ratio: float,
                closed_days: int, frozen_days: int, encoding: str
                ) -> tuple[str, list[Evicted]]:
    """Drop old closed loops, then freeze old low-priority loops (returned with reason
    frozen-loop: the caller records them in decisions.md)."""
    if count_text(text, encoding) <= limit:
        return text, []
    target = int(limit * ratio)
    lines = split_lines(text)
    loops, _ = parse_loops(lines)
    today = now.date()

    def age(date: str | None) -> int:
        try:
            return (today - _dt.date.fromisoformat(date or "")).days
        except ValueError:
            return 0

    candidates = [(0, lp, "expired-loop") for lp in loops
                  if lp.closed and age(lp.closed_on) > closed_days]
    candidates += [(1, lp, "frozen-loop") for lp in loops
                   if not lp.closed and lp.priority == "low" and age(lp.opened) > frozen_days]
    candidates.sort(key=lambda c: (c[0], -age(c[1].closed_on or c[1].opened), c[1].line))
    out: list[Evicted] = []
    spans: list[tuple[int, int]] = []
    current = text
    count = PartCounter(encoding)
    for _, lp, reason in candidates:
        if lp.id in protected:
            continue
        if count(current) <= target:
            break
        span = loop_span(lines, lp.line)
        out.append(Evicted("open_loops.md", lp.id, lp.text, reason, span))
        spans.append(span)
        current = "\n".join(_remove(lines, spans)) + "\n"
    return current, out


def frozen_decisions(text: str, frozen: list[Evicted], today: str, run: str) -> str:
    """decisions.md with one block per frozen loop (they stay in Layer 2)."""
    if not frozen:
        return text
    base = text.rstrip("\n")
    blocks = [f"## {today} — Frozen loop: {e.entry}\n**Status:** Frozen\n"
              f"**Context:** low-priority loop {e.id} stayed open too long; moved out of "
              f"open_loops.md by eviction\n**Run:** {run}\n" for e in frozen]
    return (base + "\n\n" if base else "") + "\n".join(blocks)


def remove_entries(text: str, kind: str, evicted: list[Evicted]) -> str:
    """The same entries (by id) removed from another version of the file, e.g. the
    proposal's: evicted entries are ones the proposal did not touch, so they are there."""
    ids = {e.id for e in evicted}
    if not ids:
        return text
    lines = split_lines(text)
    if kind == "facts":
        facts, _ = parse_facts(lines)
        spans = [(f.line, f.end_line) for f in facts if f.id in ids]
    else:
        loops, _ = parse_loops(lines)
        spans = [loop_span(lines, lp.line) for lp in loops if lp.id in ids]
    return "\n".join(_remove(lines, spans)) + "\n"


# --- planning against a repository (used by apply and by the gate's preview) ----------

@dataclass
class EvictionPlan:
    commits: list[tuple[str, dict[str, bytes | None]]]
    proposal_changes: dict[str, bytes | None]
    evicted: list[Evicted]


def fact_usage(repo: Repo, main: str, agent: str) -> dict[str, float]:
    """When each fact was last used, from git only: the last change of its line, and the
    newest Facts-Used trailer of this agent naming it (by full id or short id)."""
    path = f"memory/{agent}/facts.md"
    data = repo.read_path(main, path)
    used: dict[str, float] = {}
    if data is None:
        return used
    times = repo.line_times(main, path)
    facts, _ = parse_facts(split_lines(data.decode("utf-8", "replace")))
    for f in facts:
        if 0 < f.line <= len(times):
            used[f.id] = float(max(times[f.line - 1:f.end_line]))
    wanted = factids.names(used)
    for sha, raw in repo.first_parent_log(main, limit=5000):
        if b"Facts-Used" not in raw:
            continue
        tr = _trailers(raw)
        if tr.get("agent-id") != agent:
            continue
        when = float(repo.commit_time(sha))
        for fid in factids.resolve(factids.split_cited(tr.get("facts-used", "")), wanted):
            if used.get(fid, 0.0) < when:
                used[fid] = when
    return used


def _trailers(raw: bytes) -> dict[str, str]:
    return {t.key.lower(): t.value for t in parse_trailers(raw.decode("utf-8", "replace"))}


def cited_facts(repo: Repo, base: str, head: str, agent: str, facts_text: str) -> set[str]:
    """Ids of the facts in `facts_text` that the proposal's commits (base..head) cite in
    `Facts-Used`: the facts its run relied on, in use at the proposal's time."""
    cited: list[str] = []
    for sha in repo.rev_list(f"{base}..{head}"):
        raw = repo.commit_message(sha)
        if b"Facts-Used" not in raw:
            continue
        tr = _trailers(raw)
        if tr.get("agent-id") in (None, agent):
            cited += factids.split_cited(tr.get("facts-used", ""))
    if not cited:
        return set()
    facts, _ = parse_facts(split_lines(facts_text))
    return factids.resolve(cited, {f.id for f in facts})


def _ids_touched(repo: Repo, base: str, head: str, path: str, kind: str) -> set[str]:
    def ids(rev: str) -> set[str]:
        data = repo.read_path(rev, path)
        if data is None:
            return set()
        lines = split_lines(data.decode("utf-8", "replace"))
        if kind == "facts":
            return {f.id for f in parse_facts(lines)[0]}
        return {lp.id + ("x" if lp.closed else "") for lp in parse_loops(lines)[0]}
    before, after = ids(base), ids(head)
    return {i.rstrip("x") for i in after - before} | {i.rstrip("x") for i in before - after}


def plan_eviction(repo: Repo, config: Config, main: str, base: str, head: str, agent: str,
                  run: str, files: dict[str, str], now: _dt.datetime) -> EvictionPlan | None:
    """Eviction commits for main (placed BEFORE the proposal's commit) and the proposal's
    files with the same entries removed; None when nothing can be evicted."""
    enc = config.encoding
    ratio = config.data["low_water_ratio"]
    ret = config.data["retention"]
    root = f"memory/{agent}"
    total_limit = config.limit("layer1_total", agent)
    sizes = {name: count_text(files[name], enc) for name in LAYER1}
    commits: list[tuple[str, dict[str, bytes | None]]] = []
    proposal_changes: dict[str, bytes | None] = {}
    evicted: list[Evicted] = []
    main_text = {name: (repo.read_path(main, f"{root}/{name}") or b"").decode("utf-8",
                                                                              "replace")
                 for name in ("facts.md", "open_loops.md", "decisions.md")}
    # open loops first: cheapest to lose
    loop_limit = config.limit("open_loops", agent)
    _, loops_out = evict_loops(files["open_loops.md"],
                                     _ids_touched(repo, base, head, f"{root}/open_loops.md",
                                                  "loops"),
                                     now, loop_limit, ratio, ret["closed_loops"],
                                     ret["frozen_loop_age"], enc)
    if loops_out:
        frozen = [e for e in loops_out if e.reason == "frozen-loop"]
        decisions = frozen_decisions(main_text["decisions.md"], frozen,
                                           now.date().isoformat(), run)
        change: dict[str, bytes | None] = {
            f"{root}/open_loops.md": remove_entries(main_text["open_loops.md"], "loops",
                                                          loops_out).encode()}
        if frozen:
            change[f"{root}/decisions.md"] = decisions.encode()
        commits.append((_evict_message(agent, "open_loops", loops_out), change))
        proposal_changes[f"{root}/open_loops.md"] = remove_entries(
            files["open_loops.md"], "loops", loops_out).encode()
        if frozen and files["decisions.md"] != main_text["decisions.md"]:
            proposal_changes[f"{root}/decisions.md"] = frozen_decisions(
                files["decisions.md"], frozen, now.date().isoformat(), run).encode()
        sizes["open_loops.md"] = count_text(proposal_changes[f"{root}/open_loops.md"]
                                            .decode(), enc)
        evicted += loops_out
    # facts: down to their own limit and to what the Layer 1 total leaves them
    facts_limit = min(config.limit("facts", agent),
                      total_limit - sizes["snapshot.md"] - sizes["open_loops.md"])
    if facts_limit > 0:
        # Facts the proposal cites are in use now: never evicted for it, last use refreshed.
        cited = cited_facts(repo, base, head, agent, files["facts.md"])
        usage = fact_usage(repo, main, agent)
        for fid in cited:
            usage[fid] = max(usage.get(fid, 0.0), now.timestamp())
        _, facts_out = evict_facts(
            files["facts.md"],
            _ids_touched(repo, base, head, f"{root}/facts.md", "facts") | cited,
            usage, now, facts_limit, ratio, ret["stale_fact_age"], enc)
        if facts_out:
            commits.append((_evict_message(agent, "facts", facts_out), {
                f"{root}/facts.md": remove_entries(main_text["facts.md"], "facts",
                                                         facts_out).encode()}))
            proposal_changes[f"{root}/facts.md"] = remove_entries(
                files["facts.md"], "facts", facts_out).encode()
            evicted += facts_out
    if not commits:
        return None
    return EvictionPlan(commits, proposal_changes, evicted)


def _evict_message(agent: str, kind: str, out: list[Evicted]) -> str:
    reasons = {e.reason for e in out}
    reason = next(r for r in ("overflow", "frozen-loop", "stale-fact", "expired-loop")
                  if r in reasons)
    listing = "\n".join(f"- {e.file} {e.id} ({e.reason}): {e.entry[:160]}" for e in out)
    return (f"memory-evict: {agent} / {kind}\n\nMoved out of Layer 1 to make room (they stay "
            f"in git history):\n\n{listing}\n\nAgent-Id: {agent}\nMemory-Eviction: {reason}\n")


def agent_files(repo: Repo, main: str, agent: str,
                 changes: dict[str, bytes | None]) -> dict[str, str]:
    """The agent's Layer 1 and decisions as they will be after the replay."""
    out = {}
    for name in (*LAYER1, "decisions.md"):
        path = f"memory/{agent}/{name}"
        data = changes[path] if path in changes else repo.read_path(main, path)
        out[name] = data.decode("utf-8", "replace") if data else ""
    return out


def overflow(config: Config, agent: str, files: dict[str, str]) -> str:
    """Why the agent's Layer 1 files would be over a HARD limit ("" when within)."""
    enc = config.encoding
    total = 0
    for name, key in LAYER1.items():
        n = count_text(files.get(name, ""), enc)
        total += n
        limit = config.limit(key, agent)
        if n > limit:
            return f"{name} would have {n} tokens, over its HARD limit of {limit}"
    limit = config.limit("layer1_total", agent)
    if total > limit:
        return f"Layer 1 would have {total} tokens, over its HARD total of {limit}"
    return ""
