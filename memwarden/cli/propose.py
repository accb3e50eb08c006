"""Front-end glue for `memwarden propose`: read the request, pick the config, push."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path
from typing import Any

from memwarden.apply.propose import load_request, propose
from memwarden.git.repo import git_cli, open_repo
from memwarden.model.config import Config, load_config, load_config_at
from memwarden.model.errors import MemwardenError


def read_request(source: str, config: Config | None = None) -> Any:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8-sig")
    except OSError as exc:
        raise MemwardenError(f"{source}: cannot read the request ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MemwardenError(f"{source}: the request is not UTF-8") from None
    return load_request(text, source, config)  # caps, depth and JSON errors: exit 2


def _now(value: str | None) -> _dt.datetime:
    if not value:
        return _dt.datetime.now(_dt.UTC)
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MemwardenError(f"--now {value}: expected an ISO date-time") from None
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


def run_propose(request: str, base: str | None, push: bool, remote: str,
                config_path: str | None, now: str | None) -> dict[str, Any]:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("propose: not inside a git repository")
    # Policy comes from the base branch (a proposal cannot loosen its own rules).
    rev = base or load_config(None, None).data["main_branch"]
    config = load_config_at(repo, repo.resolve_commit(rev), config_path)
    doc = read_request(request, config)
    result = propose(repo, config, doc, base, _now(now))
    if push:
        git_cli(["push", "--quiet", remote, f"refs/heads/{result.branch}"],
                repo.root or repo.git_dir)
    return result.to_json()
