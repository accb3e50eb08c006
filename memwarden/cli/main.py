"""The `memwarden` command line: a thin front end over policies, apply and the read side.

Each command (or command group) lives in its own module under memwarden/cli/ and is
imported only when it runs; this module assembles them and maps every outcome to an exit
code: 0 clean, 1 findings or rejections, 2 usage or configuration errors. The options
every command shares are spelled one way (memwarden/cli/options.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from memwarden.model.errors import MemwardenError
from memwarden.version import __version__

# name -> "module:attribute" of its click command.
_LAZY = {
    "init": "memwarden.cli.init:init_cmd",
    "agent": "memwarden.cli.init:agent_group",
    "check": "memwarden.cli.check:check_cmd",
    "check-commits": "memwarden.cli.commits:check_commits_cmd",
    "verify-history": "memwarden.cli.commits:verify_history_cmd",
    "rule": "memwarden.cli.rule:rule_cmd",
    "config": "memwarden.cli.config:config_cmd",
    "propose": "memwarden.cli.propose:propose_cmd",
    "gate": "memwarden.cli.gate:gate_cmd",
    "apply": "memwarden.cli.apply:apply_cmd",
    "status": "memwarden.cli.status:status_cmd",
    "reject": "memwarden.cli.status:reject_cmd",
    "maintain": "memwarden.cli.maintain:maintain_cmd",
    "evicted": "memwarden.cli.evicted:evicted_cmd",
    "restore-fact": "memwarden.cli.evicted:restore_fact_cmd",
    "read": "memwarden.cli.read:read_cmd",
    "diff": "memwarden.cli.read:diff_cmd",
    "search": "memwarden.cli.search:search_cmd",
    "context": "memwarden.cli.search:context_cmd",
    "snapshot": "memwarden.cli.snapshot:snapshot_cmd",
    "restore": "memwarden.cli.snapshot:restore_cmd",
    "entities": "memwarden.cli.snapshot:entities_cmd",
    "hook": "memwarden.cli.hook:hook_group",
    "install-server-hooks": "memwarden.cli.hook:install_server_hooks_cmd",
    "demo": "memwarden.cli.demo:demo_cmd",
    "report": "memwarden.cli.report:report_cmd",
    "serve": "memwarden.cli.serve:serve_cmd",
    "mcp": "memwarden.cli.serve:mcp_cmd",
    "token": "memwarden.cli.serve:token_group",
}


class _LazyGroup(click.Group):
    """A group whose commands are imported on first use (a hook imports one module)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(n for n in _LAZY if self._load(n) is not None)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    def _load(self, name: str) -> click.Command | None:
        target = _LAZY.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr, None)
        except ModuleNotFoundError as exc:  # only a missing module hides its command
            if exc.name != module:
                raise
            return None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="memwarden")
def cli() -> None:
    """Govern a git repository that holds LLM agents' long-term memory.

    Start with `memwarden init` (a new memory repository) and `memwarden agent add ID`.
    Exit codes: 0 clean, 1 findings or rejections, 2 usage or configuration errors."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and return its exit code (never a traceback for users)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        cli.main(args=args, prog_name="memwarden", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except click.exceptions.Abort:
        error("aborted")
        return 2
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
        return 2
    except click.ClickException as exc:
        usage_error(exc)
        return exc.exit_code
    except Exception as exc:  # MemwardenError, a broken pipe, or a bug: see report_failure
        return report_failure(exc)
    except KeyboardInterrupt:
        return 130
    return 0


def error(message: str) -> None:
    """The one error style: `memwarden: error: ...` on standard error."""
    click.echo(f"memwarden: error: {message}", err=True)


def usage_error(exc: click.ClickException) -> None:
    """click's own errors (bad option, bad value) in memwarden's style, with where to
    look for the right spelling."""
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.NoSuchOption) and exc.possibilities and ctx is not None:
        hidden = {a for p in ctx.command.params for a in getattr(p, "aliases", ())}
        exc.possibilities = [p for p in exc.possibilities if p not in hidden]
    error(exc.format_message())
    if isinstance(exc, click.UsageError) and ctx is not None:
        click.echo(f"(see `{ctx.command_path} --help`)", err=True)


def report_failure(exc: BaseException) -> int:
    """The message and exit code for an exception out of a command (never a traceback for
    user mistakes; a bug says so and keeps its trace for the report). Re-raises the rest."""
    if isinstance(exc, MemwardenError):
        error(str(exc))
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        return 0
    if isinstance(exc, Exception):
        import traceback

        click.echo("memwarden: internal error (please report this with the trace below)",
                   err=True)
        traceback.print_exception(exc)
        return 2
    raise exc
