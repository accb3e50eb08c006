"""Eviction: bring an agent's Layer 1 back under its HARD limits before a proposal lands.

Facts go least recently used first, where "used" comes only from git: the last change of
the fact's line (blame) and the latest `Facts-Used` trailer naming it. Facts under a
Deprecated section go first, then facts unused for longer than `stale_fact_age` days, then
the oldest. Open loops: closed loops older than `closed_loops` days are dropped, then low
priority loops open longer than `frozen_loop_age` days are frozen into decisions.md.
Entries the proposal touches are never evicted; eviction stops at the low-water mark
(`low_water_ratio` of the limit) so every apply does not evict again. Pure functions: the
clock and the usage map are parameters.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from memwarden.entries import parse_facts, parse_loops
from memwarden.memfile import split_lines
from memwarden.tokens import count_text


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

    out: list[Evicted] = []
    spans: list[tuple[int, int]] = []
    current = text
    for f in sorted((f for f in facts if f.id not in protected), key=rank):
        if count_text(current, encoding) <= target:
            break
        used = last_used.get(f.id, 0.0)
        reason = "stale-fact" if f.deprecated or used < stale_before else "overflow"
        out.append(Evicted("facts.md", f.id, f.text, reason, (f.line, f.end_line)))
        spans.append((f.line, f.end_line))
        current = "\n".join(_remove(lines, spans)) + "\n"
    return current, out


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
    for _, lp, reason in candidates:
        if lp.id in protected:
            continue
        if count_text(current, encoding) <= target:
            break
        out.append(Evicted("open_loops.md", lp.id, lp.text, reason, (lp.line, lp.line)))
        spans.append((lp.line, lp.line))
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
        spans = [(lp.line, lp.line) for lp in loops if lp.id in ids]
    return "\n".join(_remove(lines, spans)) + "\n"
