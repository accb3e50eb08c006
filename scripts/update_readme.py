"""Regenerate the README rule table from the rule registry (tests fail when it is stale)."""

from __future__ import annotations

from pathlib import Path

from memwarden.policies.registry import all_rules
from memwarden.policies.ruledoc import rule_table

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN, END = "<!-- rules:begin -->\n", "<!-- rules:end -->"

text = README.read_text("utf-8")
head, rest = text.split(BEGIN, 1)
tail = rest.split(END, 1)[1]
README.write_text(head + BEGIN + rule_table(all_rules()) + "\n" + END + tail, "utf-8")
print("README rule table updated")
