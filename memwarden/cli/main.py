"""The `memwarden` command line: a thin front end over policies, apply and the read side.

Every command parses its arguments, calls pure functions and maps the outcome to an exit
code: 0 clean, 1 findings or rejections, 2 usage or configuration errors.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from memwarden.cli.check import lean_main, quick_exit, report_failure
from memwarden.cli.check import parse_today as _today
from memwarden.cli.check import split_ids as _split
from memwarden.model.errors import MemwardenError
from memwarden.version import __version__

_SEL_HELP = "Comma-separated rule ids or prefixes (e.g. MW3,MW502); replaces the config's list."


# Commands that live in their own modules, imported only when run (hooks stay fast).
_LAZY = {
    "read": "memwarden.cli.read:read_cmd",
    "diff": "memwarden.cli.read:diff_cmd",
    "search": "memwarden.cli.search:search_cmd",
    "context": "memwarden.cli.search:context_cmd",
    "snapshot": "memwarden.cli.snapshot:snapshot_cmd",
    "restore": "memwarden.cli.snapshot:restore_cmd",
    "entities": "memwarden.cli.snapshot:entities_cmd",
    "maintain": "memwarden.cli.maintain:maintain_cmd",
    "evicted": "memwarden.cli.evicted:evicted_cmd",
    "restore-fact": "memwarden.cli.evicted:restore_fact_cmd",
    "status": "memwarden.cli.status:status_cmd",
    "reject": "memwarden.cli.status:reject_cmd",
    "serve": "memwarden.cli.serve:serve_cmd",
    "mcp": "memwarden.cli.serve:mcp_cmd",
    "token": "memwarden.cli.serve:token_group",
}


class _LazyGroup(click.Group):
    """A group whose heavier commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *(n for n in _LAZY if self._load(n))})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, name) or self._load(name)

    def _load(self, name: str) -> click.Command | None:
        import importlib

        target = _LAZY.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:  # only a missing module hides its command
            if exc.name != module:
                raise
            return None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="memwarden")
def cli() -> None:
    """Govern a git repository that holds LLM agents' long-term memory."""


@cli.command("check")
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--all", "all_files", is_flag=True, help="Check every governed file of the "
              "working tree (the default when no FILES are given).")
@click.option("--rev", metavar="REV", help="Check a committed tree (no working tree needed; "
              "works in bare repositories).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]),
              help="Output format (default text, or inferred from --output's extension).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to a "
              "file (.json, .sarif, .txt) instead of standard output.")
@click.option("--select", multiple=True, help=_SEL_HELP)
@click.option("--ignore", multiple=True, help=_SEL_HELP)
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use "
              "(default: $MEMWARDEN_CONFIG, then <repo root>/memwarden.toml).")
@click.option("--now", metavar="ISO", help="Today's date for waiver expiry (default: today).")
@click.option("--no-cache", is_flag=True, help="Do not read or write .git/memwarden caches.")
def check_cmd(files: tuple[str, ...], all_files: bool, rev: str | None, fmt: str | None,
              output: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
              config_path: str | None, now: str | None, no_cache: bool) -> None:
    """Check memory files against the policies.

    FILES are what pre-commit passes; files memwarden does not govern are skipped.
    Exit 0 when clean (warnings allowed), 1 on findings, 2 on usage or config errors.
    """
    from memwarden.cli.check import run_check

    if rev and (files or all_files):
        raise click.UsageError("--rev checks a committed tree; do not combine it with FILES "
                               "or --all")
    if fmt is None:
        fmt = "text"
        if output:
            from memwarden.report.findings import EXTENSIONS

            fmt = EXTENSIONS.get(Path(output).suffix.lower(), "text")
    code, text = run_check(
        files=list(files), rev=rev, config_path=config_path, select=_split(select),
        ignore=_split(ignore), fmt=fmt, today=_today(now), use_cache=not no_cache,
    )
    _emit(text, output)
    raise SystemExit(code)


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, "utf-8")
        except OSError as exc:
            raise MemwardenError(f"--output {output}: cannot write ({exc.strerror})") from None
    else:
        click.echo(text, nl=False)


@cli.group("hook")
def hook_group() -> None:
    """Git hook entry points (pre-commit runs these; see README)."""


