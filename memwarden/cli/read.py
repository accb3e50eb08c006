"""`memwarden read` and `memwarden diff`: the read side's command line.

Kept light on purpose (a runtime calls `read` before every run): only click at import
time; the repository, the config and the tokenizer load inside the commands, and `read`
takes its few objects from `git cat-file` rather than importing pygit2.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import format_option
from memwarden.model.errors import MemwardenError

_MODES = ["basic", "wide", "deep", "temporal"]


def _open(command: str) -> tuple[Any, Any]:
    """The repository around the working directory and where exact counts are kept."""
    from memwarden.git.repo import open_repo

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError(f"{command}: not inside a git repository")
    return repo, repo.cache_dir / "read"


def _config(path: str | None) -> Any:
    if path is None:
        return None
    from memwarden.model.config import load_config

    return load_config(path, None)


@click.command("read")
@click.argument("agent")
@click.option("--mode", type=click.Choice(_MODES), default="basic", show_default=True,
              help="basic: snapshot + open loops (<= 4,100 tokens); wide: + facts and the "
                   "last 5 decisions (<= 13,000); deep: + changelog and 7 days of timeline; "
                   "temporal: + diffs since --since (deep/temporal <= 32,000).")
@click.option("--max-tokens", type=click.IntRange(min=1), metavar="N",
              help="A smaller budget than the mode's (the whole response counts).")
@click.option("--at", "at", metavar="REV", help="Read this commit (default: the main branch).")
@click.option("--since", metavar="DATE", help="temporal: diffs since DATE (default: 7 days "
              "before the commit).")
@format_option(["json", "md"], "json", "json (the read-memory response) or one Markdown "
               "block.")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use "
              "(default: the one committed at the commit read).")
def read_cmd(agent: str, mode: str, max_tokens: int | None, at: str | None,
             since: str | None, fmt: str, config_path: str | None) -> None:
    """Print an agent's memory at one commit, within the mode's token budget.

    Same commit, mode and budget: byte-identical output. Exit 0, or 2 on a usage error."""
    from memwarden.read.budget import serialize
    from memwarden.read.reader import read_memory, render_markdown

    repo, cache_dir = _open("read")
    config = _config(config_path)
    with _objects(repo, mode) as objects:
        doc = read_memory(objects, agent, mode, max_tokens, at, since, config,
                          cache_dir=cache_dir)
    click.echo(for_terminal(serialize(doc) if fmt == "json" else render_markdown(doc)),
               nl=False)
    raise SystemExit(0)


# What a terminal acts on rather than shows: C0 and C1 controls (escape sequences, OSC 52
# clipboard writes, carriage returns) and the bidi controls that reorder what is shown.
_ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """`text` as printed: unchanged into a pipe or a file (what agents and scripts read,
    byte for byte), with the characters a terminal would act on shown escaped when a
    person reads it on one (memory text is written by agents, some of them hostile)."""
    if not sys.stdout.isatty():
        return text
    return _ACTED_ON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _objects(repo: Any, mode: str) -> Any:
    """What `read` reads objects through: one `git cat-file --batch` process (no pygit2
    import) unless the mode walks history (temporal: the Repo itself)."""
    from contextlib import nullcontext

    from memwarden.git.repo import BatchReader

    if mode == "temporal":
        return nullcontext(repo)
    return BatchReader(repo)


@click.command("diff")
@click.argument("agent")
@click.option("--since", metavar="DATE", help="From the last main commit at or before DATE "
              "(YYYY-MM-DD = 00:00 UTC, or an ISO date-time).")
@click.option("--from", "frm", metavar="REV", help="Start of the range (instead of --since).")
@click.option("--to", "to", metavar="REV", help="End of the range (default: the main branch).")
@click.option("--files", multiple=True, metavar="NAME", help="Only these files (relative to "
              "memory/<agent>/; a name ending in / selects a folder). Repeatable.")
@click.option("--max-tokens", type=click.IntRange(min=1), metavar="N",
              help="Cap the JSON response; hunks are dropped in a fixed order and listed.")
@format_option(["text", "json"], "json")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use.")
def diff_cmd(agent: str, since: str | None, frm: str | None, to: str | None,
             files: tuple[str, ...], max_tokens: int | None, fmt: str,
             config_path: str | None) -> None:
    """Show what changed in an agent's memory: per-file unified diffs, +N -M, commits."""
    from memwarden.read.budget import serialize
    from memwarden.read.diff import memory_diff, render_text

    repo, cache_dir = _open("diff")
    config = _config(config_path)
    doc = memory_diff(repo, agent, since, frm, to, list(files) or None, max_tokens, config,
                      cache_dir=cache_dir)
    click.echo(for_terminal(serialize(doc) if fmt == "json" else render_text(doc)), nl=False)
    raise SystemExit(0)
