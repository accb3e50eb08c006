"""MW206's problem-only paths and the compiled schema checks answer what the full ones do.

entries.fact_problems proves a plain facts file problem-free with a few whole-text passes
and entries.loop_problems walks canonical loop lines without Loop objects; both fall back
to parse_facts / parse_loops for anything else. Hypothesis builds memory files (with
frontmatter, BOM, CRLF, duplicates that differ only in case, width or normalisation,
doubtful dates) and compares both routes; the schema half compares
fastschema.compile_valid with fastschema.is_valid on every pack schema.
"""

from __future__ import annotations

import datetime as _dt
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.model import entries
from memwarden.model.entries import fact_problems, loop_problems, parse_facts, parse_loops
from memwarden.model.layout import classify
from memwarden.model.memfile import MemFile, split_lines
from memwarden.policies.fastschema import compile_valid, is_valid
from memwarden.policies.rules import structure
from memwarden.policies.rules.structure import check_entries

# ---------------------------------------------------------------- facts

FACT_TEXTS = st.sampled_from([
    "Факт про щось", "факт про щось", "ФАКТ ПРО ЩОСЬ", "Straße", "STRASSE", "strasse", "café",
    "cafe\u0301", "a  b", "a b", "a\tb", "a\u00a0b", "ﬁx", "fix", "K", "\u212a", "x", "[[link]] y",
    "[2026-13-01] z", "- dash", "`code`", "<!-- c -->", "## h", "a\u2028b", "\u200bzw", "end ",
    " lead", "Ⅰ", "ⅰ", "(opened 2026-01-01)", "text #tag", "[x] done",
])
DATES = st.sampled_from(["2026-02-17", "2024-02-29", "2023-02-29", "2026-02-30", "2026-13-01",
                         "0000-01-01", "2000-02-29", "1900-02-29", "٢٠٢٦-01-01", "2026-04-31",
                         "2026-12-31", "9999-12-31", "0001-01-01"])
FACT_LINE = st.one_of(
    st.builds(lambda t: f"- {t}", FACT_TEXTS),
    st.builds(lambda d, sep, t: f"- [{d}]{sep}{t}", DATES, st.sampled_from([" ", "", "  ", "\t"]),
              FACT_TEXTS),
    st.builds(lambda d, tail: f"- [{d}]{tail}", DATES, st.sampled_from(["", " ", "  \t"])),
    st.sampled_from(["", "## Домен", "# Facts", "### Sub", "##", "#not", "####### seven",
                     "## ", "- ", "-", "-x", "* star", "+ plus", "  continued", "\tcontinued",
                     "stray", "```", "~~~", "<!--", "-->", "   ## indented", "-\tTab bullet",
                     "- \u00a0nbsp start"]),
)
FRONTMATTER = st.sampled_from(["", "---\nagent: a\n---\n", '---\nagent: "a"\nx: 1\n---\n',
                               "---\nagent: a\n", "---\n---\n", "---\n...\n"])


def _memfile(path: str, data: bytes) -> MemFile:
    info = classify(path)
    assert info is not None
    return MemFile(info, data, 0o100644, "blob")


def _file_bytes(front: str, lines: list[str], end: str, newline: str, bom: bool) -> bytes:
    text = (front + "\n".join(lines) + end).replace("\n", newline)
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


