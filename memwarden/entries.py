"""Entries of memory files: facts, open loops, decisions — parsed leniently, with positions.

Each parser takes the file's lines (and where the body starts) and returns entries plus
problems (line, col, message, snippet) for MW206. Lines inside fenced code blocks and
HTML comments are content, never entries. Canonical writers live with apply.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

# ATX heading (CommonMark): up to 3 spaces, 1-6 '#', then space or end; an optional
# closing run of '#' must be preceded by a space ("## C#" keeps its '#').
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
BULLET_RE = re.compile(r"^(\s*)([-*+])\s+(.*)$")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
DATE_PREFIX_RE = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\]\s*")
CHECKBOX_RE = re.compile(r"^\[(.)\]\s*(.*)$")
LOOP_ID_RE = re.compile(r"^(loop_[A-Za-z0-9][A-Za-z0-9._-]{0,127}):\s*(.*)$")
OPENED_RE = re.compile(
    r"\s*\((?:opened|відкрита з|открыта с)\s+(\S+?)(?:,\s*priority\s+(\S+?))?\)\s*$", re.I)
PRIORITY_RE = re.compile(r"\s*\(priority\s+(\S+?)\)\s*$", re.I)
SEED_OPENED_RE = re.compile(r"\s+[—–-]+\s+(?:відкрита з|открыта с|opened)\s+(\S+)\s*$", re.I)
CLOSED_RE = re.compile(
    r"\s+[—–-]+\s+(?:closed|закрита|закрыта)\s+(\S+?)(?:\s*\|\s*(run_[A-Za-z0-9._-]+))?"
    r"(?:\s+[—–-]+\s+(.*?))?\s*$", re.I)
# The same patterns from their first literal on, matched only where that literal sits
# (see _suffix_search): a search would try the leading \s at every position of the line.
_OPENED_AT = re.compile(OPENED_RE.pattern.removeprefix(r"\s*"), re.I)
_PRIORITY_AT = re.compile(PRIORITY_RE.pattern.removeprefix(r"\s*"), re.I)
_SEED_OPENED_AT = re.compile(SEED_OPENED_RE.pattern.removeprefix(r"\s+"), re.I)
_CLOSED_AT = re.compile(CLOSED_RE.pattern.removeprefix(r"\s+"), re.I)
_DASHES = ("—", "–", "-")
DECISION_HEAD_RE = re.compile(r"^(\S+)\s+[—–-]+\s+(.+)$")
# `**Key:** value` and `**Key**: value`.
FIELD_RE = re.compile(r"^\*\*([^*:]+)(?::\*\*|\*\*:)\s*(.*)$")

PRIORITIES = ("high", "normal", "low")
_BULLET_MARKS = ("-", "*", "+")
HIGH_SECTIONS = {"критичні", "критические", "critical"}
DEPRECATED_SECTIONS = {"застаріло", "deprecated", "устарело"}



def body_start(lines: list[str], scan: int = 2000) -> int:
    """Index of the first line after a leading `---` ... `---`/`...` frontmatter block
    (0 without a closed one within `scan` lines): where a file's Markdown body begins."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, min(len(lines), scan)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0

@dataclass(frozen=True)
class Problem:
    line: int
    col: int
    message: str
    snippet: str
    severity: str = "error"


_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


_VALID_DATES: dict[str, bool] = {}  # the few hundred dates a repository uses, remembered


def valid_date(text: str) -> bool:
    known = _VALID_DATES.get(text)
    if known is not None:
        return known
    ok = _DATE_RE.fullmatch(text) is not None
    if ok:
        try:
            _dt.date.fromisoformat(text)
        except ValueError:
            ok = False
    if len(_VALID_DATES) < 4096:
        _VALID_DATES[text] = ok
    return ok


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


_SHORT_IDS: dict[str, str] = {}  # eviction asks for the same facts' ids again and again


def short_id(text: str) -> str:
    known = _SHORT_IDS.get(text)
    if known is None:
        known = hashlib.sha256(normalise(text).encode()).hexdigest()[:10]
        if len(_SHORT_IDS) >= 65536:
            _SHORT_IDS.clear()
        _SHORT_IDS[text] = known
    return known


@dataclass
class Fact:
    text: str
    section: str
    line: int  # 1-based
    end_line: int
    date: str | None = None

    @property
    def id(self) -> str:
        """Short hash of the normalised text: stable until the fact is edited."""
        return short_id(self.text)

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


def _section_name(heading: str | None) -> str:
    return (heading or "").strip()


def _indent(ws: str) -> int:
    return len(ws.expandtabs(4))


