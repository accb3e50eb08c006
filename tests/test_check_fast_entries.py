"""The fast entry parsers give exactly what the straightforward ones gave.

memwarden/entries.py takes common lines apart with string methods and runs its suffix
regexes only where their first literal sits; the reference below is the line-by-line
regex version it replaced (kept here verbatim), and hypothesis feeds both the same
Markdown built from the pieces entries are made of.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.model.entries import (
    BULLET_RE,
    CHECKBOX_RE,
    CLOSED_RE,
    DATE_PREFIX_RE,
    HEADING_RE,
    HIGH_SECTIONS,
    LOOP_ID_RE,
    OPENED_RE,
    PRIORITIES,
    PRIORITY_RE,
    SEED_OPENED_RE,
    Fact,
    Loop,
    Problem,
    _content_lines,
    _indent,
    _section_name,
    parse_facts,
    parse_loops,
    short_id,
    valid_date,
)

# ---------------------------------------------------------------- reference (verbatim)

def ref_valid_date(text: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def ref_parse_facts(lines: list[str], start: int = 0) -> tuple[list[Fact], list[Problem]]:
    """Facts are bullets under `##` sections; continuation lines are indented."""
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
        m = HEADING_RE.match(raw) if "#" in raw[:4] else None
        if m:
            if len(m.group(1)) == 2:
                section = _section_name(m.group(2))
            current = None
            continue
        b = BULLET_RE.match(raw) if stripped[:1] in "-*+" and stripped else None
        if b and _indent(b.group(1)) < 2:
            body = b.group(3)
            date = None
            d = DATE_PREFIX_RE.match(body) if body[:1] == "[" else None
            if d:
                date = d.group(1)
                if not ref_valid_date(date):
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
        if current is not None and raw.startswith((" ", "\t")):
            current.text += " " + stripped
            current.end_line = lineno
            continue
        current = None  # a stray line ends the fact: later indented lines are not its own
        if section or facts:
            problems.append(Problem(lineno, 1, "text outside a fact bullet: facts are '- ' "
                                    "bullets under '## ' sections", raw, "warning"))
    seen: dict[str, int] = {}
    for f in facts:
        key = _ref_dup_key(f.text)
        if key in seen:
            problems.append(Problem(f.line, 1, f"duplicate fact (same text as line {seen[key]})",
                                    f.text, "warning"))
        else:
            seen[key] = f.line
    return facts, problems


def _ref_dup_key(text: str) -> str:
    """normalise() without its cost for the common case of already-NFC text."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split()).casefold()


def ref_parse_loops(lines: list[str], start: int = 0) -> tuple[list[Loop], list[Problem]]:
    """Open loops: `- [ ]`/`- [x]` bullets, in the canonical or the seeds' form."""
    loops: list[Loop] = []
    problems: list[Problem] = []
    section = ""
    for idx, raw in _content_lines(lines, start):
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
        loop, found = _ref_parse_loop(rest, mark != " ", section, lineno, col, raw)
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


def _ref_strip_open_suffixes(rest: str) -> tuple[str, str | None, str | None]:
    """Remove `(opened D, priority P)`, `— відкрита з D` and `(priority P)`, in any order."""
    opened = priority = None
    for _ in range(3):
        o = OPENED_RE.search(rest) if opened is None else None
        if o:
            opened = o.group(1)
            priority = o.group(2) or priority
            rest = rest[: o.start()]
            continue
        s = SEED_OPENED_RE.search(rest) if opened is None else None
        if s:
            opened = s.group(1)
            rest = rest[: s.start()]
            continue
        p = PRIORITY_RE.search(rest) if priority is None else None
        if p:
            priority = p.group(1)
            rest = rest[: p.start()]
            continue
        break
    return rest, opened, priority