FILES = st.builds(_file_bytes, FRONTMATTER, st.lists(FACT_LINE, max_size=25),
                  st.sampled_from(["", "\n", "\n\n"]),
                  st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"]), st.booleans())


@settings(max_examples=200, deadline=None)
@given(FILES)
def test_fact_problems_equal_parse_facts(data):
    mf = _memfile("memory/a/facts.md", data)
    fm = mf.frontmatter
    if fm is not None and fm.error is not None:
        return  # MW206 leaves such files to MW201
    start = mf.body_start
    assert fact_problems(mf.lines, start, mf.text) == parse_facts(mf.lines, start)[1]


@settings(max_examples=150, deadline=None)
@given(st.lists(FACT_LINE, max_size=25), st.integers(0, 4))
def test_fact_problems_from_any_start(lines, start):
    text = "\n".join(lines) + "\n"
    lines = split_lines(text)
    assert fact_problems(lines, start, text) == parse_facts(lines, start)[1]


def test_plain_facts_take_the_fast_path():
    text = ('---\nagent: "a"\n---\n# Facts\n\n## Домен\n- [2026-01-15] Шлюз готує резюме.\n'
            "- The gateway archives the digest.\n- [2024-02-29] [[link]] x\n")
    lines = split_lines(text)
    assert entries._facts_surely_fine(lines, 3, text)
    assert fact_problems(lines, 3, text) == [] == parse_facts(lines, 3)[1]
    for bad in ("- [2026-02-30] x\n", "- шлюз готує резюме.\n", "stray\n", "- \n"):
        lines = split_lines(text + bad)
        assert not entries._facts_surely_fine(lines, 3, text + bad), bad
        assert fact_problems(lines, 3, text + bad) == parse_facts(lines, 3)[1] != []


# Mostly plain files (the fast path's domain) from tiny texts, so that duplicates that
# differ only in case, normalisation or spacing are common.
TINY = st.lists(st.sampled_from(["a", "A", "б", "Б", "ß", "s", "S", "é", "e\u0301", " ", "  ",
                                 "\t", "ﬁ", "K", "\u212a", "ς", "σ", "Σ", "1", ".", "[", "]",
                                 "\u00a0", "-"]), min_size=1, max_size=4).map("".join)
GOOD_DATES = st.sampled_from(["2026-02-17", "2024-02-29", "2000-02-29", "2026-12-31"])
PLAIN_FACT_LINE = st.one_of(
    st.builds(lambda t: f"- {t}", TINY), st.builds(lambda t: f"- {t}", TINY),
    st.builds(lambda d, t: f"- [{d}] {t}", GOOD_DATES, TINY),
    st.sampled_from(["## Домен", "", "# Facts", "- [2026-02-30] bad", "stray"]),
)
PLAIN_FILES = st.builds(_file_bytes, st.sampled_from(["", "---\nagent: a\n---\n"]),
                        st.lists(PLAIN_FACT_LINE, max_size=30), st.sampled_from(["", "\n"]),
                        st.just("\n"), st.booleans())


@settings(max_examples=200, deadline=None)
@given(PLAIN_FILES)
def test_fact_problems_equal_parse_facts_on_plain_files(data):
    test_fact_problems_equal_parse_facts.hypothesis.inner_test(data)


WORDS = st.lists(st.sampled_from(["шлюз", "Шлюз", "готує", "резюме", "gateway", "Straße", "café",
                                  "digest", "[[link]]", "(4)", "v3.1", "-", "ЇЖАК", "ǅ"]),
                 min_size=1, max_size=4).map(" ".join)
# How a near-duplicate of an earlier text is written (None: no near-duplicate at all).
VARIANTS = st.sampled_from([None, None, None, str.upper, str.lower, lambda t: t + " ",
                            lambda t: t.replace(" ", "  ", 1), lambda t: t.replace(" ", "\t", 1),
                            lambda t: t.replace("é", "e\u0301"), lambda t: t.replace("ß", "ss"),
                            lambda t: t.replace(" ", "\u00a0", 1), lambda t: t])


@st.composite
def plain_fact_files(draw: st.DrawFn) -> bytes:
    """A plain facts file of distinct texts, at most one near-duplicate and one odd line."""
    texts = draw(st.lists(WORDS, unique_by=lambda t: t.casefold(), max_size=30))
    lines = ["# Facts", "", "## Домен"]
    for text in texts:
        date = draw(st.one_of(st.none(), GOOD_DATES))
        lines.append(f"- [{date}] {text}" if date else f"- {text}")
    variant = draw(VARIANTS)
    if variant is not None and texts:
        lines.append("- " + variant(draw(st.sampled_from(texts))))
    odd = draw(st.sampled_from([None, None, None, "- [2026-02-30] x", "stray", "- ", "  more",
                                "## Потім", "```", "- [2026-01-01]", "#tag"]))
    if odd is not None:
        lines.insert(draw(st.integers(3, len(lines))), odd)
    front = draw(st.sampled_from(["", "---\nagent: a\n---\n"]))
    return (front + "\n".join(lines) + "\n").encode()


@settings(max_examples=200, deadline=None)
@given(plain_fact_files())
def test_fact_problems_equal_parse_facts_near_duplicates(data):
    test_fact_problems_equal_parse_facts.hypothesis.inner_test(data)


def _iso_dates(years: range):
    for y in years:
        for m in range(0, 14):
            for d in range(0, 33):
                yield f"{y:04d}-{m:02d}-{d:02d}"


def test_sure_dates_are_valid_dates():
    sure = re.compile(entries._SURE_DATE)
    years = [*range(0, 12), *range(1896, 1905), *range(1996, 2033), *range(2096, 2105),
             *range(2396, 2405), *range(9990, 10000)]
    for year in years:
        for text in _iso_dates(range(year, year + 1)):
            valid = entries.valid_date(text)
            assert (sure.fullmatch(text) is not None) == valid, text  # sound and complete


@given(st.dates(_dt.date(1, 1, 1), _dt.date(9999, 12, 31)))
def test_every_real_date_is_sure(day):
    assert re.fullmatch(entries._SURE_DATE, day.isoformat())


# ---------------------------------------------------------------- loops

LOOP_TEXTS = st.sampled_from([
    "renew the certificate", "Renew The Certificate", "Шлюз готує резюме (крихкий, 4)",
    "a - b", "a — b", "a\u00a0— b", "x-y", "text (priority low)", "text (PRIORITY low)",
    "text (opened 2026-01-01)", "text (відкрита з 2026-01-01)", "(x)", "loop_z: inner", "x ",
    "loop_q", "ıstanbul (prİority high)", "[[link]] y", "a — closed 2026-01-01 | run_1",
])
LOOP_IDS = st.sampled_from(["", "loop_a1: ", "loop_a1: ", "loop_b.2: ", "loop_x:", "loop_: ",
                            "loop_" + "a" * 130 + ": "])
OPEN_SUFFIX = st.one_of(
    st.builds(lambda d, p: f" (opened {d}, priority {p})", DATES,
              st.sampled_from(["high", "normal", "low", "urgent", "High"])),
    st.builds(lambda d: f" — відкрита з {d}", DATES),
    st.sampled_from([" — открыта с 2026-01-02", " — opened 2026-01-02", "",
                     " (priority low)", " (opened 2026-01-01, priority high) "]),
)
CLOSED_SUFFIX = st.one_of(
    st.builds(lambda d, run, res: f" — closed {d} | {run}{res}", DATES,
              st.sampled_from(["run_abc123", "run_x", "run_a.b-c", "run"]),
              st.sampled_from(["", " — done", " — resolved — twice", " — ", " — x — closed "
                               "2026-01-01 | run_y"])),
    st.sampled_from([" — Closed 2026-02-01 | run_a", " - closed 2026-02-01", ""]),
)
LOOP_LINE = st.one_of(
    st.builds(lambda i, t, s: f"- [ ] {i}{t}{s}", LOOP_IDS, LOOP_TEXTS, OPEN_SUFFIX),
    st.builds(lambda m, i, t, s: f"- [{m}] {i}{t}{s}", st.sampled_from(["x", "X"]), LOOP_IDS,
              LOOP_TEXTS, CLOSED_SUFFIX),
    st.builds(lambda m, i, t, s: f"- [{m}] {i}{t}{s}", st.sampled_from([" ", "x", "?", ""]),
              LOOP_IDS, LOOP_TEXTS, st.one_of(OPEN_SUFFIX, CLOSED_SUFFIX)),
    st.sampled_from(["", "## Критичні", "## Очікування", "## Critical", "# Loops", "- no box",
                     "* [ ] star (opened 2026-02-01, priority low)", "  - [ ] indented",
                     "```", "<!-- x", "-->", "stray", "-[ ] tight", "- [ ]", "- [ ] "]),
)


TINY_LOOP = st.lists(st.sampled_from(["a", "A", "б", "Б", " ", "-", "—", "–", "(", ")", "x",
                                      "\t", "\u00a0", "ß", "ss"]), min_size=1,
                     max_size=5).map("".join)
PLAIN_LOOP_LINE = st.one_of(
    st.builds(lambda i, t, d, p: f"- [ ] {i}{t} (opened {d}, priority {p})",
              st.sampled_from(["", "loop_a: ", "loop_b: ", "loop_a1: "]), TINY_LOOP, GOOD_DATES,
              st.sampled_from(["high", "normal", "low"])),
    st.builds(lambda i, t, d: f"- [ ] {i}{t} — відкрита з {d}",
              st.sampled_from(["", "loop_c: "]), TINY_LOOP, GOOD_DATES),
    st.builds(lambda m, i, t, d, r: f"- [{m}] {i}{t} — closed {d} | run_1{r}",
              st.sampled_from(["x", "X"]), st.sampled_from(["", "loop_d: ", "loop_a: "]),
              TINY_LOOP, GOOD_DATES, st.sampled_from(["", " — ok", " — a — b"])),
    st.sampled_from(["## Критичні", "## Очікування", "", "text", "- [ ] x (priority low)"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PLAIN_LOOP_LINE, max_size=20), st.integers(0, 2))
def test_loop_problems_equal_parse_loops_on_plain_files(lines, start):
    assert loop_problems(lines, start) == parse_loops(lines, start)[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(LOOP_LINE, max_size=20), st.integers(0, 3))
def test_loop_problems_equal_parse_loops(lines, start):
    assert loop_problems(lines, start) == parse_loops(lines, start)[1]


@settings(max_examples=150, deadline=None)
@given(st.lists(LOOP_LINE, max_size=20))
def test_canonical_lines_parse_as_before(lines):
    """parse_loops' own fast lines against the general parser, line by line."""
    for i, raw in enumerate(lines):
        m = entries._CANON_LOOP.fullmatch(raw)
        if m is None:
            continue
        for section, high in (("", False), ("Критичні", True)):
            fast = entries._canonical_loop(m, section, high, i + 1, raw)
            if fast is not None:
                assert fast == entries._loop_line(raw, section, i + 1), raw


def test_canonical_loops_take_the_fast_path():
    lines = ["## Критичні", "- [ ] loop_a1: renew it (opened 2026-02-13, priority high)",
             "- [ ] Шлюз готує резюме (крихкий, 4) — відкрита з 2026-01-26",
             "- [x] loop_b2: done — closed 2026-02-16 | run_abc123 — went well"]
    for raw in lines[1:]:
        m = entries._CANON_LOOP.fullmatch(raw)
        assert m is not None and entries._canonical_loop(m, "Критичні", True, 2, raw), raw
    assert loop_problems(lines) == [] == parse_loops(lines)[1]


# ---------------------------------------------------------------- MW206 end to end

@settings(max_examples=200, deadline=None)
@given(FILES, st.lists(LOOP_LINE, max_size=12))
def test_check_entries_matches_the_full_parsers(facts_data, loop_lines):
    """The rule's findings are the full parsers' problems, for both kinds."""
    loops_data = ("---\nagent: a\n---\n" + "\n".join(loop_lines) + "\n").encode()
    for path, data, parse in (("memory/a/facts.md", facts_data, parse_facts),
                              ("memory/a/open_loops.md", loops_data, parse_loops)):
        mf = _memfile(path, data)
        found = [(f.line, f.col, f.message) for f in check_entries(mf, None)]
        fm = mf.frontmatter
        if fm is not None and fm.error is not None:
            assert found == []
            continue
        problems = sorted(parse(mf.lines, mf.body_start)[1],
                          key=lambda p: (p.line, p.col, p.message))
        expected = [(p.line, p.col, p.message) for p in problems]
        if len(expected) > structure.MAX_FINDINGS_PER_FILE:
            expected = expected[:structure.MAX_FINDINGS_PER_FILE]
            found = found[:structure.MAX_FINDINGS_PER_FILE]
        assert found == expected


# ---------------------------------------------------------------- compiled schemas

KINDS = ["snapshot", "facts", "open_loops", "decisions", "relationships", "changelog",
         "timeline", "run", "agent_contract", "meta", "registry", "agent_jsonl"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 30), st.floats(allow_nan=False),
    st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0, 20.0, 21.0]),
    st.sampled_from(["a", "archivist-violin", "2026-02-17", "2026-02-17T14:30:00Z", "1.0",
                     "1.2.0", "active", "draft", "run_42", "", " ", "X", "claude-sonnet",
                     "1.2.0\n", "create-proposal", "propose-x", "0 6 * * 1-5", "@daily",
                     "2026-02-30", "cl100k_base", "sha256:abcdef0", "main.drakon.json"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["name", "slug", "manual", "cron", "events", "folder", "max_sources", "notebook_id",
         "agents", "status", "version", "x"]), inner, max_size=3)),
    max_leaves=8)


