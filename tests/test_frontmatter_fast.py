"""The fast path for flat `key: value` frontmatter gives exactly what the YAML path gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.memfile import load_yaml_doc, parse_frontmatter, simple_mapping

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


@settings(max_examples=500, deadline=None)
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
