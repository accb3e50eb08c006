"""`memwarden evicted` and `memwarden restore-fact`: what eviction moved out of Layer 1, and
a way back for a fact (as a normal proposal, so it goes through gate and apply)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memwarden.cli.options import Refused, config_option, format_option, parse_now
from memwarden.cli.propose import push_remote_option, push_target
from memwarden.model.errors import MemwardenError

if TYPE_CHECKING:
    from memwarden.git.repo import Repo
    from memwarden.model.config import Config


def _open(config_path: str | None) -> tuple[Repo, Config, str]:
    """The repository, the policy on main, and main's commit."""
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config, load_config_at

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("not inside a git repository")
    name = load_config(config_path, None).data["main_branch"]
    main = repo.ref_target(f"refs/heads/{name}")
    if main is None:
        raise MemwardenError(f"refs/heads/{name} does not exist")
    return repo, load_config_at(repo, main, config_path), main


def _check_agent(repo: Repo, main: str, agent: str) -> None:
    from memwarden.apply.evicted import agent_known

    if not agent_known(repo, main, agent):
        raise MemwardenError(f"unknown agent {agent!r}: main has no memory/{agent}/ memory "
                             "files")


def _since(value: str | None) -> _dt.datetime | None:
    if not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MemwardenError(f"--since {value}: expected an ISO date or date-time") from None
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


def _text(agent: str, entries: list[dict[str, Any]]) -> str:
    if not entries:
        return f"no entries have left memory/{agent}/ Layer 1 in eviction or maintenance " \
               "commits\n"
    lines = []
    for e in entries:
        state = "restorable" if e["restorable"] else "present on main"
        lines.append(f"{e['date']} {e['commit'][:12]} {e['file']} {e['id']} ({e['reason']}, "
                     f"{state}): {e['entry']}")
    return "\n".join(lines) + "\n"


@click.command("evicted")
@click.argument("agent")
@click.option("--since", metavar="DATE", help="Only commits made at or after this ISO date "
              "or date-time (UTC unless it says otherwise).")
@format_option(["text", "json"], "text")
@config_option()
def evicted_cmd(agent: str, since: str | None, fmt: str, config_path: str | None) -> None:
    """List every fact and open loop that left AGENT's Layer 1 in an eviction or
    maintenance commit on main, newest first, with its full text (from the commit before)
    and whether it could be restored (it is not in the file on main now).

    Works in bare repositories. Exit 0, or 2 for an unknown agent."""
    from memwarden.apply.evicted import evicted_entries

    repo, _, main = _open(config_path)
    _check_agent(repo, main, agent)
    entries = [r.to_json() for r in evicted_entries(repo, main, agent, _since(since))]
    if fmt == "json":
        click.echo(json.dumps({"agentId": agent, "main": main, "evicted": entries},
                              ensure_ascii=False, indent=2))
    else:
        click.echo(_text(agent, entries), nl=False)
    raise SystemExit(0)


@click.command("restore-fact")
@click.argument("agent")
@click.argument("fact_id")
@push_remote_option("Push the new proposal branch to REMOTE.")
@config_option()
@click.option("--now", metavar="ISO", help="Timestamp for the proposal commit.")
def restore_fact_cmd(agent: str, fact_id: str, push: str | None, remote: str | None,
                     config_path: str | None, now: str | None) -> None:
    """Propose putting an evicted fact back into AGENT's facts.md, in its original ##
    section (a normal proposal branch: gate and apply decide). FACT_ID may be a unique
    prefix. Facts only: frozen open loops already live in decisions.md.

    Prints the propose result as JSON. Exit 1 when the fact is on main already; 2 for an
    unknown agent or a fact id that is unknown or ambiguous."""
    from memwarden.apply.evicted import evicted_entries, find_fact, restore_request
    from memwarden.apply.propose import propose
    from memwarden.git.repo import git_cli

    repo, config, main = _open(config_path)
    _check_agent(repo, main, agent)
    if not fact_id.strip():
        raise MemwardenError("restore-fact: FACT_ID is empty")
    fact = find_fact(evicted_entries(repo, main, agent), fact_id.strip())
    if not fact.restorable:
        raise Refused(f"fact {fact.id} is already in memory/{agent}/facts.md on main; "
                      "nothing to restore")
    result = propose(repo, config, restore_request(agent, fact), main, parse_now(now))
    target = push_target(push, remote)
    if target is not None:
        git_cli(["push", "--quiet", target, f"refs/heads/{result.branch}"],
                repo.root or repo.git_dir)
    click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    raise SystemExit(0)