def _scan(lines: list[str], start: int) -> Iterator[tuple[int, str, bool]]:
    """(index, line, hidden) for each line from `start`.

    `hidden` marks lines that open, close or lie inside a fenced code block or an HTML
    comment block: a bullet quoted in a code sample or commented out is never an entry.
    """
    fence: str | None = None
    in_comment = False
    for idx in range(max(0, start), len(lines)):
        raw = lines[idx]
        if fence is not None:
            m = FENCE_RE.match(raw)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not raw.strip().lstrip(fence[0]):
                fence = None
            yield idx, raw, True
            continue
        if in_comment:
            in_comment = "-->" not in raw
            yield idx, raw, True
            continue
        m = FENCE_RE.match(raw) if raw.lstrip(" ")[:1] in "`~" and raw.strip() else None
        if m:
            fence = m.group(1)
            yield idx, raw, True
            continue
        stripped = raw.strip()
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped[4:]
            yield idx, raw, True
            continue
        yield idx, raw, False


def _content_lines(lines: list[str], start: int) -> Iterator[tuple[int, str]]:
    """(index, line) of the lines that can hold entries (see _scan)."""
    for idx, raw, hidden in _scan(lines, start):
        if not hidden:
            yield idx, raw


def parse_facts(lines: list[str], start: int = 0) -> tuple[list[Fact], list[Problem]]:
    """Facts are bullets under `##` sections; continuation lines are indented.

    This runs for every facts.md of a whole-tree check, so the common file (no code block,
    no HTML comment) takes one pass that takes `- ` bullets apart with string methods
    (what BULLET_RE would give); anything else goes through the line-by-line parser."""
    plain = _parse_facts_plain(lines, start)
    return plain if plain is not None else _parse_facts_lines(lines, start)


class _NotPlain(Exception):
    """A line the plain pass does not handle: a possible fence or comment opener, or a
    bullet holding a line break (where the regexes and string methods part ways)."""


def _parse_facts_plain(lines: list[str], start: int) -> tuple[list[Fact], list[Problem]] | None:
    """parse_facts for files where no line is hidden; None when one might be."""
    try:
        facts, problems = _facts_pass(lines, start)
    except _NotPlain:
        return None
    _report_duplicate_facts(facts, problems)
    return facts, problems


def _facts_pass(lines: list[str], start: int) -> tuple[list[Fact], list[Problem]]:
    facts: list[Fact] = []
    problems: list[Problem] = []
    section = ""
    current: Fact | None = None
    for idx in range(max(0, start), len(lines)):
        raw = lines[idx]
        if not raw:
            continue
        lineno = idx + 1
        if raw[0] in "-*+" and raw[1:2].isspace():
            if "\n" in raw:
                raise _NotPlain
            body = raw[1:].lstrip()  # BULLET_RE's group 3 for an unindented bullet
            col = len(raw) - len(body) + 1
        else:
            stripped = raw.strip()
            if stripped[:1] in _OPENERS:
                raise _NotPlain  # maybe a fence or a comment: _scan decides
            heading = _heading(raw, section)
            if heading is not None:
                section, current = heading, None
                continue
            b = BULLET_RE.match(raw) if stripped[:1] in "-*+" and stripped else None
            if not (b and _indent(b.group(1)) < 2):
                if not stripped:
                    continue
                current = _not_a_bullet(current, raw, stripped, lineno, section, facts,
                                        problems)
                continue
            body = b.group(3)
            col = b.start(3) + 1
        date = None
        if body[:1] == "[":
            d = DATE_PREFIX_RE.match(body)
            if d:
                date = d.group(1)
                if not valid_date(date):
                    problems.append(Problem(lineno, col,
                                            f"fact date [{date}] is not a valid YYYY-MM-DD date",
                                            raw))
                body = body[d.end():]
        text = body.strip()
        if not text:
            problems.append(Problem(lineno, 1, "empty fact bullet", raw, "warning"))
            current = None
            continue
        current = Fact(text, section, lineno, lineno, date)
        facts.append(current)
    return facts, problems


_OPENERS = frozenset("`~<")  # first characters of fence and comment lines


