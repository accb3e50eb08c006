"""The schema yes-path (structure.certainly_valid) never calls an invalid document valid.

It extends fastschema to the agent contract's allOf if/then and meta.json's
patternProperties; jsonschema stays the judge: whenever the fast path says "valid",
jsonschema must find no error, on generated documents close to the real ones.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.policies.rules.structure import certainly_valid, schema_issues, validator

TEXT = st.one_of(st.text(max_size=8), st.sampled_from(["a", "x y", " ", "1.2.0", "01.2.0"]))
ANY = st.one_of(TEXT, st.integers(-3, 30), st.floats(-1, 2, allow_nan=False), st.booleans(),
                st.none(), st.lists(TEXT, max_size=2))
TOOLS = st.lists(st.sampled_from(["read-memory", "create-proposal", "propose-tag", "bad tool",
                                  "x"]), max_size=3)
CONTRACT_OPTIONS: dict[str, st.SearchStrategy[object]] = (
    {
        "name": st.one_of(TEXT, ANY),
        "slug": st.sampled_from(["agent-a", "Agent", "a", ""]),
        "version": st.sampled_from(["1.2.0", "1.0", "2.0.0-rc.1", "v1"]),
        "description": st.one_of(TEXT, ANY),
        "model": st.sampled_from(["claude-sonnet-4-5", "gpt 4", "m"]),
        "temperature": st.one_of(st.floats(-0.5, 1.5, allow_nan=False), ANY),
        "max_steps": st.one_of(st.integers(-1, 25), ANY),
        "tools": st.one_of(TOOLS, ANY),
        "safe_outputs": st.one_of(TOOLS, ANY),
        "status": st.sampled_from(["draft", "active", "paused", "archived", "bogus", 1]),
        "created_at": st.sampled_from(["2026-01-15T10:00:00Z", "2026-02-30", "today"]),
        "updated_at": st.sampled_from(["2026-01-15T10:00:00Z", "2026-13-01", 5]),
        "created_by": st.one_of(TEXT, ANY),
        "triggers": st.one_of(st.fixed_dictionaries({}, optional={"manual": st.booleans(),
                                                                  "cron": TEXT}), ANY),
        "unknown_key": ANY,
    }
)
META_OPTIONS: dict[str, st.SearchStrategy[object]] = (
    {
        "agentId": st.sampled_from(["agent-a", "A", 3]),
        "version": st.one_of(st.integers(-1, 50), ANY),
        "schemaVersion": st.sampled_from(["1.0", "2", 1]),
        "lastUpdate": st.sampled_from(["2026-01-15T10:00:00Z", "nope"]),
        "factsTokenCount": st.one_of(st.integers(-1, 9000), ANY),
        "openLoopsCount": st.one_of(st.integers(-1, 9), ANY),
        "xCount": ANY,
        "Count": ANY,
        "weird": ANY,
    }
)


def _changes(options: dict[str, st.SearchStrategy[object]]) -> st.SearchStrategy[dict]:
    """A few keys set to values drawn for them (so most documents stay almost valid)."""
    pair = st.one_of([st.tuples(st.just(k), v) for k, v in sorted(options.items())])
    return st.lists(pair, max_size=2).map(dict)


CONTRACT_CHANGES = _changes(CONTRACT_OPTIONS)
META_CHANGES = _changes(META_OPTIONS)


def _changed(base: dict[str, object], changes: dict[str, object],
             dropped: list[str]) -> dict[str, object]:
    doc = {**base, **changes}
    for key in dropped:
        doc.pop(key, None)
    return doc


BASE_CONTRACT: dict[str, object] = {
    "name": "Agent A", "slug": "agent-a", "version": "1.2.0", "description": "Does a.",
    "model": "claude-sonnet-4-5", "tools": ["read-memory", "create-proposal"],
    "safe_outputs": ["propose-tag"], "status": "active", "created_at": "2026-01-15",
    "updated_at": "2026-01-15T10:00:00Z", "created_by": "owner"}
BASE_META: dict[str, object] = {"agentId": "agent-a", "version": 3, "schemaVersion": "1.0"}
CONTRACT = st.builds(_changed, st.just(BASE_CONTRACT), CONTRACT_CHANGES,
                     st.lists(st.sampled_from(sorted(BASE_CONTRACT)), max_size=2))
META = st.builds(_changed, st.just(BASE_META), META_CHANGES,
                 st.lists(st.sampled_from(sorted(BASE_META)), max_size=1))


def _jsonschema_errors(kind: str, doc: object) -> list[object]:
    return list(validator(kind).iter_errors(doc))


@settings(max_examples=600, deadline=None)
@given(CONTRACT)
def test_contract_fast_yes_is_right(doc):
    if certainly_valid("agent_contract", doc):
        assert _jsonschema_errors("agent_contract", doc) == []


@settings(max_examples=600, deadline=None)
@given(META)
def test_meta_fast_yes_is_right(doc):
    if certainly_valid("meta", doc):
        assert _jsonschema_errors("meta", doc) == []


def _active_contract(**changes: object) -> dict[str, object]:
    return {**BASE_CONTRACT, **changes}


def test_fast_path_takes_valid_contracts_and_metas():
    assert certainly_valid("agent_contract", _active_contract())
    assert certainly_valid("agent_contract", _active_contract(status="draft", tools=[]))
    assert certainly_valid("meta", {"agentId": "a", "version": 3, "schemaVersion": "1.0",
                                    "factsTokenCount": 10})


def test_fast_path_leaves_errors_to_jsonschema():
    broken = _active_contract(tools=[])  # an active agent needs a tool (the allOf's then)
    assert not certainly_valid("agent_contract", broken)
    assert schema_issues(broken, "agent_contract", "frontmatter")
    meta = {"agentId": "a", "version": 3, "schemaVersion": "1.0", "factsTokenCount": -1}
    assert not certainly_valid("meta", meta)
    assert schema_issues(meta, "meta", "meta.json")
    extra = {"agentId": "a", "version": 3, "schemaVersion": "1.0", "bogus": 1}
    assert not certainly_valid("meta", extra)
    assert schema_issues(extra, "meta", "meta.json")


# ---- remembered per-value answers for plain object schemas (memory frontmatter)

from memwarden.policies.fastschema import is_valid  # noqa: E402
from memwarden.policies.rules.structure import (  # noqa: E402
    _FAST_FORMATS,
    _base_valid,
    _fast_parts,
    _plain_object_schema,
)

MEMORY_KINDS = ["snapshot", "facts", "open_loops", "decisions", "relationships", "changelog",
                "timeline", "run", "meta", "agent_contract", "registry", "agent_jsonl"]
FM_VALUES = st.one_of(
    st.sampled_from(["agent-a", "Agent A", "2026-02-17", "2026-02-17T10:30:00Z", "2026-02-30",
                     "run_2026-02-17_143000_abc", "", " ", "x y", "1.0"]),
    st.integers(-2, 5), st.floats(-1, 2, allow_nan=False), st.booleans(), st.none(),
    st.lists(st.sampled_from(["a", "b", ""]), max_size=2),
)
FM_KEYS = st.sampled_from(["agent", "updated_at", "version", "run_id", "proposal_id", "title",
                           "tags", "date", "bogus", "agentId", "schemaVersion"])


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(MEMORY_KINDS), st.dictionaries(FM_KEYS, FM_VALUES, max_size=4))
def test_remembered_answers_equal_fastschema(kind, doc):
    base = _fast_parts(kind)[0]
    expected = is_valid(base, doc, _FAST_FORMATS) is True
    assert _base_valid(kind, base, doc) == expected
    assert _base_valid(kind, base, doc) == expected  # and again, from the memo


def test_memory_frontmatter_schemas_take_the_memo():
    assert _plain_object_schema("facts") and _plain_object_schema("snapshot")
    # meta.json's patternProperties are split off by _fast_parts and checked apart
    assert _plain_object_schema("meta") and "patternProperties" not in _fast_parts("meta")[0]