@hook_group.command("commit-msg", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_commit_msg(args: tuple[str, ...]) -> None:
    """Check the commit message file (MW401–MW404) against what is staged."""
    from memwarden.hooks.commit_msg import main as hook_main

    raise SystemExit(hook_main(list(args)))


@hook_group.command("prepare-commit-msg", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_prepare(args: tuple[str, ...]) -> None:
    """Add 'Human-Edit: true' when staged changes touch memory (never twice)."""
    from memwarden.hooks.prepare_commit_msg import main as hook_main

    raise SystemExit(hook_main(list(args)))


@hook_group.command("pre-receive")
def hook_pre_receive() -> None:
    """Server side: read '<old> <new> <ref>' lines on stdin and accept or reject the push."""
    from memwarden.hooks.pre_receive import main as hook_main

    raise SystemExit(hook_main([]))


@cli.command("install-server-hooks")
@click.argument("bare_repo", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Replace a pre-receive hook that is not "
              "memwarden's (kept as pre-receive.bak).")
def install_server_hooks(bare_repo: str, force: bool) -> None:
    """Install the memwarden pre-receive hook into a bare repository."""
    from memwarden.hooks.pre_receive import install

    hook = install(Path(bare_repo), force)
    click.echo(f"installed {hook}")


@cli.command("check-commits")
@click.argument("revision_range")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]),
              default=None, help="Output format (default text, or from --output's extension).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use.")
@click.option("--now", metavar="ISO", help="Today's date for waiver expiry (default: today).")
def check_commits_cmd(revision_range: str, fmt: str | None, output: str | None,
                      config_path: str | None, now: str | None) -> None:
    """Check every commit in A..B: its trailers and its own tree's policies (for CI)."""
    from memwarden.cli.commits import run_check_commits

    if fmt is None:
        from memwarden.report.findings import EXTENSIONS

        fmt = EXTENSIONS.get(Path(output).suffix.lower(), "text") if output else "text"
    code, text = run_check_commits(revision_range, config_path, fmt, _today(now))
    _emit(text, output)
    raise SystemExit(code)


@cli.command("propose")
@click.argument("request", required=False, default="-")
@click.option("--base", metavar="REV", help="Branch the proposal starts from (default: "
              "main_branch from the config).")
@click.option("--push", is_flag=True, help="Push the new branch to --remote.")
@click.option("--remote", default="origin", show_default=True)
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use.")
@click.option("--now", metavar="ISO", help="Timestamp for the commit and entry dates.")
def propose_cmd(request: str, base: str | None, push: bool, remote: str,
                config_path: str | None, now: str | None) -> None:
    """Turn a propose-memory-update request (JSON file or - for stdin) into a proposal
    branch proposals/<agentId>/<proposalId> with one commit; prints the result as JSON."""
    from memwarden.cli.propose import run_propose

    click.echo(json.dumps(run_propose(request, base, push, remote, config_path, now),
                          ensure_ascii=False, indent=2))


@cli.command("gate")
@click.argument("ref")
@click.option("--base", metavar="REV", help="The branch it would land on (default: "
              "main_branch); its memwarden.toml is the policy.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]),
              default=None, help="Output format (default text, or from --output's extension).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--sarif-file", type=click.Path(dir_okay=False),
              help="With --format github: also write SARIF here (for code scanning).")
@click.option("--config", "config_path", type=click.Path(),
              help="Override the policy (default: memwarden.toml on the base branch).")
@click.option("--now", metavar="ISO", help="Today's date for waiver expiry.")
def gate_cmd(ref: str, base: str | None, fmt: str | None, output: str | None,
             sarif_file: str | None, config_path: str | None, now: str | None) -> None:
    """Gate a proposal branch: every rule on its tree and commits, path isolation, the
    auto-approve decision, an eviction preview and the Layer 1 token table.
    Exit 0 pass, 1 fail, 2 usage/config error."""
    from memwarden.cli.gate import run_gate

    if fmt is None:
        from memwarden.report.findings import EXTENSIONS

        fmt = EXTENSIONS.get(Path(output).suffix.lower(), "text") if output else "text"
    code, text = run_gate(ref, base, config_path, fmt, _today(now), sarif_file)
    _emit(text, output)
    raise SystemExit(code)


@cli.command("apply")
@click.argument("refs", nargs=-1)
@click.option("--all", "all_refs", is_flag=True, help="Every proposal branch, oldest first.")
@click.option("--approved-by", metavar="WHO", help="Apply proposals that need human review "
              "too, recording who approved them (Approved-By trailer).")
@click.option("--dry-run", is_flag=True, help="Build the commits but do not move main.")
@click.option("--force", is_flag=True, help="Owner override: skip the stale check (never "
              "a policy).")
@click.option("--now", metavar="ISO", help="Clock for bookkeeping (default: now, UTC).")
@click.option("--push", "push_remote", metavar="REMOTE", default=None,
              help="Push each landed proposal (branch, then main, both with a lease) to "
                   "REMOTE; a push rejected because main moved refetches and retries.")
@click.option("--delete-branches", is_flag=True, help="Delete each applied proposal branch "
              "(locally and on the --push remote) unless it moved on.")