def _parse_facts_lines(lines: list[str], start: int) -> tuple[list[Fact], list[Problem]]:
    """parse_facts line by line through _scan (code blocks and comments hide lines)."""
    facts: list[Fact] = []
    problems: list[Problem] = []
    section = ""
    current: Fact | None = None
    last_idx = start - 1
    for idx, raw in _content_lines(lines, start):
        if idx != last_idx + 1:
            current = None  # a comment or code block ends the fact before it
        last_idx = idx
        lineno = idx + 1
        stripped = raw.strip()
        heading = _heading(raw, section)
        if heading is not None:
            section, current = heading, None
            continue
        b = BULLET_RE.match(raw) if stripped[:1] in "-*+" and stripped else None
        if b and _indent(b.group(1)) < 2:
            body = b.group(3)
            date = None
            d = DATE_PREFIX_RE.match(body) if body[:1] == "[" else None
            if d:
                date = d.group(1)
                if not valid_date(date):
                    problems.append(Problem(lineno, b.start(3) + 1,
                                            f"fact date [{date}] is not a valid YYYY-MM-DD date",
                                            raw))
                body = body[d.end():]
            if not body.strip():
                problems.append(Problem(lineno, 1, "empty fact bullet", raw, "warning"))
                current = None
                continue
            current = Fact(body.strip(), section, lineno, lineno, date)
            facts.append(current)
            continue
        if not stripped:
            continue
        current = _not_a_bullet(current, raw, stripped, lineno, section, facts, problems)
    _report_duplicate_facts(facts, problems)
    return facts, problems


def _heading(raw: str, section: str) -> str | None:
    """For a heading line, the section it opens (`##` names one; other levels keep the
    current section); None for any other line. Either way a heading ends the open fact."""
    m = HEADING_RE.match(raw) if "#" in raw[:4] else None
    if m is None:
        return None
    return _section_name(m.group(2)) if len(m.group(1)) == 2 else section


def _not_a_bullet(current: Fact | None, raw: str, stripped: str, lineno: int, section: str,
                  facts: list[Fact], problems: list[Problem]) -> Fact | None:
    """A non-blank line that is not a fact bullet: indented, it continues the open fact;
    otherwise it is stray (reported once there is a section or a fact) and ends the fact,
    so later indented lines are not its own. Returns the fact still open."""
    if current is not None and raw.startswith((" ", "\t")):
        current.text += " " + stripped
        current.end_line = lineno
        return current
    if section or facts:
        problems.append(Problem(lineno, 1, "text outside a fact bullet: facts are '- ' "
                                "bullets under '## ' sections", raw, "warning"))
    return None


def _report_duplicate_facts(facts: list[Fact], problems: list[Problem]) -> None:
    seen: dict[str, int] = {}
    is_nfc = unicodedata.is_normalized
    for f in facts:
        key = f.text  # _dup_key, inlined: this runs once per fact
        if not is_nfc("NFC", key):
            key = unicodedata.normalize("NFC", key)
        if "  " in key or not key.isprintable():  # else split/join would change nothing
            key = " ".join(key.split())
        key = key.casefold()
        if key in seen:
            problems.append(Problem(f.line, 1, f"duplicate fact (same text as line {seen[key]})",
                                    f.text, "warning"))
        else:
            seen[key] = f.line


def _dup_key(text: str) -> str:
    """normalise() without its cost for the common case of already-NFC text."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split()).casefold()


def parse_loops(lines: list[str], start: int = 0) -> tuple[list[Loop], list[Problem]]:
    """Open loops: `- [ ]`/`- [x]` bullets, in the canonical or the seeds' form."""
    loops: list[Loop] = []
    problems: list[Problem] = []
    section = ""
    for idx, raw in _content_lines(lines, start):
        lineno = idx + 1
        m = HEADING_RE.match(raw) if "#" in raw[:4] else None  # it needs ` {0,3}#`
        if m:
            if len(m.group(1)) == 2:
                section = _section_name(m.group(2))
            continue
        b = BULLET_RE.match(raw) if raw[:1] in _BULLET_MARKS else None  # group 1 empty
        if not b or b.group(1):
            continue
        body = b.group(3)
        cb = CHECKBOX_RE.match(body)
        col = b.start(3) + 1
        if not cb:
            problems.append(Problem(lineno, col, "loop without a checkbox: write '- [ ] ...' "
                                    "(open) or '- [x] ...' (closed)", raw))
            continue
        mark, rest = cb.group(1), cb.group(2)
        if mark not in (" ", "x", "X"):
            problems.append(Problem(lineno, col, f"unknown checkbox mark [{mark}]: use [ ] or [x]",
                                    raw))
            continue
        loop, found = _parse_loop(rest, mark != " ", section, lineno, col, raw)
        problems.extend(found)
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


def _paren_search(anchored: re.Pattern[str], rest: str) -> tuple[int, re.Match[str]] | None:
    """(start, match) of what OPENED_RE / PRIORITY_RE.search(rest) finds, through their
    anchored forms (`\\s*` dropped). Such a match is the whitespace run before a `(`
    where the anchored form matches, so the leftmost one starts before the first such
    `(`; and as both end with `)` and optional space, other texts are skipped at once."""
    if not rest.rstrip().endswith(")"):
        return None
    q = rest.find("(")
    while q >= 0:
        m = anchored.match(rest, q)
        if m is not None:
            return _run_start(rest, q), m
        q = rest.find("(", q + 1)
    return None


