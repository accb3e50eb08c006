"""Front-end glue for `memwarden check`: pick the source and config, run, render.

Also the lean entry the pre-commit hook runs: `lean_main` parses the common `check`
invocations itself, without importing click (~20-50 ms of a ~0.2 s hook), and hands
anything unusual (help, a usage error, --output) back to the click CLI, which then gives
exactly the output it always gave. Heavy modules are imported inside functions.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from memwarden.model.errors import MemwardenError

FORMATS = ("text", "json", "sarif", "github")
_VALUE_OPTS = {"--rev": "rev", "--format": "fmt", "--config": "config_path", "--now": "now"}
_MULTI_OPTS = {"--select": "select", "--ignore": "ignore"}
_FLAGS = {"--all": "all_files", "--no-cache": "no_cache"}


def split_ids(values: Sequence[str]) -> list[str] | None:
    """--select/--ignore values: comma-separated, repeatable, upper-cased; None when absent."""
    if not values:
        return None
    return [v.strip().upper() for item in values for v in item.split(",") if v.strip()]


def parse_today(now: str | None) -> _dt.date | None:
    """--now (an ISO date or date-time) as a date; None (today, as the checks work it out
    when they need it) when absent: a hook run does not import datetime (~2 ms)."""
    if not now:
        return None
    import datetime as _dt

    try:
        return _dt.datetime.fromisoformat(now.replace("Z", "+00:00")).date()
    except ValueError:
        raise MemwardenError(f"--now {now}: expected an ISO date or date-time") from None


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
            raise MemwardenError(f"--rev {rev}: {cwd} is not inside a git repository")
        source = TreeSource(repo, rev)
        config = load_config_at(repo, source.rev, config_path)
        paths = None
        outside: list[str] = []
        cache_dir = repo.cache_dir if use_cache else None
    else:
        if files:  # a hook's few files: where the repository is, as strings (no pathlib)
            found = locate(cwd)
            repo = None
            git_dir = os.path.realpath(found[0]) if found is not None else None
            root = os.path.realpath(found[1]) if found is not None and found[1] else cwd
            cache_dir = os.path.join(git_dir, "memwarden") if git_dir and use_cache else None
        else:
            from memwarden.git.repo import open_repo

            repo = open_repo(cwd)
            root = repo.root if repo is not None and repo.root is not None else cwd
            cache_dir = repo.cache_dir if (repo is not None and use_cache) else None
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
    # Only SARIF and GitHub output name rules (importing every rule family costs a hook).
    rules = [r.to_doc() for r in all_rules()] if fmt in ("sarif", "github") else []
    text = render(fmt, result.findings, summary, rules)
    return (1 if result.failed else 0), text


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """click.echo's output without importing click when that output is plain: ASCII with no
    escape sequences to strip. Anything else (or a loaded click) goes through click.echo, so
    the bytes written are always the ones click writes."""
    stream = sys.stderr if err else sys.stdout
    if "click" in sys.modules or stream is None or not text.isascii() or "\x1b" in text:
        import click

        click.echo(text, err=err, nl=nl)
        return
    stream.write(text + "\n" if nl else text)
    stream.flush()


def quick_exit(code: int) -> None:
    """End the program now, skipping interpreter teardown (freeing every module's objects
    one by one: ~5 ms of a one-file check, ~30 ms after a tokenizer was built). Only for
    commands that leave no threads, temp files or exit handlers behind."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass
    os._exit(code)


def report_failure(exc: BaseException) -> int:
    """The message and exit code for an exception out of a command (never a traceback for
    user mistakes; a bug says so and keeps its trace for the report). Re-raises the rest."""
    if isinstance(exc, MemwardenError):
        echo(f"memwarden: error: {exc}", err=True)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError):
        return 0
    if isinstance(exc, Exception):
        import traceback

        echo("memwarden: internal error (please report this with the trace below)", err=True)
        traceback.print_exception(exc)
        return 2
    raise exc


def parse_check_args(args: Sequence[str]) -> dict[str, object] | None:
    """`check` arguments as click would parse them, or None for anything this small parser
    does not mirror exactly (help, unknown or repeated options, odd values, --output)."""
    opts: dict[str, object] = {"files": [], "all_files": False, "no_cache": False,
                               "rev": None, "fmt": None, "config_path": None, "now": None,
                               "select": [], "ignore": []}
    seen: set[str] = set()
    i, only_files = 0, False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_files or not arg.startswith("-"):
            opts["files"].append(arg)  # type: ignore[attr-defined]
            continue
        if arg == "--":
            only_files = True
            continue
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq and name not in seen:
            opts[_FLAGS[name]] = True
        elif name in _VALUE_OPTS or name in _MULTI_OPTS:
            if not eq:
                if i >= len(args):
                    return None
                value = args[i]
                i += 1
            if value.startswith("-") or (name in _VALUE_OPTS and name in seen):
                return None
            if name in _MULTI_OPTS:
                opts[_MULTI_OPTS[name]].append(value)  # type: ignore[attr-defined]
            else:
                opts[_VALUE_OPTS[name]] = value
        else:
            return None  # --help, --output/-o, unknown options, --all=x: click decides
        seen.add(name)
    if opts["fmt"] is not None and opts["fmt"] not in FORMATS:
        return None
    if opts["rev"] and (opts["files"] or opts["all_files"]):
        return None  # click's usage error
    for path in [*opts["files"], opts["config_path"]]:  # type: ignore[misc]
        if path is not None and not _readable_or_absent(str(path)):
            return None  # click.Path reports it
    return opts


def _readable_or_absent(path: str) -> bool:
    try:
        os.stat(path)
    except (OSError, ValueError):
        return True
    return os.access(path, os.R_OK)


def lean_main(args: Sequence[str], program: bool = False) -> int | None:
    """Run `memwarden check ARGS` without click; None when click must handle them."""
    opts = parse_check_args(args)
    if opts is None:
        return None
    try:
        code, text = run_check(
            files=list(opts["files"]),  # type: ignore[call-overload]
            rev=opts["rev"],  # type: ignore[arg-type]
            config_path=opts["config_path"],  # type: ignore[arg-type]
            select=split_ids(opts["select"]),  # type: ignore[arg-type]
            ignore=split_ids(opts["ignore"]),  # type: ignore[arg-type]
            fmt=opts["fmt"] or "text",  # type: ignore[arg-type]
            today=parse_today(opts["now"]),  # type: ignore[arg-type]
            use_cache=not opts["no_cache"],
        )
        echo(text, nl=False)
    except BaseException as exc:  # noqa: BLE001 - mapped exactly as the click CLI maps it
        return report_failure(exc)
    return code
