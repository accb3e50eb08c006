"""The fast path for flat `key: value` frontmatter gives exactly what the YAML path gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.model.memfile import load_yaml_doc, parse_frontmatter, simple_mapping

KEYS = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,12}", fullmatch=True),
                 st.sampled_from(["on", "No", "y", "agent", "version", "updated_at", "TRUE"]))
VALUES = st.one_of(
    st.text(max_size=20).map(lambda t: '"' + t + '"'),
    st.text(max_size=20).map(lambda t: "'" + t + "'"),
    st.integers(-10**20, 10**20).map(str),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/ :#-]{0,15}", fullmatch=True),
    st.sampled_from(["yes", "No", "ON", "null", "~", "true", "0x1F", "012", "1e3", ".inf",
                     "2026-02-17", "2026-02-17T10:00:00Z", "run_42", "claude-sonnet-4-5",
                     '"2026-02-17"', "[a, b]", "{a: 1}", "", "-0", "+1", "1_000"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=6))
def test_fast_path_agrees_with_yaml(pairs):
    lines = [f"{k}: {v}" for k, v in pairs]
    fast = simple_mapping(lines)
    if fast is None:
        return  # the YAML path handles it
    doc = load_yaml_doc("\n".join(lines), line_offset=1)
    assert fast[0] == (doc.value or {})
    assert all(type(fast[0][k]) is type((doc.value or {})[k]) for k in fast[0])
    assert fast[1] == doc.key_lines


def test_parse_frontmatter_uses_fast_path_with_positions():
    fm = parse_frontmatter(["---", 'agent: "a"', "version: 3", "---", "# body"])
    assert fm is not None and fm.error is None
    assert fm.data == {"agent": "a", "version": 3}
    assert fm.key_lines == {"agent": 2, "version": 3}


def test_fast_path_declines_doubtful_values():
    for line in ["on: x", "k: yes", "k: 012", "k: 2026-02-17", "k: a # c", 'k: "a\\"b"', "k:"]:
        assert simple_mapping([line]) is None, line


# ---- nested blocks (agent contracts): `key:` + indented `- item` or `sub: value` lines

from memwarden.model.memfile import YamlProblem, simple_block  # noqa: E402

SCALARS = st.one_of(
    VALUES,
    st.text(max_size=20).map(lambda t: '"' + t.replace('"', "") + '"'),
    st.text(max_size=20).map(lambda t: "'" + t.replace("'", "") + "'"),
    st.from_regex(r"-?[0-9]{1,3}\.[0-9]{0,3}", fullmatch=True),
    st.sampled_from(["true", "false", "True", "0.2", "1.0", "-0.5", "00.5", "1.", ".5",
                     "\"it's\"", "'say \"hi\"'", "'it''s'", '"a\\"b"', "read-memory"]),
)
BLOCKS = st.one_of(
    st.tuples(KEYS, SCALARS).map(lambda kv: [f"{kv[0]}: {kv[1]}"]),
    st.tuples(KEYS, st.lists(SCALARS, max_size=4), st.sampled_from(["  - ", "- ", "    - ",
                                                                    "  -  "]))
    .map(lambda t: [f"{t[0]}:"] + [f"{t[2]}{v}" for v in t[1]]),
    st.tuples(KEYS, st.lists(st.tuples(KEYS, SCALARS), max_size=4),
              st.sampled_from(["  ", " ", "   "]))
    .map(lambda t: [f"{t[0]}:"] + [f"{t[2]}{k}: {v}" for k, v in t[1]]),
)


def _yaml_view(lines: list[str]):
    try:
        doc = load_yaml_doc("\n".join(lines), line_offset=1)
    except YamlProblem:
        return None
    return doc


@settings(max_examples=150, deadline=None)
@given(st.lists(BLOCKS, max_size=6))
def test_nested_fast_path_agrees_with_yaml(blocks):
    lines = [line for block in blocks for line in block]
    fast = simple_block(lines)
    if fast is None:
        return  # the YAML path handles it
    doc = _yaml_view(lines)
    assert doc is not None, lines
    assert not doc.odd_keys
    assert fast[0] == (doc.value or {}), lines
    assert repr(fast[0]) == repr(doc.value or {}), lines  # same types, same order
    assert fast[1] == doc.key_lines
    assert fast[2] == doc.positions


def test_nested_fast_path_takes_a_contract():
    lines = ['name: "Архіваріус 1"', 'description: "Агент пов\'язує записи."', "temperature: 0.2",
             "max_steps: 8", "tools:", "  - read-memory", "  - create-proposal", "triggers:",
             "  manual: true", '  cron: "0 6 * * 1-5"', 'status: "active"']
    fast = simple_block(lines)
    assert fast is not None
    doc = load_yaml_doc("\n".join(lines), line_offset=1)
    assert repr(fast[0]) == repr(doc.value)
    assert fast[2] == doc.positions
    assert fast[2][("tools", 1)] == (8, 5) and fast[2][("triggers", "cron")] == (11, 3)


def test_nested_fast_path_declines_doubtful_blocks():
    for lines in (["tools:"], ["tools:", "  - a", "   - b"], ["t:", "  a: 1", "  a: 2"],
                  ["t:", "  on: 1"], ["t:", "  - a: b"], ["t: [a, b]"], ["t:", "  - yes"],
                  ["t:", "  - a", "  b: 1"], ["t:", "# c", "  - a"], ["t: 1.5e3"]):
        assert simple_block(lines) is None, lines


PLAIN_KEYS = st.from_regex(r"[a-z_][a-z0-9_-]{0,8}", fullmatch=True)
PLAIN_SCALARS = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=12).map(lambda t: '"' + t + '"'),
    st.text(st.characters(codec="utf-8"), max_size=12).map(lambda t: "'" + t + "'"),
    st.from_regex(r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9._/-]{0,10}", fullmatch=True),
    st.sampled_from(["true", "false", "yes", "null"]),
)
PLAIN_BLOCKS = st.one_of(
    st.tuples(PLAIN_KEYS, PLAIN_SCALARS).map(lambda kv: [f"{kv[0]}: {kv[1]}"]),
    st.tuples(PLAIN_KEYS, st.lists(PLAIN_SCALARS, min_size=1, max_size=4))
    .map(lambda t: [f"{t[0]}:"] + [f"  - {v}" for v in t[1]]),
    st.tuples(PLAIN_KEYS, st.lists(st.tuples(PLAIN_KEYS, PLAIN_SCALARS), min_size=1,
                                   max_size=4))
    .map(lambda t: [f"{t[0]}:"] + [f"  {k}: {v}" for k, v in t[1]]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(PLAIN_BLOCKS, max_size=6))
def test_nested_fast_path_agrees_with_yaml_on_plain_blocks(blocks):
    test_nested_fast_path_agrees_with_yaml.hypothesis.inner_test(blocks)


@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCKS, max_size=6), st.lists(BLOCKS, max_size=6))
def test_remembered_lines_give_what_fresh_ones_give(first, blocks):
    """Top-level and nested lines are remembered across files: a block parsed after others
    (warm) equals the same block parsed with nothing remembered (cold)."""
    from memwarden.model import memfile
    lines = [line for block in blocks for line in block]
    simple_block([line for block in first for line in block])  # warm the caches
    simple_block(lines)
    warm = simple_block(lines)
    for cache in (memfile._TOP_LINES, memfile._ITEM_LINES, memfile._PAIR_LINES):
        cache.clear()
    cold = simple_block(lines)
    assert repr(warm) == repr(cold), lines
