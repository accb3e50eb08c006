"""Entries of memory files: facts, open loops, decisions — parsed leniently, with positions.

Each parser takes the file's lines (and where the body starts) and returns entries plus
problems (line, col, message, snippet) for MW206. Canonical writers live with apply.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BULLET_RE = re.compile(r"^(\s*)([-*+])\s+(.*)$")
DATE_PREFIX_RE = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\]\s*")
CHECKBOX_RE = re.compile(r"^\[(.)\]\s*(.*)$")
LOOP_ID_RE = re.compile(r"^(loop_[A-Za-z0-9][A-Za-z0-9._-]{0,127}):\s*(.*)$")
OPENED_RE = re.compile(
    r"\s*\((?:opened|відкрита з|открыта с)\s+(\S+?)(?:,\s*priority\s+(\S+?))?\)\s*$", re.I)
PRIORITY_RE = re.compile(r"\s*\(priority\s+(\S+?)\)\s*$", re.I)
SEED_OPENED_RE = re.compile(r"\s+[—–-]+\s+(?:відкрита з|открыта с|opened)\s+(\S+)\s*$", re.I)
CLOSED_RE = re.compile(
    r"\s+[—–-]+\s+(?:closed|закрита|закрыта)\s+(\S+)(?:\s*\|\s*(run_[A-Za-z0-9._-]+))?"
    r"(?:\s+[—–-]+\s+(.*))?\s*$", re.I)
DECISION_HEAD_RE = re.compile(r"^(\S+)\s+[—–-]+\s+(.+)$")
FIELD_RE = re.compile(r"^\*\*([^*:]+):\*\*\s*(.*)$")

PRIORITIES = ("high", "normal", "low")
HIGH_SECTIONS = {"критичні", "критические", "critical"}
DEPRECATED_SECTIONS = {"застаріло", "deprecated", "устарело"}


@dataclass(frozen=True)
class Problem:
    line: int
    col: int
    message: str
    snippet: str
    severity: str = "error"


def valid_date(text: str) -> bool:
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", text))


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


def short_id(text: str) -> str:
    return hashlib.sha256(normalise(text).encode()).hexdigest()[:10]


@dataclass
class Fact:
    id: str
    text: str
    section: str
    line: int  # 1-based
    end_line: int
    date: str | None = None

    @property
    def deprecated(self) -> bool:
        return self.section.strip().split(" (")[0].casefold() in DEPRECATED_SECTIONS


@dataclass
class Loop:
    id: str
    text: str
    closed: bool
    section: str
    line: int
    priority: str = "normal"
    opened: str | None = None
    closed_on: str | None = None
    run: str | None = None
    resolution: str | None = None
    explicit_id: bool = False


@dataclass
class Decision:
    date: str
    title: str
    line: int
    end_line: int
    fields: dict[str, str] = field(default_factory=dict)


def _section_name(heading: str) -> str:
    return heading.strip()


def parse_facts(lines: list[str], start: int = 0) -> tuple[list[Fact], list[Problem]]:
    """Facts are bullets under `##` sections; continuation lines are indented."""
    facts: list[Fact] = []
    problems: list[Problem] = []
    section = ""
    current: Fact | None = None
    in_comment = False
    for idx in range(start, len(lines)):
        raw = lines[idx]
        lineno = idx + 1
        stripped = raw.strip()
        if in_comment:
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            current = None
            continue
        m = HEADING_RE.match(raw)
        if m:
            if len(m.group(1)) == 2:
                section = _section_name(m.group(2))
            current = None
            continue
        b = BULLET_RE.match(raw)
        if b and len(b.group(1)) < 2:
            body = b.group(3)
            date = None
            d = DATE_PREFIX_RE.match(body)
            if d:
                date = d.group(1)
                if not valid_date(date):
                    problems.append(Problem(lineno, len(b.group(1)) + 3,
                                            f"fact date [{date}] is not a valid YYYY-MM-DD date",
                                            raw))
                body = body[d.end():]
            if not body.strip():
                problems.append(Problem(lineno, 1, "empty fact bullet", raw, "warning"))
                current = None
                continue
            current = Fact(short_id(body), body.strip(), section, lineno, lineno, date)
            facts.append(current)
            continue
        if not stripped:
            continue
        if current is not None and (raw.startswith((" ", "\t"))):
            current.text += " " + stripped
            current.end_line = lineno
            current.id = short_id(current.text)
            continue
        if section or facts:
            problems.append(Problem(lineno, 1, "text outside a fact bullet: facts are '- ' "
                                    "bullets under '## ' sections", raw, "warning"))
    seen: dict[str, int] = {}
    for f in facts:
        if f.id in seen:
            problems.append(Problem(f.line, 1, f"duplicate fact (same text as line {seen[f.id]})",
                                    f.text, "warning"))
        else:
            seen[f.id] = f.line
    return facts, problems


def parse_loops(lines: list[str], start: int = 0) -> tuple[list[Loop], list[Problem]]:
    """Open loops: `- [ ]`/`- [x]` bullets, in the canonical or the seeds' form."""
    loops: list[Loop] = []
    problems: list[Problem] = []
    section = ""
    for idx in range(start, len(lines)):
        raw = lines[idx]
        lineno = idx + 1
        m = HEADING_RE.match(raw)
        if m:
            if len(m.group(1)) == 2:
                section = _section_name(m.group(2))
            continue
        b = BULLET_RE.match(raw)
        if not b or b.group(1):
            continue
        body = b.group(3)
        cb = CHECKBOX_RE.match(body)
        col = len(b.group(1)) + 3
        if not cb:
            problems.append(Problem(lineno, col, "loop without a checkbox: write '- [ ] ...' "
                                    "(open) or '- [x] ...' (closed)", raw))
            continue
        mark, rest = cb.group(1), cb.group(2)
        if mark not in (" ", "x", "X"):
            problems.append(Problem(lineno, col, f"unknown checkbox mark [{mark}]: use [ ] or [x]",
                                    raw))
            continue
        closed = mark != " "
        loop, problem = _parse_loop(rest, closed, section, lineno, col, raw)
        if problem:
            problems.append(problem)
        if loop:
            loops.append(loop)
    seen: dict[str, int] = {}
    for lp in loops:
        if lp.id in seen:
            problems.append(Problem(lp.line, 1, f"duplicate loop id {lp.id} (first on line "
                                    f"{seen[lp.id]})", lp.id))
        else:
            seen[lp.id] = lp.line
    return loops, problems


