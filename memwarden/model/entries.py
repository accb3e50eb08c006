"""Entries of memory files: facts, open loops, decisions — parsed leniently, with positions.

Each parser takes the file's lines (and where the body starts) and returns entries plus
problems (line, col, message, snippet) for MW206. Lines inside fenced code blocks and
HTML comments are content, never entries. Canonical writers live with apply.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator

# ATX heading (CommonMark): up to 3 spaces, 1-6 '#', then space or end; an optional
# closing run of '#' must be preceded by a space ("## C#" keeps its '#').
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
BULLET_RE = re.compile(r"^(\s*)([-*+])\s+(.*)$")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
DATE_PREFIX_RE = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\]\s*")
CHECKBOX_RE = re.compile(r"^\[(.)\]\s*(.*)$")
LOOP_ID_RE = re.compile(r"^(loop_[A-Za-z0-9][A-Za-z0-9._-]{0,127}):\s*(.*)$")
OPENED_RE = re.compile(
    r"\s*\((?:opened|відкрита з|открыта с)\s+(\S+?)(?:,\s*priority\s+(\S+?))?\)\s*$",
    re.IGNORECASE)
PRIORITY_RE = re.compile(r"\s*\(priority\s+(\S+?)\)\s*$", re.IGNORECASE)
SEED_OPENED_RE = re.compile(r"\s+[—–-]+\s+(?:відкрита з|открыта с|opened)\s+(\S+)\s*$",
                                  re.IGNORECASE)
CLOSED_RE = re.compile(
    r"\s+[—–-]+\s+(?:closed|закрита|закрыта)\s+(\S+?)(?:\s*\|\s*(run_[A-Za-z0-9._-]+))?"
    r"(?:\s+[—–-]+\s+(.*?))?\s*$", re.IGNORECASE)
# The same patterns from their first literal on, matched only where that literal sits
# (see _suffix_search): a search would try the leading \s at every position of the line.
_OPENED_AT = re.compile(OPENED_RE.pattern.removeprefix(r"\s*"), re.IGNORECASE)
_PRIORITY_AT = re.compile(PRIORITY_RE.pattern.removeprefix(r"\s*"), re.IGNORECASE)
_SEED_OPENED_AT = re.compile(SEED_OPENED_RE.pattern.removeprefix(r"\s+"), re.IGNORECASE)
_CLOSED_AT = re.compile(CLOSED_RE.pattern.removeprefix(r"\s+"), re.IGNORECASE)
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

@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    """A problem the parser found."""

    line: int
    col: int
    message: str
    snippet: str
    severity: str = "error"


_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


_VALID_DATES: dict[str, bool] = {}  # the few hundred dates a repository uses, remembered


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _real_day(text: str) -> bool:
    """Whether YYYY-MM-DD (ASCII digits) names a day of the proleptic Gregorian calendar, as
    date.fromisoformat accepts it: tested against it, without importing datetime (part of
    a hook run's start-up) for every file with dated entries."""
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    if year < 1 or not 1 <= month <= 12 or day < 1:
        return False
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _MONTH_DAYS[month - 1] + leap


def valid_date(text: str) -> bool:
    known = _VALID_DATES.get(text)
    if known is not None:
        return known
    ok = _DATE_RE.fullmatch(text) is not None and text.isascii() and _real_day(text)
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


@dataclasses.dataclass(slots=True)
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


@dataclasses.dataclass(slots=True)
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


@dataclasses.dataclass(slots=True)
class Decision:
    date: str
    title: str
    line: int
    end_line: int
    fields: dict[str, str] = dataclasses.field(default_factory=dict)


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


def fact_problems(lines: list[str], start: int = 0, text: str | None = None) -> list[Problem]:
    """parse_facts(lines, start)[1], for MW206, which needs no Fact objects.

    `text` is what `lines` were split from (MemFile.text). Most facts files are plain:
    every body line a `- ` bullet, a heading or blank, no two facts alike. Such a file is
    proven problem-free by a few passes over the whole text (see _facts_surely_fine)
    instead of a Python step per line; any other file goes through parse_facts."""
    if text is not None and _facts_surely_fine(lines, start, text):
        return []
    return parse_facts(lines, start)[1]


# A calendar date as DATE_PREFIX_RE and valid_date see it, in ASCII digits: years 0001-9999,
# days 29 and 30 in any month but February, 31 in the long months, 29 February in leap
# years (divisible by 4, centuries only by 400). Tested against valid_date.
_SURE_DATE = (
    r"(?:(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
    r"-02-29)")
# A body line other than a blank line, an ATX heading at the line start, or `- ` and a
# fact: a text not opening with a date prefix, or a sure date prefix and then a text.
# Lines are matched from the line break before them (the text holds no CR).
_ODD_FACT_LINE = re.compile(
    r"\n(?!- (?:[^\s\[]|\[(?!\d{4}-\d{2}-\d{2}\])|\[" + _SURE_DATE + r"\][^\S\n]*\S)"
    r"|#{1,6}(?:[ \t]|\n|\Z)|\n|\Z)")
# A bullet's fact text: what _facts_pass keeps of `- [date] text` (stripped).
_FACT_TEXT = re.compile(r"\n- (?:\[\d{4}-\d{2}-\d{2}\]\s*)?(.*\S)")
def _is_nfc(text: str) -> bool:
    return unicodedata.is_normalized("NFC", text)


def _facts_surely_fine(lines: list[str], start: int, text: str) -> bool:
    """True only when parse_facts(lines, start) reports no problem: each body line is
    blank, a heading (`#`..`######` then a space, a tab or the end) or `- ` and a
    non-space (so no stray line, no empty bullet, nothing a fence or comment could hide);
    every date prefix is a real date; and the texts' duplicate keys (_dup_key) all
    differ. For NFC, printable texts without a double space that key is the casefolded
    text."""
    if start >= len(lines):
        return True  # no body: no entries
    if "\r" in text:
        return False  # lines split on CR too: offsets below would not hold
    if start > 0:
        pos = sum(map(len, lines[:start])) + start - 1  # the line break before the body
    else:
        text, pos = "\n" + text, 0
    if text[pos] != "\n" or not text.startswith(lines[start], pos + 1):
        return False  # not the text these lines came from
    if _ODD_FACT_LINE.search(text, pos) is not None:
        return False
    if text.find("  ", pos) >= 0:
        return False  # maybe a double space in a text (then _dup_key collapses it)
    texts = _FACT_TEXT.findall(text, pos)
    if not all(map(str.isprintable, texts)) or not all(map(_is_nfc, texts)):
        return False
    return len(set(map(str.casefold, texts))) == len(texts)


def _dup_key(text: str) -> str:
    """normalise() without its cost for the common case of already-NFC text."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split()).casefold()


def loop_span(lines: list[str], line: int) -> tuple[int, int]:
    """The loop on 1-based `line` and the indented lines that continue it (its details), as
    1-based inclusive lines: removing a loop removes them too, or they would stay behind
    under another loop or none."""
    end = line
    while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
        end += 1
    return line, end


def parse_loops(lines: list[str], start: int = 0) -> tuple[list[Loop], list[Problem]]:
    """Open loops: `- [ ]`/`- [x]` bullets, in the canonical or the legacy Ukrainian form.

    A whole-tree check parses every open_loops.md, so a file where no line can be hidden
    (no fence, no comment) is walked without _scan, and a line in one of the forms apply
    and the legacy form write (see _CANON_LOOP) is taken apart by one match; every other line
    goes through the general parser."""
    loops: list[Loop] = []
    problems: list[Problem] = []
    section = ""
    high = False  # whether `section` makes loops high priority by default
    rows: Iterable[tuple[int, str]]
    if _nothing_hidden(lines, start):
        rows = enumerate(lines[max(0, start):], max(0, start))
    else:
        rows = _content_lines(lines, start)
    for idx, raw in rows:
        if raw[:3] == "- [":
            c = _CANON_LOOP.fullmatch(raw)
            found = _canonical_loop(c, section, high, idx + 1, raw) if c is not None else None
            if found is None:
                found = _loop_line(raw, section, idx + 1)
        elif raw[:1] in _BULLET_MARKS:  # (a heading needs ` {0,3}#` first)
            found = _loop_line(raw, section, idx + 1)
        else:
            m = HEADING_RE.match(raw) if "#" in raw[:4] else None
            if m and len(m.group(1)) == 2:
                section = _section_name(m.group(2))
                high = section.casefold() in HIGH_SECTIONS
            continue
        if found is None:
            continue
        loop, line_problems = found
        if line_problems:
            problems.extend(line_problems)
        if loop is not None:
            loops.append(loop)
    seen: dict[str, int] = {}
    for lp in loops:
        if lp.id in seen:
            problems.append(Problem(lp.line, 1, f"duplicate loop id {lp.id} (first on line "
                                    f"{seen[lp.id]})", lp.id))
        else:
            seen[lp.id] = lp.line
    return loops, problems


def loop_problems(lines: list[str], start: int = 0) -> list[Problem]:
    """parse_loops(lines, start)[1], for MW206, which needs no Loop objects: when nothing is
    hidden and every bullet is a canonical loop line (see _canonical_loop) with real dates
    and an id of its own, there is no problem (headings only set default priorities, and
    every other line is ignored); anything else goes through parse_loops."""
    if not _nothing_hidden(lines, start):
        return parse_loops(lines, start)[1]
    ids: set[str] = set()
    first = max(0, start)
    for raw in lines[first:]:
        if raw[:1] not in _BULLET_MARKS:
            continue
        m = _CANON_LOOP.fullmatch(raw) if raw[1:3] == " [" else None
        if m is None:
            return parse_loops(lines, start)[1]
        mark, loop_id, text, opened, _, seed, closed_on, _, _ = m.groups()
        if (mark is None) != (closed_on is None):
            return parse_loops(lines, start)[1]
        if opened is None:
            if _space_dash(text) or (
                    text[-1] == ")" and _PAREN_WORD.search(text) is not None):
                return parse_loops(lines, start)[1]
            opened = seed
        if (opened is not None and not valid_date(opened)) or (
                closed_on is not None and not valid_date(closed_on)):
            return parse_loops(lines, start)[1]
        if loop_id is None:
            loop_id = "loop_" + short_id(text)[:8]
        if loop_id in ids:
            return parse_loops(lines, start)[1]
        ids.add(loop_id)
    return []


def _nothing_hidden(lines: list[str], start: int) -> bool:
    """True when _scan would hide no line from `start`: a fence opens only on a line with
    three backticks or tildes, a comment on a line holding `<!--`."""
    body = "\n".join(lines[max(0, start):])
    return "```" not in body and "~~~" not in body and "<!--" not in body


def _loop_line(raw: str, section: str,
               lineno: int) -> tuple[Loop | None, list[Problem]] | None:
    """The general parser for one content line starting with a bullet mark: None when it
    is no loop bullet, else the loop (or None) and the line's problems."""
    b = BULLET_RE.match(raw)
    if not b or b.group(1):
        return None
    body = b.group(3)
    cb = CHECKBOX_RE.match(body)
    col = b.start(3) + 1
    if not cb:
        return None, [Problem(lineno, col, "loop without a checkbox: write '- [ ] ...' "
                              "(open) or '- [x] ...' (closed)", raw)]
    mark, rest = cb.group(1), cb.group(2)
    if mark not in (" ", "x", "X"):
        return None, [Problem(lineno, col, f"unknown checkbox mark [{mark}]: use [ ] or [x]",
                              raw)]
    return _parse_loop(rest, mark != " ", section, lineno, col, raw)


# The loop lines apply writes (apply/propose.py) and the legacy form use, matched whole:
#   - [ ] loop_<id>: text (opened D, priority P)      (the id is optional)
#   - [ ] text — відкрита з D
#   - [x] loop_<id>: text — closed D | run_<id>( — resolution)
# The text starts and ends with a non-space; _canonical_loop checks what else it must not
# hold for the general parser to read the line the same way.
_CANON_LOOP = re.compile(
    r"- \[(?: |([xX]))\] (?:(loop_[A-Za-z0-9][A-Za-z0-9._-]{0,127}): |(?!loop_))"
    r"(\S(?:.*\S)?)"
    r"(?: \(opened (\d{4}-\d{2}-\d{2}), priority (high|normal|low)\)"
    r"| — (?:відкрита з|открыта с|opened) (\d{4}-\d{2}-\d{2})"
    r"| — closed (\d{4}-\d{2}-\d{2}) \| (run_[A-Za-z0-9._-]+)(?: — (\S(?:.*\S)?))?)")
# What _paren_search looks for in a text: an opening parenthesis with a keyword.
_PAREN_WORD = re.compile(r"\((?:opened|відкрита з|открыта с|priority)", re.IGNORECASE)


def _space_dash(text: str) -> bool:
    """Whether _dash_search has a dash to try in `text`: one after a whitespace character."""
    for dash in _DASHES:
        d = text.find(dash, 1)
        while d >= 0:
            if text[d - 1].isspace():
                return True
            d = text.find(dash, d + 1)
    return False


def _canonical_loop(m: re.Match[str], section: str, high: bool, lineno: int,
                    raw: str) -> tuple[Loop | None, list[Problem]] | None:
    """_parse_loop's answer for a line _CANON_LOOP matched, or None when the general parser
    might read it otherwise. With `(opened D, priority P)` at its end the suffix is found
    whatever the text holds (an earlier parenthesis cannot match through the spaces of
    the real suffix) and both values are then known, so the text is not searched again.
    Otherwise the text is searched for a closing suffix, an opening one and a priority,
    so it must hold no dash after a space and, when it ends with `)`, no `(keyword`."""
    mark, loop_id, text, opened, priority, seed, closed_on, run, resolution = m.groups()
    if (mark is None) != (closed_on is None):
        return None  # an open loop with a closing suffix or the other way round
    if opened is None:
        if _space_dash(text) or (
                text[-1] == ")" and _PAREN_WORD.search(text) is not None):
            return None
        opened = seed
        priority = "high" if high else "normal"
    problems: list[Problem] = []
    if closed_on is not None and not valid_date(closed_on):
        problems.append(Problem(lineno, 3, f"closing date {closed_on!r} is not YYYY-MM-DD", raw))
    if opened is not None and not valid_date(opened):
        problems.append(Problem(lineno, 3, f"opening date {opened!r} is not YYYY-MM-DD", raw))
    return Loop(loop_id or "loop_" + short_id(text)[:8], text, mark is not None, section, lineno,
                priority, opened, closed_on, run, resolution, loop_id is not None), problems


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
