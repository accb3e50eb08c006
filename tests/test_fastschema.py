"""The fast schema yes-path never calls valid what jsonschema rejects (all pack schemas)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.policies.fastschema import is_valid
from memwarden.policies.rules import structure

KINDS = ["snapshot", "facts", "open_loops", "decisions", "relationships", "changelog",
         "timeline", "run", "agent_contract", "meta", "registry", "agent_jsonl"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False),
    st.sampled_from(["a", "archivist-violin", "2026-02-17", "2026-02-17T14:30:00Z", "1.0",
                     "1.2.0", "active", "draft", "run_42", "", " ", "X", "claude-sonnet",
                     "1.2.0\n", "create-proposal", "propose-x", "0 6 * * 1-5", "@daily"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["name", "slug", "manual", "cron", "folder", "max_sources", "x"]), inner, max_size=3)),
    max_leaves=6)


def keys_of(kind: str) -> list[str]:
    return sorted(structure.load_schema(kind).get("properties", {})) + ["unknown_key"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(KINDS), st.data())
def test_fast_valid_implies_jsonschema_valid(kind, data):
    keys = keys_of(kind)
    doc = data.draw(st.dictionaries(st.sampled_from(keys), VALUES, max_size=len(keys)))
    if is_valid(structure.load_schema(kind), doc, structure._FAST_FORMATS) is True:
        assert list(structure.validator(kind).iter_errors(doc)) == [], (kind, doc)


def test_fast_path_accepts_a_typical_document():
    doc = {"agent": "archivist-violin", "updated_at": "2026-02-17T14:30:00Z"}
    assert is_valid(structure.load_schema("facts"), doc, structure._FAST_FORMATS) is True