def _parse_loop(rest: str, closed: bool, section: str, lineno: int, col: int,
                raw: str) -> tuple[Loop | None, Problem | None]:
    explicit = False
    loop_id = None
    mid = LOOP_ID_RE.match(rest)
    if mid:
        loop_id, rest = mid.group(1), mid.group(2)
        explicit = True
    priority = "high" if section.casefold() in HIGH_SECTIONS else "normal"
    opened = closed_on = run = resolution = None
    problem = None
    if closed:
        c = CLOSED_RE.search(rest)
        if c:
            closed_on, run, resolution = c.group(1), c.group(2), c.group(3)
            rest = rest[: c.start()]
            if not valid_date(closed_on):
                problem = Problem(lineno, col, f"closing date {closed_on!r} is not YYYY-MM-DD",
                                  raw)
        else:
            problem = Problem(lineno, col, "closed loop without '— closed YYYY-MM-DD | run_<id>'",
                              raw, "warning")
    else:
        o = OPENED_RE.search(rest)
        if o:
            opened = o.group(1)
            if o.group(2):
                priority = o.group(2).lower()
            rest = rest[: o.start()]
        else:
            s = SEED_OPENED_RE.search(rest)
            if s:
                opened = s.group(1)
                rest = rest[: s.start()]
        p = PRIORITY_RE.search(rest)
        if p:
            priority = p.group(1).lower()
            rest = rest[: p.start()]
        if opened is not None and not valid_date(opened.rstrip(",")):
            problem = Problem(lineno, col, f"opening date {opened!r} is not YYYY-MM-DD", raw)
        if priority not in PRIORITIES:
            problem = Problem(lineno, col, f"priority {priority!r} is not one of high, normal, "
                              "low", raw)
            priority = "normal"
    text = rest.strip()
    if not text:
        return None, Problem(lineno, col, "loop without text", raw)
    return Loop(loop_id or "loop_" + short_id(text)[:8], text, closed, section, lineno, priority,
                opened, closed_on, run, resolution, explicit), problem


def parse_decisions(lines: list[str], start: int = 0) -> tuple[list[Decision], list[Problem]]:
    """ADR-style blocks: `## YYYY-MM-DD — title` then `**Key:** value` lines."""
    decisions: list[Decision] = []
    problems: list[Problem] = []
    current: Decision | None = None
    for idx in range(start, len(lines)):
        raw = lines[idx]
        lineno = idx + 1
        m = HEADING_RE.match(raw)
        if m and len(m.group(1)) == 2:
            d = DECISION_HEAD_RE.match(m.group(2))
            if not d or not valid_date(d.group(1)):
                problems.append(Problem(lineno, 4, "decision heading must be "
                                        "'## YYYY-MM-DD — title'", raw))
                current = None
                continue
            current = Decision(d.group(1), d.group(2).strip(), lineno, lineno)
            decisions.append(current)
            continue
        if current is not None:
            if raw.strip():
                current.end_line = lineno
            f = FIELD_RE.match(raw.strip())
            if f:
                current.fields[f.group(1).strip()] = f.group(2).strip()
    return decisions, problems
