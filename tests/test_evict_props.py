"""Properties of eviction's pure functions (apply/evict.py) on random facts.md and
open_loops.md texts: touched entries stay, the result fits when it can, the same inputs
give the same result, and every entry is either kept or listed as evicted (never both,
never neither)."""

from __future__ import annotations

import datetime as _dt
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.apply.evict import Evicted, evict_facts, evict_loops, remove_entries
from memwarden.model.entries import parse_facts, parse_loops
from memwarden.model.memfile import split_lines
from memwarden.tokens.counter import count_text

ENC = "cl100k_base"
NOW = _dt.datetime(2026, 3, 1, 12, 0, tzinfo=_dt.UTC)
WORDS = ["archive", "catalogue", "digest", "importer", "bucket", "MinIO", "weekly", "batch",
         "retention", "owner", "каталог", "архів", "дайджест", "42", "v2.1", "[[Entity]]"]
SECTIONS = ["Domain", "Ops", "Deprecated", "Застаріло", "Critical notes"]
PROPS = settings(max_examples=80, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
day = st.integers(min_value=0, max_value=60).map(
    lambda n: (NOW.date() - _dt.timedelta(days=n)).isoformat())


@st.composite
def facts_doc(draw: st.DrawFn) -> str:
    """A facts.md: sections of bullets (optional dates, continuations, duplicates), with
    blank lines, a code block or a comment now and then."""
    out = ["---", "agent: a", "---"] if draw(st.booleans()) else []
    out += ["# Facts: a", ""]
    seen: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        out.append(f"## {draw(st.sampled_from(SECTIONS))}")
        for _ in range(draw(st.integers(0, 10))):
            kind = draw(st.sampled_from(["fact"] * 6 + ["dup", "cont", "blank", "code",
                                                      "note"]))
            if kind == "dup" and seen:
                out.append(f"- {draw(st.sampled_from(seen))}")
            elif kind == "blank":
                out.append("")
            elif kind == "note":
                out.append(f"Note {len(out)}: {draw(words)}")
            elif kind == "code":
                out += ["```", f"- {draw(words)}", "```"]
            else:
                text = draw(words)
                seen.append(text)
                date = f"[{draw(day)}] " if draw(st.booleans()) else ""
                out.append(f"{draw(st.sampled_from('-*+'))} {date}{text}")
                if kind == "cont":
                    out.append(f"  {draw(words)}")
        out.append("")
    return ("\r\n" if draw(st.booleans()) else "\n").join(out) + "\n"


@st.composite
def loops_doc(draw: st.DrawFn) -> str:
    """An open_loops.md with open and closed loops of every priority and age."""
    out = ["# Open Loops: a", ""]
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        out.append(f"## {draw(st.sampled_from(['Open', 'Критичні', 'Очікування']))}")
        for _ in range(draw(st.integers(0, 10))):
            n += 1
            label = f"loop_{n}: " if draw(st.booleans()) else ""
            text = f"{draw(words)} {n}"
            if draw(st.booleans()):
                out.append(f"- [x] {label}{text} — closed {draw(day)} | run_{n}")
            else:
                prio = draw(st.sampled_from(["low", "low", "normal", "high"]))
                out.append(f"- [ ] {label}{text} (opened {draw(day)}, priority {prio})")
        out.append("")
    return "\n".join(out) + "\n"


@st.composite
def fact_case(draw: st.DrawFn) -> dict:
    text = draw(facts_doc())
    ids = sorted({f.id for f in parse_facts(split_lines(text))[0]})
    protected = set(draw(st.lists(st.sampled_from(ids), unique=True, max_size=3))) if ids \
        else set()
    used = {i: (NOW - _dt.timedelta(days=draw(st.integers(0, 90)))).timestamp()
            for i in ids if draw(st.booleans())}
    tokens = count_text(text, ENC)
    return {"text": text, "protected": protected, "last_used": used, "now": NOW,
            "limit": max(1, int(tokens * draw(st.floats(0.2, 1.2)))),
            "ratio": draw(st.sampled_from([0.5, 0.9, 1.0])),
            "stale_days": draw(st.integers(0, 60)), "encoding": ENC}


@st.composite
def loop_case(draw: st.DrawFn) -> dict:
    text = draw(loops_doc())
    ids = sorted({lp.id for lp in parse_loops(split_lines(text))[0]})
    protected = set(draw(st.lists(st.sampled_from(ids), unique=True, max_size=3))) if ids \
        else set()
    tokens = count_text(text, ENC)
    return {"text": text, "protected": protected, "now": NOW,
            "limit": max(1, int(tokens * draw(st.floats(0.2, 1.2)))),
            "ratio": draw(st.sampled_from([0.5, 0.9, 1.0])),
            "closed_days": draw(st.integers(0, 30)), "frozen_days": draw(st.integers(0, 30)),
            "encoding": ENC}


def _fact_ids(text: str) -> Counter[tuple[str, str]]:
    return Counter((f.id, f.text) for f in parse_facts(split_lines(text))[0])


def _loop_ids(text: str) -> Counter[tuple[str, str]]:
    return Counter((lp.id, lp.text) for lp in parse_loops(split_lines(text))[0])


def _without(text: str, kind: str, ids: set[str]) -> str:
    """The text with every entry whose id is in `ids` removed: the least eviction can
    leave."""
    return remove_entries(text, kind, [Evicted("", i, "", "", (0, 0)) for i in sorted(ids)])


def _eligible_loops(case: dict) -> set[str]:
    """Loops the spec lets eviction move: closed ones older than closed_days, low-priority
    open ones older than frozen_days, not touched by the proposal."""
    def age(d: str | None) -> int:
        try:
            return (NOW.date() - _dt.date.fromisoformat(d or "")).days
        except ValueError:
            return 0

    loops, _ = parse_loops(split_lines(case["text"]))
    return {lp.id for lp in loops if lp.id not in case["protected"] and (
        (lp.closed and age(lp.closed_on) > case["closed_days"]) or
        (not lp.closed and lp.priority == "low" and age(lp.opened) > case["frozen_days"]))}


def _check_common(case: dict, new: str, out: list[Evicted], kind: str, eligible: set[str]):
    counts = _fact_ids if kind == "facts" else _loop_ids
    target = int(case["limit"] * case["ratio"])
    # touched entries are never evicted
    assert not {e.id for e in out} & case["protected"]
    if count_text(case["text"], ENC) <= case["limit"]:
        assert (new, out) == (case["text"], [])
        return
    # a solution exists -> the result is within the low-water mark (so within HARD)
    floor = _without(case["text"], kind, eligible)
    if count_text(floor, ENC) <= target:
        assert count_text(new, ENC) <= target <= case["limit"]
    # nothing lost, nothing duplicated: kept + evicted == original
    assert counts(new) + Counter((e.id, e.entry) for e in out) == counts(case["text"])
    # the listed ids are exactly what left
    assert {e.id for e in out} <= eligible
    # lines that are no entry (notes, code, comments) stay
    keep = [ln for ln in split_lines(case["text"]) if ln.startswith(("Note ", "```"))]
    assert [ln for ln in split_lines(new) if ln.startswith(("Note ", "```"))] == keep
    # remove_entries (used on main's and the proposal's copies) removes the same entries
    # when ids are unique
    if out and len(counts(case["text"])) == sum(counts(case["text"]).values()):
        assert remove_entries(case["text"], kind, out) == new


@PROPS
@given(fact_case())
def test_evict_facts_properties(case):
    new, out = evict_facts(**case)
    facts, _ = parse_facts(split_lines(case["text"]))
    _check_common(case, new, out, "facts", {f.id for f in facts} - case["protected"])
    # determinism, also with equal but differently built protected set and usage map
    again = evict_facts(**{**case, "protected": set(sorted(case["protected"], reverse=True)),
                           "last_used": dict(reversed(list(case["last_used"].items())))})
    assert again == (new, out)
    # least recently used first: no kept unprotected fact ranks before an evicted one
    stale = (NOW - _dt.timedelta(days=case["stale_days"])).timestamp()

    def rank(f):
        used = case["last_used"].get(f.id, 0.0)
        return (0 if f.deprecated else 1 if used < stale else 2), used

    gone = {e.lines[0] for e in out}  # by position: duplicate facts share an id
    assert [(f.line, f.end_line) for f in facts if f.line in gone] == \
        sorted(e.lines for e in out)
    if gone:
        worst = max(rank(f) for f in facts if f.line in gone)
        assert all(rank(f) >= worst for f in facts
                   if f.line not in gone and f.id not in case["protected"])
    reasons = [e.reason for e in out]
    assert reasons == sorted(reasons, key=lambda r: r != "stale-fact")


@PROPS
@given(loop_case())
def test_evict_loops_properties(case):
    new, out = evict_loops(**case)
    _check_common(case, new, out, "loops", _eligible_loops(case))
    assert evict_loops(**{**case, "protected": set(sorted(case["protected"],
                                                          reverse=True))}) == (new, out)
    loops = {lp.id: lp for lp in parse_loops(split_lines(case["text"]))[0]}
    for e in out:
        assert e.reason == ("expired-loop" if loops[e.id].closed else "frozen-loop")
    reasons = [e.reason for e in out]
    assert reasons == sorted(reasons, key=lambda r: r != "expired-loop")


@PROPS
@given(facts_doc(), st.data())
def test_remove_entries_removes_exactly_the_listed_ids(text, data):
    facts, _ = parse_facts(split_lines(text))
    ids = sorted({f.id for f in facts})
    gone = set(data.draw(st.lists(st.sampled_from(ids), unique=True))) if ids else set()
    new = _without(text, "facts", gone)
    before = _fact_ids(text)
    assert _fact_ids(new) == Counter({k: v for k, v in before.items() if k[0] not in gone})
    assert _without(new, "facts", gone) == new  # idempotent


def test_evicting_a_fact_keeps_non_entry_lines():
    text = ("# Facts: a\n\n## Ops\n- keep this fact about the archive\n"
            "- old fact about the importer\nA stray note that is not a fact\n"
            "  continued detail of the old fact\n")
    limit = count_text(text, ENC) - 1
    new, out = evict_facts(text, {f.id for f in parse_facts(split_lines(text))[0][:1]}, {},
                           NOW, limit, 0.9, 30, ENC)
    # the stray line ends the fact: neither it nor the indented line after it is removed
    assert [e.entry for e in out] == ["old fact about the importer"]
    assert "A stray note that is not a fact" in new and "continued detail" in new