def _ref_parse_loop(rest: str, closed: bool, section: str, lineno: int, col: int,
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
        c = CLOSED_RE.search(rest)
        if c:
            closed_on, run = c.group(1), c.group(2)
            resolution = (c.group(3) or "").strip() or None
            rest = rest[: c.start()]
            if not ref_valid_date(closed_on):
                problems.append(Problem(lineno, col, f"closing date {closed_on!r} is not "
                                        "YYYY-MM-DD", raw))
        else:
            problems.append(Problem(lineno, col, "closed loop without '— closed YYYY-MM-DD | "
                                    "run_<id>'", raw, "warning"))
    rest, opened, explicit_priority = _ref_strip_open_suffixes(rest)
    priority = "high" if section.casefold() in HIGH_SECTIONS else "normal"
    if explicit_priority is not None:
        priority = explicit_priority.lower()
    if opened is not None and not ref_valid_date(opened):
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



# ---------------------------------------------------------------- the comparison

PIECES = st.sampled_from([
    "- ", "* ", "+ ", "-", "  - ", "   * ", "\t- ", " ", "  ", "\t", "## ", "# ", "### ", "#",
    "```", "~~~", "````", "<!--", "-->", "[2026-02-30] ", "[2026-01-15] ", "[2026-1-5]",
    "[x] ", "[ ] ", "[X] ", "[?] ", "[] ", "loop_a1: ", "loop_b.2: ", " (opened 2026-01-01)",
    " (opened 2026-01-01, priority high)", " (Opened 2026-13-01, priority Low)",
    " (priority urgent)", " (priority low) ", " — відкрита з 2026-01-26", " - opened 2026-01-02",
    " – открыта с 2026-02-30 ", " — closed 2026-02-01 | run_x", " -- closed 2026-02-01",
    " — closed 2026-02-01 | run_a — done", " — Закрита 2026-02-01", "(", ")", "((", " (x)",
    "text", "Факт про щось", "ЇЖАК", "Straße", "STRASSE", "ﬁx", "é", "é", "\u00a0", "\u2003",
    "\u2028", "\r", "\n", "\x0b", "  ", "Критичні", "Deprecated", ":", "|", "run_1",
    "2026-02-01", "—", "–", "-", "**Status:** ok",
])
LINE = st.lists(PIECES, max_size=7).map("".join)
DOC = st.lists(LINE, max_size=25)


@settings(max_examples=200, deadline=None)
@given(DOC, st.integers(0, 3))
def test_fast_facts_equal_reference(lines, start):
    assert parse_facts(lines, start) == ref_parse_facts(lines, start)


@settings(max_examples=200, deadline=None)
@given(DOC, st.integers(0, 3))
def test_fast_loops_equal_reference(lines, start):
    assert parse_loops(lines, start) == ref_parse_loops(lines, start)


@given(st.text(max_size=12) | st.from_regex(r"\d{4}-\d{2}-\d{2}\n?", fullmatch=True))
def test_valid_date_equals_reference(text):
    assert valid_date(text) == ref_valid_date(text)
    assert valid_date(text) == ref_valid_date(text)  # remembered answers too


def test_valid_date_knows_the_calendar_as_datetime_does():
    """Leap years (1900 no, 2000 yes), month lengths, year 0, non-ASCII digits: valid_date
    works the calendar out itself (no datetime import on the hook path)."""
    for year in ("0000", "0001", "1900", "1999", "2000", "2024", "2026", "2100", "9999"):
        for month in range(0, 14):
            for day in range(0, 33):
                text = f"{year}-{month:02d}-{day:02d}"
                assert valid_date(text) == ref_valid_date(text), text
    assert not valid_date("２０２６-01-01") and not valid_date("٢٠٢٦-٠١-٠١")


def test_typical_lines_go_through_both_paths():
    lines = ["---", "agent: a", "---", "## Домен", "- [2026-01-15] Факт один.", "* факт два",
             "  продовження", "- факт один.", "текст", "## Критичні",
             "- [ ] loop_a1: x (opened 2026-01-01, priority high)",
             "- [ ] y — відкрита з 2026-01-26", "- [x] z — closed 2026-02-01 | run_a — done",
             "- [ ] w (неповний, 4) (priority low)"]
    assert parse_facts(lines, 3) == ref_parse_facts(lines, 3)
    assert parse_loops(lines, 3) == ref_parse_loops(lines, 3)
    loops, _ = parse_loops(lines, 3)
    assert [(lp.priority, lp.opened, lp.closed_on) for lp in loops] == [
        ("high", "2026-01-01", None), ("high", "2026-01-26", None),
        ("high", None, "2026-02-01"), ("low", None, None)]


# Whole canonical lines (what apply writes and the seeds use), with texts that hold what
# the suffix parsers look for: parse_loops takes these apart with one match.
CANON_TEXT = st.lists(st.sampled_from([
    "a", "Б", " ", "-", "—", "–", "(", ")", "x", "\t", "\u00a0", "loop_q:", "(priority low)",
    "(opened 2026-01-01)", "(відкрита з 2026-01-01)", " — closed 2026-01-01 | run_z",
    " — відкрита з 2026-01-02", "(PRİORİTY high)"]), min_size=1, max_size=5).map("".join)
CANON_LINE = st.one_of(
    st.builds(lambda m, i, t, d, p: f"- [{m}] {i}{t} (opened {d}, priority {p})",
              st.sampled_from([" ", "x"]), st.sampled_from(["", "loop_a: ", "loop_b: "]),
              CANON_TEXT, st.sampled_from(["2026-02-17", "2026-02-30"]),
              st.sampled_from(["high", "normal", "low"])),
    st.builds(lambda m, i, t, d: f"- [{m}] {i}{t} — відкрита з {d}", st.sampled_from([" ", "x"]),
              st.sampled_from(["", "loop_c: "]), CANON_TEXT,
              st.sampled_from(["2026-01-26", "2026-02-31"])),
    st.builds(lambda m, i, t, d, r: f"- [{m}] {i}{t} — closed {d} | run_1{r}",
              st.sampled_from(["x", "X", " "]), st.sampled_from(["", "loop_d: ", "loop_a: "]),
              CANON_TEXT, st.sampled_from(["2026-02-16", "2026-02-30"]),
              st.sampled_from(["", " — ok", " — a — b", " — closed 2026-01-01 | run_2"])),
    st.sampled_from(["## Критичні", "## Очікування", "", "text"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(CANON_LINE, max_size=15), st.integers(0, 2))
def test_canonical_loop_lines_equal_reference(lines, start):
    assert parse_loops(lines, start) == ref_parse_loops(lines, start)
