"""`memwarden search` and `memwarden context`: the read side's BM25 search and context
assembly. Only click is imported up front; the index code loads on use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import format_option
from memwarden.model.errors import MemwardenError


def _repo() -> Any:
    from memwarden.git.repo import open_repo

    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("not inside a git repository (run this in the memory repo)")
    return repo


def _dump(doc: Any) -> None:
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2))


@click.command("search")
@click.argument("query")
@click.option("--agent", metavar="AGENT", help="Only this agent's memory, logic and sources.")
@click.option("--layer", type=click.Choice(["1", "2"]), help="1: Layer 1 memory files only; "
              "2: Layer 2 only (decisions, changelog, timeline, runs). Default: Layer 1, "
              "logic pseudocode and sources.")
@click.option("--top-k", "top_k", type=int, default=10, show_default=True,
              help="How many entries to return.")
@click.option("--at", metavar="REV", help="Search this commit (default: the main branch "
              "from the config, else HEAD).")
@format_option(["text", "json"], "json")
def search_cmd(query: str, agent: str | None, layer: str | None, top_k: int, at: str | None,
               fmt: str) -> None:
    """BM25 search over the committed memory; prints the best entries first.

    Words are matched in any form of case and Latin diacritics (ё counts as е); a word
    ending in * matches as a prefix. Nothing in QUERY is query syntax."""
    from memwarden.read.search import check_options, match_terms, resolve_rev, run_query

    check_options(agent, int(layer) if layer else None, top_k)
    terms = match_terms(query)
    repo = _repo()
    commit = resolve_rev(repo, at)
    results = run_query(repo, commit, terms, agent, int(layer) if layer else None, top_k)
    if fmt == "json":
        _dump({"query": query, "commit": commit, "results": results})
        return
    for r in results:
        excerpt = " ".join(r["excerpt"].split())
        if len(excerpt) > 160:
            excerpt = excerpt[:159] + "…"
        click.echo(f"{r['score']:9.4f}  {r['file']}:{r['line']}  {excerpt}")
    if not results:
        click.echo("no matches", err=True)


@click.command("context")
@click.argument("agent")
@click.option("--query-hint", metavar="TEXT", help="Add the BM25 top-K entries for this "
              "text (Layer 1 of all agents, logic and sources; never Layer 2).")
@click.option("--budget", type=int, default=200_000, show_default=True,
              help="Token budget for all texts together.")
@click.option("--top-k", "top_k", type=int, default=10, show_default=True,
              help="Search results to consider for --query-hint.")
@click.option("--at", metavar="REV", help="Read this commit (default: the main branch from "
              "the config, else HEAD).")
def context_cmd(agent: str, query_hint: str | None, budget: int, top_k: int,
                at: str | None) -> None:
    """Print AGENT's context_snapshot as JSON: Layer 1, then search hits, then sources,
    whole items within the budget (what did not fit is listed under "dropped")."""
    from memwarden.read.context import build_context

    _dump(build_context(_repo(), agent, query_hint, budget, top_k, at))
