"""`memwarden rule [ID]`: what a rule catches, why, bad and good examples; or all rules."""

from __future__ import annotations

import json

import click

from memwarden.cli.options import format_option
from memwarden.model.errors import MemwardenError


@click.command("rule")
@click.argument("rule_id", required=False)
@format_option(["text", "json", "md"], "text")
def rule_cmd(rule_id: str | None, fmt: str) -> None:
    """Explain a rule (what, why, bad and good examples), or list all rules."""
    from memwarden.policies.registry import all_rules, get_rule
    from memwarden.policies.ruledoc import rule_table, rule_text

    if rule_id is None:
        rules = all_rules()
        if fmt == "json":
            click.echo(json.dumps([r.to_doc() for r in rules], ensure_ascii=False, indent=2))
        elif fmt == "md":
            click.echo(rule_table(rules))
        else:
            for r in rules:
                click.echo(f"{r.id}  {r.severity:<7}  {r.name:<28} {r.summary}")
        return
    r = get_rule(rule_id)
    if r is None:
        raise MemwardenError(f"unknown rule {rule_id!r}; `memwarden rule` lists them all")
    if fmt == "json":
        click.echo(json.dumps(r.to_doc(), ensure_ascii=False, indent=2))
    else:
        click.echo(rule_text(r, markdown=fmt == "md"))