def _schemas(schema: object) -> list[object]:
    """A schema and every schema inside it (properties, items, branches...)."""
    out = [schema]
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("properties", "patternProperties") and isinstance(value, dict):
                for sub in value.values():
                    out += _schemas(sub)
            elif key in ("items", "additionalProperties", "if", "then", "else"):
                out += _schemas(value)
            elif key == "allOf" and isinstance(value, list):
                for sub in value:
                    out += _schemas(sub)
    return out


SCHEMAS = [(kind, sub) for kind in KINDS for sub in _schemas(structure.load_schema(kind))]
SCHEMAS += [(f"{kind}:base", structure._fast_parts(kind)[0]) for kind in KINDS]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(range(len(SCHEMAS))), st.data())
def test_compiled_schema_answers_as_is_valid(index, data):
    _, schema = SCHEMAS[index]
    keys = sorted(schema.get("properties", {})) if isinstance(schema, dict) else []
    value = data.draw(st.one_of(VALUES, st.dictionaries(
        st.sampled_from([*keys, "unknown", "factsTokenCount"]), VALUES, max_size=6)))
    expected = is_valid(schema, value, structure._FAST_FORMATS) is True
    assert compile_valid(schema, structure._FAST_FORMATS)(value) == expected


def test_compiled_schema_edge_answers():
    formats = structure._FAST_FORMATS
    assert compile_valid(True, formats)(object()) is True
    assert compile_valid(False, formats)(1) is False
    assert compile_valid({"allOf": []}, formats)(1) is False  # beyond the fast path
    assert compile_valid({"enum": [1, "1"]}, formats)(True) is False
    assert compile_valid({"format": "unknown"}, formats)("x") is False
    assert compile_valid({"format": "unknown"}, formats)(3) is True
    assert compile_valid({"pattern": "^a$"}, formats)("a\n") is False
    assert compile_valid({"type": "integer"}, formats)(2.0) is True
    assert compile_valid({"additionalProperties": False, "patternProperties": {}},
                         formats)({}) is False
