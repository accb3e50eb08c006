"""`memwarden snapshot`, `restore` and `entities`: thin front ends over memwarden.read.snapshot
and memwarden.read.entities (argument checks, output, exit codes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import Refused, at_option, format_option, output_option
from memwarden.model.errors import MemwardenError


def _repo(required: bool = True) -> Any:
    from memwarden.git.repo import open_repo

    repo = open_repo(Path.cwd())
    if repo is None and required:
        raise MemwardenError("not inside a git repository")
    return repo


def _echo_json(doc: Any) -> None:
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2))


@click.command("snapshot")
@click.argument("agent", required=False)
@click.option("--all", "all_", is_flag=True, help="Back up the whole repository history "
              "up to the commit as a git bundle (plus <FILE>.json) instead of one agent.")
@click.option("--label", required=True, help="Name of the snapshot ([A-Za-z0-9._-]).")
@output_option("Archive to write: FILE.tar.gz for an agent, FILE.bundle with --all.",
               required=True)
@at_option("Commit to snapshot (default: main_branch from the committed memwarden.toml, "
           "else HEAD).")
@click.option("--force", is_flag=True, help="Replace an existing --output.")
def snapshot_cmd(agent: str | None, all_: bool, label: str, output: str, at: str | None,
                 force: bool) -> None:
    """Write a verified, reproducible snapshot of AGENT's files (memory/, agents/, logic/)
    at a commit: a .tar.gz whose first member is a manifest of every file's sha256. The
    same commit and label always give identical bytes. Prints a JSON summary."""
    from memwarden.read import snapshot as snap
    if all_ == bool(agent):
        raise click.UsageError("name one AGENT or pass --all")
    repo = _repo()
    snap.validate_label(label)
    at = at or snap.default_rev(repo)
    path = Path(output)
    if all_:
        _echo_json(snap.write_bundle(repo, label, at, path, force))
    else:
        _echo_json(snap.write_agent_snapshot(repo, agent or "", label, at, path, force))
    raise SystemExit(0)


@click.command("restore")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--into", "into", type=click.Path(file_okay=False),
              help="Write the files under DIR (a work tree or a new folder) instead of "
                   "creating a branch; with a bundle, DIR becomes a new repository.")
@click.option("--branch", metavar="NAME", help="Branch to create (default restore/<label>; "
              "bundles default to refs/restore/<label>). Never the main branch.")
@click.option("--base", metavar="REV", help="Commit the restore branch starts from "
              "(default: main).")
@click.option("--force", is_flag=True, help="Overwrite local changes (--into) or replace an "
              "existing restore/<label> branch or refs/restore/<label> ref.")
@click.option("--trust-archive", is_flag=True, help="Restore an agent archive whose commit is "
              "not in this repository (nothing else vouches for it; every policy still "
              "checks its files).")
def restore_cmd(archive: str, into: str | None, branch: str | None, base: str | None,
                force: bool, trust_archive: bool) -> None:
    """Verify a snapshot completely, then restore it. An agent archive becomes a
    Human-Edit commit on branch restore/<label> (main never moves) or files under --into;
    a bundle is fetched into refs/restore/<label>. Exit 0 restored, 1 refused (the
    archive failed verification; the message names the member), 2 usage errors."""
    from memwarden.read import snapshot as snap
    if into and (branch or base):
        raise click.UsageError("--into writes files; do not combine it with --branch/--base")
    path = Path(archive)
    raw = snap.read_archive(path)
    if snap.is_bundle(raw):
        if base:
            raise click.UsageError("--base applies to agent archives, not bundles")
        result = snap.restore_bundle(_repo(False), path, raw,
                                     Path(into) if into else None, branch, force)
        _echo_json(result)
        raise SystemExit(0)
    result = snap.restore_archive(_repo(into is None), raw, str(path),
                                  Path(into) if into else None, branch, base, force,
                                  trust_archive)
    _echo_json(result)
    raise SystemExit(0)


@click.command("entities")
@click.argument("entity_id", required=False)
@at_option("Commit to read (default: main_branch, else HEAD).")
@format_option(["text", "json"], "text")
@click.option("--no-cache", is_flag=True, help="Do not read or write .git/memwarden caches.")
def entities_cmd(entity_id: str | None, at: str | None, fmt: str, no_cache: bool) -> None:
    """The entity graph from [[wiki-links]] in memory/ and logic/ Markdown and Entity-Refs
    trailers on the first-parent history: nodes {entity_id, type, label, refs,
    last_updated} and co-reference / mentions edges. With ENTITY_ID: that node and its
    edges (exit 1 if unknown)."""
    from memwarden.read import entities as ent
    from memwarden.read.snapshot import default_rev

    repo = _repo()
    graph = ent.entity_graph(repo, at or default_rev(repo), use_cache=not no_cache)
    if entity_id is None:
        if fmt == "json":
            click.echo(ent.render_json(graph), nl=False)
        else:
            click.echo(ent.render_text(graph), nl=False)
        raise SystemExit(0)
    view = ent.node_view(graph, entity_id)
    if view is None:
        raise Refused(f"unknown entity {entity_id!r} at {graph['commit'][:12]} "
                      f"({len(graph['nodes'])} entities; `memwarden entities` lists them)")
    if fmt == "json":
        click.echo(ent.render_json(view), nl=False)
    else:
        click.echo(ent.render_node_text(view), nl=False)
    raise SystemExit(0)
