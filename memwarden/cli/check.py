"""`memwarden check`: the policies on files of the working tree or on a committed tree.

What pre-commit runs (`memwarden check FILES`). Heavy modules load inside the command.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import click

from memwarden.cli.options import (
    at_option,
    config_option,
    emit,
    format_option,
    infer_format,
    now_option,
    output_option,
    parse_today,
    split_ids,
)
from memwarden.model.errors import MemwardenError

SELECTION_HELP = "Comma-separated rule ids or prefixes (e.g. MW3,MW502); replaces the " \
                 "config's list."


@click.command("check")
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--all", "all_files", is_flag=True, help="Check every governed file of the "
              "working tree (the default when no FILES are given).")
@at_option("Check the tree of this commit (no working tree needed; works in bare "
           "repositories).")
@format_option(["text", "json", "sarif", "github"], None,
               "Output format (default text, or the one --output's extension names).")
@output_option("Write the report to FILE (.json, .sarif, .txt) instead of standard output.")
@click.option("--select", multiple=True, help=SELECTION_HELP)
@click.option("--ignore", multiple=True, help=SELECTION_HELP)
@config_option("memwarden.toml to use (default: $MEMWARDEN_CONFIG, then <repo "
               "root>/memwarden.toml).")
@now_option()
@click.option("--no-cache", is_flag=True, help="Do not read or write .git/memwarden caches.")
def check_cmd(files: tuple[str, ...], all_files: bool, at: str | None, fmt: str | None,
              output: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
              config_path: str | None, now: str | None, no_cache: bool) -> None:
    """Check memory files against the policies.

    FILES are what pre-commit passes; files memwarden does not govern are skipped.
    Exit 0 when clean (warnings allowed), 1 on findings, 2 on usage or config
    errors.
    """
    if at and (files or all_files):
        raise click.UsageError("--at checks a committed tree; do not combine it with FILES "
                               "or --all")
    fmt = infer_format(fmt, output)
    code, text = run_check(
        files=list(files), rev=at, config_path=config_path, select=split_ids(select),
        ignore=split_ids(ignore), fmt=fmt, today=parse_today(now), use_cache=not no_cache,
    )
    emit(text, output)
    raise SystemExit(code)


def run_check(files: list[str], rev: str | None, config_path: str | None,
              select: list[str] | None, ignore: list[str] | None, fmt: str,
              today: _dt.date | None, use_cache: bool = True,
              cwd: Path | None = None) -> tuple[int, str]:
    """Run a check as the CLI would; returns (exit code, rendered report)."""
    from memwarden.git.files import locate
    from memwarden.git.source import TreeSource, WorktreeSource
    from memwarden.model.config import load_config, load_config_at
    from memwarden.model.findings import summarize
    from memwarden.policies.engine import check, normalise_path
    from memwarden.policies.registry import all_rules
    from memwarden.report.findings import render

    cwd = os.fspath(cwd) if cwd is not None else os.getcwd()
    if rev is not None:
        from memwarden.git.repo import open_repo

        repo = open_repo(cwd)
        if repo is None:
            raise MemwardenError(f"--at {rev}: {cwd} is not inside a git repository")
        source = TreeSource(repo, rev)
        config = load_config_at(repo, source.rev, config_path)
        paths = None
        outside: list[str] = []
        cache_dir = repo.cache_dir if use_cache else None
    else:
        if files:  # a hook's few files: where the repository is, as strings (no pathlib)
            found = locate(cwd)
            repo = None
            in_git = found is not None
            git_dir = os.path.realpath(found[0]) if found is not None else None
            root = os.path.realpath(found[1]) if found is not None and found[1] else cwd
            cache_dir = os.path.join(git_dir, "memwarden") if git_dir and use_cache else None
        else:
            from memwarden.git.repo import open_repo

            repo = open_repo(cwd)
            in_git = repo is not None
            root = repo.root if repo is not None and repo.root is not None else cwd
            cache_dir = repo.cache_dir if (repo is not None and use_cache) else None
        if (not files or not in_git) and not _looks_like_memory(root):
            # A CI step run in the wrong folder would otherwise check nothing and pass.
            where = "" if in_git else "not inside a git repository and "
            raise MemwardenError(f"{root}: {where}not a memory repository (no memwarden.toml, "
                                 "registry.json, memory/ or agents/ here); run memwarden at "
                                 "the memory repository's root")
        source = WorktreeSource(root, repo, cache_dir)
        config = load_config(config_path, root)
        paths, outside = None, []
        if files:
            paths = []
            for raw in files:
                rel = normalise_path(raw, root)
                if rel is None:
                    outside.append(raw)
                    continue
                full = os.path.join(root, rel)
                if not os.path.lexists(full):
                    raise MemwardenError(f"{raw}: no such file")
                if os.path.isdir(full) and not os.path.exists(os.path.join(full, ".git")):
                    raise MemwardenError(f"{raw}: is a directory; pass files, or use --all")
                paths.append(rel)
    config = config.with_selection(select, ignore)
    result = check(source, config, paths, cache_dir=cache_dir, today=today, raw_outside=outside)
    summary = summarize(result.findings, result.files)
    # Only SARIF and GitHub output name rules.
    rules = [r.to_doc() for r in all_rules()] if fmt in ("sarif", "github") else []
    text = render(fmt, result.findings, summary, rules)
    return (1 if result.failed else 0), text


def _looks_like_memory(root: str) -> bool:
    """Whether `root` holds anything memwarden governs at a repository's top."""
    return any(os.path.lexists(os.path.join(root, name))
               for name in ("memwarden.toml", "registry.json", "memory", "agents"))
