"""The command line's shared conventions: one spelling per idea, for every command.

`--push REMOTE` (the remote a command fetches from and pushes to), `--at REV` (the commit a
command reads), `-o/--output FILE` (where a report goes), `--format` from text | json | md |
sarif | github | html (each command the subset that fits; text for commands people read, json for
the machine-first ones), and one error style `memwarden: error: ...`. Old spellings stay
accepted as hidden aliases, so scripts written against earlier versions keep working.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from memwarden.model.errors import MemwardenError

FORMATS = ("text", "json", "md", "sarif", "github", "html")
# Spellings of a format value that earlier versions accepted.
FORMAT_ALIASES = {"markdown": "md"}
# Commands whose output is read by programs first (agent runtimes, CI steps): json by
# default. Every other command with --format defaults to text.
MACHINE_FIRST = frozenset({"read", "diff", "search", "apply", "maintain", "propose",
                           "restore-fact"})


class AliasOption(click.Option):
    """An option that also answers to old spellings (`aliases`) without showing them in
    --help or in error messages."""

    def __init__(self, *args: Any, aliases: Sequence[str] = (), **kwargs: Any) -> None:
        decls = [*args[0], *aliases] if args else list(aliases)
        super().__init__(decls, *args[1:], **kwargs)
        self.aliases = tuple(aliases)

    def _visible(self, fn: Callable[[], Any]) -> Any:
        saved = self.opts
        self.opts = [o for o in saved if o not in self.aliases]
        try:
            return fn()
        finally:
            self.opts = saved

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        return self._visible(lambda: super(AliasOption, self).get_help_record(ctx))

    def get_error_hint(self, ctx: click.Context) -> str:
        return self._visible(lambda: super(AliasOption, self).get_error_hint(ctx))


class FormatChoice(click.Choice):
    """--format's values; old spellings (`markdown`) are accepted and mapped."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            value = FORMAT_ALIASES.get(value, value)
        return super().convert(value, param, ctx)


def format_option(choices: Sequence[str], default: str | None, help: str = "") -> Callable:
    """`--format` with `choices` (a subset of FORMATS, in that order)."""
    unknown = set(choices) - set(FORMATS)
    assert not unknown, f"--format values outside the convention: {unknown}"
    text = help or "Output format."
    if default is not None:
        text += f" Default: {default}."
    return click.option("--format", "fmt", type=FormatChoice(list(choices)), default=default,
                        help=text)


def output_option(help: str = "Write the output to FILE instead of standard output.",
                  required: bool = False) -> Callable:
    """`-o/--output FILE` (earlier spelling `--out`, hidden)."""
    return click.option("--output", "-o", "output", cls=AliasOption, aliases=("--out",),
                        type=click.Path(dir_okay=False), metavar="FILE", required=required,
                        help=help)


def at_option(help: str = "Read this commit (default: the main branch).") -> Callable:
    """`--at REV` (earlier spelling `--rev`, hidden)."""
    return click.option("--at", "at", cls=AliasOption, aliases=("--rev",), metavar="REV",
                        help=help)


def push_option(help: str) -> Callable:
    """`--push REMOTE`."""
    return click.option("--push", "push", metavar="REMOTE", default=None, help=help)


def config_option(help: str = "memwarden.toml to use.") -> Callable:
    return click.option("--config", "config_path", type=click.Path(), help=help)


def now_option(help: str = "Today's date for waiver expiry (default: today).") -> Callable:
    return click.option("--now", metavar="ISO", help=help)


def infer_format(fmt: str | None, output: str | None) -> str:
    """--format, else the one --output's extension names, else text."""
    if fmt is not None:
        return fmt
    if output:
        from memwarden.report.findings import EXTENSIONS

        return EXTENSIONS.get(Path(output).suffix.lower(), "text")
    return "text"


def emit(text: str, output: str | None) -> None:
    """Print `text`, or write it to --output."""
    if output:
        _refuse_memory_file(output)
        try:
            Path(output).write_text(text, "utf-8")
        except OSError as exc:
            raise MemwardenError(f"--output {output}: cannot write ({exc.strerror})") from None
    else:
        click.echo(text, nl=False)


def _refuse_memory_file(output: str) -> None:
    """A report must never replace a file memwarden governs (the memory it just checked,
    the registry, the config): those are the data, and a report is cheap to write again."""
    from memwarden.git.files import locate
    from memwarden.model.layout import is_governed

    full = os.path.realpath(output)
    found = locate(os.path.dirname(full) or ".")
    root = os.path.realpath(found[1]) if found is not None and found[1] else None
    if root is None:
        return
    rel = os.path.relpath(full, root).replace(os.sep, "/")
    if not rel.startswith("../") and is_governed(rel):
        raise MemwardenError(f"--output {output}: is a governed memory file ({rel}); write "
                             "the report elsewhere (e.g. memwarden-report.json)")


class Text(click.ParamType):
    """Text that is recorded (a reason, a name): valid Unicode, so it can be written into
    git notes and commit messages; bytes that are not UTF-8 are a usage error."""

    name = "text"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        text = str(value)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            self.fail("not valid UTF-8 text (the shell passed bytes no encoding decodes)",
                      param, ctx)
        return text


TEXT = Text()


def split_ids(values: Sequence[str]) -> list[str] | None:
    """--select/--ignore values: comma-separated, repeatable, upper-cased; None when absent."""
    if not values:
        return None
    return [v.strip().upper() for item in values for v in item.split(",") if v.strip()]


def parse_today(now: str | None) -> _dt.date | None:
    """--now (an ISO date or date-time) as a date; None (today) when absent."""
    if not now:
        return None
    try:
        return _dt.datetime.fromisoformat(now.replace("Z", "+00:00")).date()
    except ValueError:
        raise MemwardenError(f"--now {now}: expected an ISO date or date-time") from None


def parse_now(value: str | None) -> _dt.datetime:
    """--now as an aware date-time (default: now, UTC)."""
    if not value:
        return _dt.datetime.now(_dt.UTC)
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MemwardenError(f"--now {value}: expected an ISO date-time") from None
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


def open_repo_here(command: str) -> Any:
    """The repository around the working directory; a clear error outside one."""
    from memwarden.git.repo import open_repo

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError(f"{command}: not inside a git repository")
    return repo


class Refused(MemwardenError):
    """The command ran and refuses (a result, not a usage error): exit 1."""

    exit_code = 1


def resolve_rev(repo: Any, rev: str, option: str | None = None) -> str:
    """`rev` as the user meant it: a branch or commit here, else (as `git checkout main`
    does) the one remote-tracking branch of that name (`origin/main`). The error names
    what the user typed, and the option it was typed for."""
    try:
        repo.resolve_commit(rev)
        return rev
    except MemwardenError:
        pass
    said = f"{option} {rev}" if option else rev
    tracking = [r for r in repo.refs("refs/remotes/") if r.split("/", 3)[-1] == rev]
    if len(tracking) == 1:
        return tracking[0].removeprefix("refs/remotes/")
    if tracking:
        names = ", ".join(r.removeprefix("refs/remotes/") for r in tracking)
        raise MemwardenError(f"{said}: no such branch here, and several remotes have one: "
                             f"pass one of {names}")
    raise MemwardenError(f"{said}: no such branch or commit")
