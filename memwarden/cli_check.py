"""Front-end glue for `memwarden check`: pick the source and config, run, render."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from memwarden.config import load_config, load_config_at
from memwarden.errors import MemwardenError
from memwarden.findings import summarize
from memwarden.policies.engine import check, normalise_path
from memwarden.policies.registry import all_rules
from memwarden.repo import open_repo
from memwarden.report import render
from memwarden.source import TreeSource, WorktreeSource


def run_check(files: list[str], rev: str | None, config_path: str | None,
              select: list[str] | None, ignore: list[str] | None, fmt: str,
              today: _dt.date, use_cache: bool = True, cwd: Path | None = None) -> tuple[int, str]:
    """Run a check as the CLI would; returns (exit code, rendered report)."""
    cwd = cwd or Path.cwd()
    repo = open_repo(cwd)
    if rev is not None:
        if repo is None:
            raise MemwardenError(f"--rev {rev}: {cwd} is not inside a git repository")
        source = TreeSource(repo, rev)
        config = load_config_at(repo, source.rev, config_path)
        paths = None
        outside: list[str] = []
    else:
        root = repo.root if repo is not None and repo.root is not None else cwd
        source = WorktreeSource(root, repo, repo.cache_dir if (repo and use_cache) else None)
        config = load_config(config_path, root)
        paths, outside = None, []
        if files:
            paths = []
            for raw in files:
                rel = normalise_path(raw, root)
                if rel is None:
                    outside.append(raw)
                    continue
                full = root / rel
                if not full.exists() and not full.is_symlink():
                    raise MemwardenError(f"{raw}: no such file")
                if full.is_dir() and not (full / ".git").exists():
                    raise MemwardenError(f"{raw}: is a directory; pass files, or use --all")
                paths.append(rel)
    config = config.with_selection(select, ignore)
    cache_dir = repo.cache_dir if (repo is not None and use_cache) else None
    result = check(source, config, paths, cache_dir=cache_dir, today=today, raw_outside=outside)
    summary = summarize(result.findings, result.files)
    rules = [r.to_doc() for r in all_rules()]
    text = render(fmt, result.findings, summary, rules)
    return (1 if result.failed else 0), text
