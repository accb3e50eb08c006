"""Front end for `memwarden maintain`: parse options, run apply/maintain.py, print, exit."""

from __future__ import annotations

import json
from typing import Any

import click

from memwarden.cli.options import (
    config_option,
    format_option,
    open_repo_here,
    parse_now,
    push_option,
)


@click.command("maintain")
@click.option("--now", metavar="ISO", help="Clock for ages and commit times (default: now, "
              "UTC).")
@push_option("Push main (and the archive branch) to REMOTE with a lease; when main moved "
             "there, refetch and redo everything (bounded).")
@click.option("--dry-run", is_flag=True, help="List what would be committed; move no ref.")
@click.option("--archive-branch", metavar="NAME", default=None,
              help="First commit files that retention removes onto branch NAME (created "
                   "if missing, its own history, never merged into main).")
@click.option("--agent", "agents", metavar="A", multiple=True,
              help="Only these agents' memory (repeatable); registry.json is then left alone.")
@config_option("memwarden.toml to use instead of the one committed on main.")
@format_option(["text", "json"], "json")
def maintain_cmd(now: str | None, push: str | None, dry_run: bool,
                 archive_branch: str | None, agents: tuple[str, ...], config_path: str | None,
                 fmt: str) -> None:
    """Retention (old runs, timeline days, closed loops), changelog rotation, Layer 1
    overflow evictions and the registry.json rebuild, as `memory-maintain:` commits on
    main. Exit 0 done or nothing to do, 1 something could not be done, 2 usage/config."""
    from memwarden.apply.maintain import maintain

    repo = open_repo_here("maintain")
    result = maintain(repo, parse_now(now), config_path, dry_run, push, archive_branch,
                      list(agents) or None)
    doc = result.to_json()
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2) if fmt == "json"
               else render_text(doc), nl=fmt == "json")
    raise SystemExit(result.exit_code)


def render_text(doc: dict[str, Any]) -> str:
    """The same facts as the JSON, one line each."""
    lines = []
    prefix = "would commit" if doc["dryRun"] else "committed"
    for step in doc["steps"]:
        lines.append(f"{prefix} {step['commit'][:12]} {step['subject']} "
                     f"({len(step['paths'])} file(s))")
        lines += [f"  {p}" for p in step["paths"]]
    for entry in doc["overflow"]:
        if entry["remaining"]:
            lines.append(f"overflow: {entry['agent']}: still over: {entry['remaining']}")
    if doc["archive"] and doc["archive"].get("files"):
        lines.append(f"archive: {len(doc['archive']['files'])} file(s) on "
                     f"{doc['archive']['branch']} ({(doc['archive']['commit'] or '')[:12]})")
    lines += [f"problem: {p}" for p in doc["problems"]]
    lines += [f"warning: {w}" for w in doc["warnings"]]
    if "message" in doc:
        lines.append(doc["message"])
    return "\n".join(lines) + "\n"