def _dash_search(anchored: re.Pattern[str], rest: str) -> tuple[int, re.Match[str]] | None:
    """(start, match) of what SEED_OPENED_RE / CLOSED_RE.search(rest) finds: both start
    with `\\s+[—–-]+`, so a match is a whitespace run before a dash where the anchored form
    (`\\s+` dropped) matches; the leftmost such dash gives the leftmost match."""
    found: list[int] = []
    for dash in _DASHES:
        d = rest.find(dash, 1)
        while d >= 0:
            if rest[d - 1].isspace():
                found.append(d)
            d = rest.find(dash, d + 1)
    for d in sorted(found):
        m = anchored.match(rest, d)
        if m is not None:
            return _run_start(rest, d), m
    return None


def _run_start(text: str, i: int) -> int:
    """Start of the whitespace run that ends at `i` (`i` itself without one)."""
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return i


def _strip_open_suffixes(rest: str) -> tuple[str, str | None, str | None]:
    """Remove `(opened D, priority P)`, `— відкрита з D` and `(priority P)`, in any order."""
    opened = priority = None
    for _ in range(3):
        o = _paren_search(_OPENED_AT, rest) if opened is None else None
        if o:
            opened = o[1].group(1)
            priority = o[1].group(2) or priority
            rest = rest[: o[0]]
            continue
        s = _dash_search(_SEED_OPENED_AT, rest) if opened is None else None
        if s:
            opened = s[1].group(1)
            rest = rest[: s[0]]
            continue
        p = _paren_search(_PRIORITY_AT, rest) if priority is None else None
        if p:
            priority = p[1].group(1)
            rest = rest[: p[0]]
            continue
        break
    return rest, opened, priority


def _parse_loop(rest: str, closed: bool, section: str, lineno: int, col: int,
                raw: str) -> tuple[Loop | None, list[Problem]]:
    explicit = False
    loop_id = None
    mid = LOOP_ID_RE.match(rest)
    if mid:
        loop_id, rest = mid.group(1), mid.group(2)
        explicit = True
    problems: list[Problem] = []
    closed_on = run = resolution = None
    if closed:
        found = _dash_search(_CLOSED_AT, rest)
        if found:
            c = found[1]
            closed_on, run = c.group(1), c.group(2)
            resolution = (c.group(3) or "").strip() or None
            rest = rest[: found[0]]
            if not valid_date(closed_on):
                problems.append(Problem(lineno, col, f"closing date {closed_on!r} is not "
                                        "YYYY-MM-DD", raw))
        else:
            problems.append(Problem(lineno, col, "closed loop without '— closed YYYY-MM-DD | "
                                    "run_<id>'", raw, "warning"))
    rest, opened, explicit_priority = _strip_open_suffixes(rest)
    priority = "high" if section.casefold() in HIGH_SECTIONS else "normal"
    if explicit_priority is not None:
        priority = explicit_priority.lower()
    if opened is not None and not valid_date(opened):
        problems.append(Problem(lineno, col, f"opening date {opened!r} is not YYYY-MM-DD", raw))
    if priority not in PRIORITIES:
        problems.append(Problem(lineno, col, f"priority {priority!r} is not one of high, "
                                "normal, low", raw))
        priority = "normal"
    text = rest.strip()
    if not text:
        problems.append(Problem(lineno, col, "loop without text", raw))
        return None, problems
    return Loop(loop_id or "loop_" + short_id(text)[:8], text, closed, section, lineno, priority,
                opened, closed_on, run, resolution, explicit), problems


def parse_decisions(lines: list[str], start: int = 0) -> tuple[list[Decision], list[Problem]]:
    """ADR-style blocks: `## YYYY-MM-DD — title` then `**Key:** value` lines."""
    decisions: list[Decision] = []
    problems: list[Problem] = []
    current: Decision | None = None
    for idx, raw, hidden in _scan(lines, start):
        lineno = idx + 1
        m = None if hidden else HEADING_RE.match(raw)
        if m and len(m.group(1)) == 2:
            heading = m.group(2) or ""
            d = DECISION_HEAD_RE.match(heading)
            if not d or not valid_date(d.group(1)):
                col = m.start(2) + 1 if m.group(2) is not None else 1
                problems.append(Problem(lineno, col, "decision heading must be "
                                        "'## YYYY-MM-DD — title'", raw))
                current = None
                continue
            current = Decision(d.group(1), d.group(2).strip(), lineno, lineno)
            decisions.append(current)
            continue
        if current is not None:
            if raw.strip():
                current.end_line = lineno  # code and comments belong to the block
            f = None if hidden else FIELD_RE.match(raw.strip())
            if f:
                current.fields[f.group(1).strip()] = f.group(2).strip()
    return decisions, problems
