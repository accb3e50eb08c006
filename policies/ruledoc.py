"""Rule documentation rendered from the registry (CLI `rule`, README table)."""

from __future__ import annotations

from collections.abc import Sequence

from memwarden.policies.registry import Rule


def rule_text(r: Rule, markdown: bool = False) -> str:
    """What the rule catches, why, a bad and a good example, and the fix."""
    if markdown:
        parts = [f"### {r.id} {r.name} ({r.severity})", "", r.summary, "", f"**Why:** {r.why}",
                 "", "Bad:", "```", r.bad, "```", "", "Good:", "```", r.good, "```"]
        if r.fix:
            parts += ["", f"**Fix:** {r.fix}"]
        return "\n".join(parts)
    indent = "    "
    parts = [f"{r.id} {r.name} ({r.severity})", "", r.summary, "", "Why: " + r.why, "", "Bad:"]
    parts += [indent + line for line in r.bad.splitlines()]
    parts += ["", "Good:"] + [indent + line for line in r.good.splitlines()]
    if r.fix:
        parts += ["", "Fix: " + r.fix]
    return "\n".join(parts)


def rule_table(rules: Sequence[Rule]) -> str:
    rows = ["| id | name | severity | what it catches |", "| --- | --- | --- | --- |"]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        rows.append(f"| {r.id} | {r.name} | {r.severity} | {summary} |")
    return "\n".join(rows)
