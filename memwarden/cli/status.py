"""`memwarden status` and `memwarden reject`: a proposal's lifecycle, from git."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import (
    TEXT,
    AliasOption,
    format_option,
    open_repo_here,
    parse_now,
    push_option,
)
from memwarden.model.errors import MemwardenError


def _open(command: str) -> tuple[Any, Any]:
    from memwarden.model.config import load_config, load_config_at

    repo = open_repo_here(command)
    main = load_config(None, None).data["main_branch"]
    return repo, load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))


@click.command("status")
@click.argument("proposal_id", required=False)
@click.option("--fetch", "remote", cls=AliasOption, aliases=("--push",), metavar="REMOTE",
              help="Fetch REMOTE's proposal branches and lifecycle notes "
                   "(refs/notes/memwarden) first (status reads; it never pushes).")
@format_option(["text", "json"], "text")
def status_cmd(proposal_id: str | None, remote: str | None, fmt: str) -> None:
    """Show a proposal's lifecycle (pending -> approved -> applying -> applied | failed, or
    rejected) with links run -> proposal -> commit -> changelog -> timeline. Without an id,
    list every proposal branch with its state."""
    from memwarden.apply import lifecycle, status
    from memwarden.apply.apply import apply_identity, fetch_proposals, looked_in

    repo, config = _open("status")
    if remote:
        fetch_proposals(repo, config, remote)
        lifecycle.fetch_notes(repo, remote, apply_identity(config))
    if proposal_id is None:
        rows = status.overview(repo, config)
        if fmt == "json":
            click.echo(json.dumps({"proposals": rows}, indent=2, ensure_ascii=False))
        else:
            for row in rows:
                click.echo(f"{row['state']:<19} {row['branch']}")
            if not rows:
                click.echo(f"no proposal branches (looked in {looked_in(repo, config, remote)})")
        raise SystemExit(0)
    doc = status.status(repo, config, proposal_id)
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False) if fmt == "json"
               else status_text(doc), nl=fmt == "json")
    raise SystemExit(0)


def status_text(doc: dict[str, Any]) -> str:
    """The status document as lines a person reads."""
    lines = [f"{doc['proposalId']}: {doc['state']} (agent {doc['agentId']}, "
             f"run {doc['runId']})"]
    for e in doc["history"]:
        extra = " ".join(f"{k}={e[k]}" for k in ("by", "reason", "commit") if k in e)
        lines.append(f"  {e['at']}  {e['state']:<19} {extra}".rstrip())
    for name, link in doc["links"].items():
        lines.append(f"  {name}: {_link_text(link)}")
    for key in ("note", "warning"):
        if doc.get(key):
            lines.append(f"  {key}: {doc[key]}")
    return "\n".join(lines) + "\n"


def _link_text(link: Any) -> str:
    if link is None:
        return "-"
    if isinstance(link, str):
        return link
    if "branch" in link:
        return f"branch {link['branch'] or '(deleted)'}, head {link.get('head') or '?'}"
    if "id" in link:
        return f"{link['id']}" + (f" ({link['path']})" if link.get("path") else "")
    return f"{link['path']}:{link['line']}" if link.get("line") else str(link.get("path"))


@click.command("reject")
@click.argument("proposal_id")
@click.option("--reason", required=True, type=TEXT,
              help="Why (recorded in the lifecycle history).")
@click.option("--by", "by", metavar="WHO", type=TEXT,
              help="Who rejects (default: git user.name).")
@push_option("Fetch REMOTE's lifecycle notes first, then push them with the rejection.")
@click.option("--now", metavar="ISO", help="Clock for the event (default: now, UTC).")
@format_option(["text", "json"], "text")
def reject_cmd(proposal_id: str, reason: str, by: str | None, push: str | None,
               now: str | None, fmt: str) -> None:
    """Reject a proposal as its owner (rejected_by_owner): apply will never land it.
    Rejecting an applied proposal is an illegal transition (use `git revert`)."""
    from memwarden.apply import status

    repo, config = _open("reject")
    who = by or _git_user() or "owner"
    doc = status.reject(repo, config, proposal_id, reason, who, parse_now(now), push)
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False) if fmt == "json"
               else status_text(doc), nl=fmt == "json")
    raise SystemExit(0)


def _git_user() -> str | None:
    from memwarden.git.repo import git_cli

    try:
        return git_cli(["config", "user.name"], Path.cwd()).strip() or None
    except MemwardenError:
        return None