@click.option("--format", "fmt", type=click.Choice(["json", "github"]), default="json",
              show_default=True, help="github: annotations, step outputs and a job summary "
              "(in GitHub Actions) besides the JSON.")
def apply_cmd(refs: tuple[str, ...], all_refs: bool, approved_by: str | None, dry_run: bool,
              force: bool, now: str | None, push_remote: str | None,
              delete_branches: bool, fmt: str) -> None:
    """Land approved proposals on main by fast-forward, one commit each with bookkeeping.
    Prints {"results": [...]}; exit 0 when every proposal ended applied/already_applied."""
    from memwarden.cli.apply import run_apply

    code, doc = run_apply(list(refs), all_refs, approved_by, dry_run, force, now, push_remote,
                          delete_branches)
    if fmt == "github":
        from memwarden.cli.apply import github_report

        click.echo(github_report(code, doc))
    else:
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
    raise SystemExit(code)


@cli.command("verify-history")
@click.argument("revision_range", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]),
              default="text")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use.")
def verify_history_cmd(revision_range: str | None, fmt: str, config_path: str | None) -> None:
    """Check main's history (default: all of main): linear, every commit passes every
    policy, every entry evicted from Layer 1 is listed by its eviction commit."""
    from memwarden.apply.verify import verify_history
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config
    from memwarden.model.findings import summarize
    from memwarden.policies.registry import all_rules
    from memwarden.report.findings import render

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("verify-history: not inside a git repository")
    rng = revision_range or load_config(None, None).data["main_branch"]
    findings, n, files = verify_history(repo, rng, config_path, _dt.date.today())
    summary = summarize(findings, files)
    summary["commits"] = n
    click.echo(render(fmt, findings, summary, [r.to_doc() for r in all_rules()]), nl=False)
    raise SystemExit(1 if any(f.severity == "error" and not f.waived for f in findings)
                     else 0)


@cli.command("rule")
@click.argument("rule_id", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
def rule_cmd(rule_id: str | None, fmt: str) -> None:
    """Explain a rule (what, why, bad and good examples), or list all rules."""
    from memwarden.policies.registry import all_rules, get_rule
    from memwarden.policies.ruledoc import rule_table, rule_text

    if rule_id is None:
        rules = all_rules()
        if fmt == "json":
            click.echo(json.dumps([r.to_doc() for r in rules], ensure_ascii=False, indent=2))
        elif fmt == "markdown":
            click.echo(rule_table(rules))
        else:
            for r in rules:
                click.echo(f"{r.id}  {r.severity:<7}  {r.name:<28} {r.summary}")
        return
    r = get_rule(rule_id)
    if r is None:
        raise MemwardenError(f"unknown rule {rule_id!r}; `memwarden rule` lists them all")
    if fmt == "json":
        click.echo(json.dumps(r.to_doc(), ensure_ascii=False, indent=2))
    else:
        click.echo(rule_text(r, markdown=fmt == "markdown"))


@cli.command("config")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use.")
def config_cmd(config_path: str | None) -> None:
    """Print the effective configuration (defaults merged with memwarden.toml) as JSON."""
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config

    repo = open_repo(Path.cwd())
    root = repo.root if repo and repo.root else Path.cwd()
    cfg = load_config(config_path, root)
    doc = {"source": cfg.source, "config": cfg.data}
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True))


@cli.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
def demo_cmd(keep: bool) -> None:
    """Copy the bundled example memory repo to a temp git repo and check it."""
    from memwarden.cli.demo import run_demo

    raise SystemExit(run_demo(keep=keep, echo=click.echo))


# Commands that leave no threads, temp files or exit handlers behind, so the program may
# end without tearing the interpreter down: freeing a built tokenizer's tables one object
# at a time costs ~25-35 ms, a sixth of a first `memwarden read`.
_QUICK_EXIT = frozenset({"read", "diff"})


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and return its exit code (never a traceback for users).

    `check` takes the lean path (memwarden/cli_check.py) when its arguments are ordinary.
    Run as the program (argv None), `check` and the read-only commands exit the process
    right away."""
    args = list(sys.argv[1:] if argv is None else argv)
    code = lean_main(args[1:], program=argv is None) if args[:1] == ["check"] else None
    quick = code is not None or (bool(args) and args[0] in _QUICK_EXIT)
    if code is None:
        code = _main(args)
    if argv is None and quick:
        quick_exit(code)
    return code


def _main(args: list[str]) -> int:
    try:
        cli.main(args=args, prog_name="memwarden", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except click.exceptions.Abort:
        click.echo("memwarden: aborted", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return 2
    except Exception as exc:  # MemwardenError, a broken pipe, or a bug: see report_failure
        return report_failure(exc)
    except KeyboardInterrupt:
        return 130
    return 0
