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
        "README rule table is stale: regenerate it with `memwarden rule --format md`"
    )


def test_quick_start_commands_present():
    text = README.read_text("utf-8")
    assert "pip install -e '.[test]' && memwarden demo" in text
    assert "python -m pytest" in text


def test_precommit_snippet_is_what_init_writes():
    """The README's pre-commit config is init's (tests/test_init.py runs that one through
    the real pre-commit), and it names no tag that may not exist."""
    import yaml

    from memwarden.cli.init import init_files

    text = README.read_text("utf-8")
    block = text.split("<!-- precommit:begin -->\n", 1)[1].split("<!-- precommit:end -->")[0]
    snippet = block.strip().removeprefix("```yaml").removesuffix("```")
    assert yaml.safe_load(snippet) == yaml.safe_load(init_files()[".pre-commit-config.yaml"])
    assert "rev: v0.1.0" not in text
