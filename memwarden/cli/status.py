"""`memwarden status` and `memwarden reject`: a proposal's lifecycle, from git."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memwarden.model.errors import MemwardenError


def _open() -> tuple[object, object]:
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config, load_config_at

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("not inside a git repository")
    main = load_config(None, None).data["main_branch"]
    return repo, load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))


@click.command("status")
@click.argument("proposal_id", required=False)
@click.option("--fetch", "remote", metavar="REMOTE", help="Fetch REMOTE's lifecycle notes "
              "(refs/notes/memwarden) first.")
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="json",
              show_default=True)
def status_cmd(proposal_id: str | None, remote: str | None, fmt: str) -> None:
    """Show a proposal's lifecycle (pending -> approved -> applying -> applied | failed, or
    rejected) with links run -> proposal -> commit -> changelog -> timeline. Without an id,
    list every proposal branch with its state."""
    from memwarden.apply import lifecycle, status

    repo, config = _open()
    if remote:
        from memwarden.apply.apply import apply_identity

        lifecycle.fetch_notes(repo, remote, apply_identity(config))
    if proposal_id is None:
        rows = status.overview(repo, config)
        if fmt == "json":
            click.echo(json.dumps({"proposals": rows}, indent=2, ensure_ascii=False))
        for row in rows if fmt == "text" else ():
            click.echo(f"{row['state']:<19} {row['branch']}")
        raise SystemExit(0)
    doc = status.status(repo, config, proposal_id)
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo(f"{doc['proposalId']}: {doc['state']} (agent {doc['agentId']}, "
                   f"run {doc['runId']})")
        for e in doc["history"]:
            extra = " ".join(f"{k}={e[k]}" for k in ("by", "reason", "commit") if k in e)
            click.echo(f"  {e['at']}  {e['state']:<19} {extra}".rstrip())
        for name, link in doc["links"].items():
            click.echo(f"  {name}: {json.dumps(link, ensure_ascii=False)}")
    raise SystemExit(0)


@click.command("reject")
@click.argument("proposal_id")
@click.option("--reason", required=True, help="Why (recorded in the lifecycle history).")
@click.option("--by", "by", metavar="WHO", help="Who rejects (default: git user.name).")
@click.option("--push", "remote", metavar="REMOTE", help="Push the lifecycle notes to REMOTE.")
@click.option("--now", metavar="ISO", help="Clock for the event (default: now, UTC).")
def reject_cmd(proposal_id: str, reason: str, by: str | None, remote: str | None,
               now: str | None) -> None:
    """Reject a proposal as its owner (rejected_by_owner): apply will never land it.
    Rejecting an applied proposal is an illegal transition (use `git revert`)."""
    from memwarden.apply import status
    from memwarden.cli.propose import _now

    repo, config = _open()
    who = by or _git_user(repo) or "owner"
    doc = status.reject(repo, config, proposal_id, reason, who, _now(now), remote)
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    raise SystemExit(0)


def _git_user(repo: object) -> str | None:
    from memwarden.git.repo import git_cli

    try:
        return git_cli(["config", "user.name"], Path.cwd()).strip() or None
    except MemwardenError:
        return None
