"""Every registered command follows the one option convention (README "Options and
conventions"): --push REMOTE, --at REV, -o/--output FILE, --format from one list with one
default rule, and one error style; the old spellings still work, hidden."""

from __future__ import annotations

import click
import pytest
from conftest import make_repo

from memwarden.cli.main import _LAZY, cli
from memwarden.cli.options import FORMATS, MACHINE_FIRST


def commands() -> list[tuple[str, click.Command]]:
    """(path, command) for every command, subcommands of groups included."""
    ctx = click.Context(cli)
    out = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += [(f"{name} {sub}", cmd.get_command(ctx, sub))
                    for sub in cmd.list_commands(ctx)]
        else:
            out.append((name, cmd))
    return out


ALL = commands()
IDS = [name for name, _ in ALL]


def visible(cmd: click.Command) -> dict[str, click.Option]:
    """Option spelling -> option, as --help shows them (hidden aliases left out)."""
    shown = {}
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            for o in [*p.opts, *p.secondary_opts]:
                if o not in getattr(p, "aliases", ()):
                    shown[o] = p
    return shown


def test_every_command_in_the_table_is_registered():
    assert {n.split()[0] for n in IDS} == set(_LAZY)
    assert "init" in IDS and "agent add" in IDS


@pytest.mark.parametrize(("name", "cmd"), ALL, ids=IDS)
def test_option_spelling(name, cmd):
    opts = visible(cmd)
    assert not {"--out", "--rev", "--remote"} & set(opts), name
    for spelling, p in opts.items():
        if p.metavar == "REMOTE":  # the remote a command syncs with
            assert spelling == ("--fetch" if name == "status" else "--push"), name
        if p.metavar == "REV":  # the commit a command reads, or a range's ends
            assert spelling in ("--at", "--base", "--from", "--to"), (name, spelling)
        if p.metavar == "FILE" and spelling.startswith("--") and spelling != "--sarif-file":
            assert spelling == "--output" and "-o" in p.opts, (name, spelling)
    if "--output" in opts:
        assert "-o" in opts["--output"].opts


@pytest.mark.parametrize(("name", "cmd"), ALL, ids=IDS)
def test_format_values_and_default(name, cmd):
    fmt = visible(cmd).get("--format")
    if fmt is None:
        return
    choices = list(fmt.type.choices)
    assert choices and set(choices) <= set(FORMATS), name
    assert choices == [f for f in FORMATS if f in choices] or name in ("read",), name
    if name in MACHINE_FIRST:
        assert fmt.default == "json", name
    else:  # text, or (None) inferred from --output's extension, else text
        assert fmt.default in ("text", None), name
        assert "text" in choices


@pytest.mark.parametrize(("name", "cmd"), ALL, ids=IDS)
def test_one_error_style(name, cmd, tmp_path, mw):
    if name in ("hook commit-msg", "hook prepare-commit-msg"):
        return  # they take git's arguments as they come
    root = make_repo(tmp_path, {"README.md": "x\n"})
    code, out, err = mw(root, *name.split(), "--no-such-option")
    assert code == 2 and out == "", name
    assert err.startswith("memwarden: error: No such option '--no-such-option'"), (name, err)
    assert f"(see `memwarden {name} --help`)" in err
    if "--format" in visible(cmd):
        code, _, err = mw(root, *name.split(), "--format", "yaml")
        assert code == 2 and err.startswith("memwarden: error: Invalid value for '--format'")


def test_help_shows_no_hidden_spelling(mw, tmp_path):
    for name, _ in ALL:
        code, out, _ = mw(tmp_path, *name.split(), "--help")
        assert code == 0 and "Usage: memwarden" in out
        for old in ("--out ", "--rev ", "--remote "):
            assert old not in out, (name, old)


def test_old_spellings_still_work(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- x\n"})
    assert mw(root, "check", "--rev", "HEAD")[0] == 0
    assert mw(root, "check", "--at", "HEAD")[0] == 0
    code, out, _ = mw(root, "rule", "MW101", "--format", "markdown")
    assert code == 0 and out == mw(root, "rule", "MW101", "--format", "md")[1]
    for spelling in ("--out", "--output", "-o"):
        target = tmp_path / f"a{spelling.strip('-')}.tar.gz"
        code, _, err = mw(root, "snapshot", "a", "--label", "l", spelling, str(target))
        assert code == 0 and target.is_file(), err
