"""Front-end glue for `memwarden apply`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memwarden.apply.apply import apply_all, proposal_refs
from memwarden.cli_propose import _now
from memwarden.config import load_config, load_config_at
from memwarden.errors import MemwardenError
from memwarden.repo import open_repo


def run_apply(refs: list[str], all_refs: bool, approved_by: str | None, dry_run: bool,
              force: bool, now: str | None, remote: str | None = None,
              delete_branches: bool = False) -> tuple[int, dict[str, Any]]:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("apply: not inside a git repository")
    main = load_config(None, None).data["main_branch"]
    config = load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))
    if all_refs:
        refs = refs + [r for r in proposal_refs(repo, config) if r not in refs]
    if not refs:
        raise MemwardenError("apply: name proposal refs or use --all")
    results = apply_all(repo, refs, config, approved_by, _now(now), dry_run, force, remote,
                        delete_branches=delete_branches)
    ok = all(r.status in ("applied", "already_applied") for r in results)
    return (0 if ok else 1), {"results": [r.to_json() for r in results]}
