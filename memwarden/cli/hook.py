"""`memwarden hook ...` (the git hook entry points pre-commit runs) and
`memwarden install-server-hooks` (the pre-receive hook of a bare repository)."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("hook")
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


@click.command("install-server-hooks")
@click.argument("bare_repo", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Replace a pre-receive hook that is not "
              "memwarden's (kept as pre-receive.bak).")
def install_server_hooks_cmd(bare_repo: str, force: bool) -> None:
    """Install the memwarden pre-receive hook into a bare repository."""
    from memwarden.hooks.pre_receive import install, next_steps

    hook = install(Path(bare_repo), force)
    click.echo(f"installed {hook}")
    click.echo(next_steps(Path(bare_repo)))
