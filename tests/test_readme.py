"""README stays true: its rule table is the registry's, its commands exist."""

from __future__ import annotations

from pathlib import Path

from memwarden.policies.registry import all_rules
from memwarden.policies.ruledoc import rule_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_table_matches_registry():
    text = README.read_text("utf-8")
    begin, end = "<!-- rules:begin -->\n", "<!-- rules:end -->"
    table = text.split(begin, 1)[1].split(end, 1)[0].strip()
    assert table == rule_table(all_rules()), (
        "README rule table is stale: regenerate it with `memwarden rule --format markdown`"
    )


def test_quick_start_commands_present():
    text = README.read_text("utf-8")
    assert "pip install -e '.[test]' && memwarden demo" in text
    assert "python -m pytest" in text
