"""`memwarden propose`: a propose-memory-update request becomes a proposal branch."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import config_option, open_repo_here, parse_now
from memwarden.model.errors import MemwardenError

# Bare `--push` (the earlier flag spelling) pushes to `--remote`, default origin.
BARE_PUSH = ""


def push_remote_option(what: str) -> Any:
    """`--push REMOTE`; the earlier `--push` flag plus `--remote NAME` still work."""

    def deco(fn: Any) -> Any:
        fn = click.option("--remote", "remote", hidden=True, default=None)(fn)
        return click.option("--push", "push", metavar="REMOTE", is_flag=False,
                            flag_value=BARE_PUSH, default=None, help=what)(fn)

    return deco


def push_target(push: str | None, remote: str | None) -> str | None:
    """The remote to push to, or None."""
    if push is None:
        return None
    return push or remote or "origin"


@click.command("propose")
@click.argument("request", required=False, default="-")
@click.option("--base", metavar="REV", help="Branch the proposal starts from (default: "
              "main_branch from the config; with --push, the remote's current main).")
@push_remote_option("Fetch REMOTE's main first and build on it, then push the new branch "
                    "to REMOTE.")
@config_option()
@click.option("--now", metavar="ISO", help="Timestamp for the commit and entry dates.")
def propose_cmd(request: str, base: str | None, push: str | None, remote: str | None,
                config_path: str | None, now: str | None) -> None:
    """Turn a propose-memory-update request (JSON file or - for stdin) into a proposal
    branch proposals/<agentId>/<proposalId> with one commit; prints the result as JSON.
    Exit 0 created, 2 a bad request (nothing is created)."""
    doc = run_propose(request, base, push_target(push, remote), config_path, now)
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2))


def read_request(source: str, config: Any = None) -> Any:
    from memwarden.apply.propose import load_request

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8-sig")
    except OSError as exc:
        raise MemwardenError(f"{source}: cannot read the request ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MemwardenError(f"{source}: the request is not UTF-8") from None
    return load_request(text, source, config)  # caps, depth and JSON errors: exit 2


def remote_main(repo: Any, remote: str, main: str) -> str | None:
    """REMOTE's main as it is now (fetched), or None when it has none (or cannot be
    reached: the push that follows then says why)."""
    return repo.fetch_ref(remote, f"refs/heads/{main}")


def run_propose(request: str, base: str | None, remote: str | None,
                config_path: str | None, now: str | None) -> dict[str, Any]:
    from memwarden.apply.propose import propose
    from memwarden.git.repo import git_cli
    from memwarden.model.config import load_config, load_config_at

    repo = open_repo_here("propose")
    main = load_config(None, None).data["main_branch"]
    rev = base or main
    if remote is not None and rev == main:
        # A proposal built on a stale local main is rejected version_conflict by apply.
        rev = remote_main(repo, remote, main) or rev
    # Policy comes from the base branch (a proposal cannot loosen its own rules).
    config = load_config_at(repo, repo.resolve_commit(rev), config_path)
    doc = read_request(request, config)
    result = propose(repo, config, doc, rev, parse_now(now))
    if remote is not None:
        git_cli(["push", "--quiet", remote, f"refs/heads/{result.branch}"],
                repo.root or repo.git_dir)
    return result.to_json()
