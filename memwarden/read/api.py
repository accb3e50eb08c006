"""The read side as a Python API, for agent runtimes that import rather than shell out.

Every function takes the repository as a path (a work tree or a bare repository; default
the current directory) or an already opened `memwarden.git.repo.Repo`, and returns exactly the
structure the matching command prints as JSON (`memwarden read`, `diff`, `search`,
`context`, `entities`). The names differ from the submodules (memwarden.read.search is a
module), so `memwarden.search_memory` never collides with it. Errors are
`memwarden.model.errors.MemwardenError` with the same messages the CLI shows.

    >>> import memwarden
    >>> doc = memwarden.read_memory("archivist-violin", mode="wide", repo="/srv/memory")
    >>> doc["tokenCount"] <= 13_000
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memwarden.git.repo import Repo, open_repo
from memwarden.model.errors import MemwardenError

RepoLike = str | Path | Repo


def _repo(repo: RepoLike) -> Repo:
    if isinstance(repo, Repo):
        return repo
    opened = open_repo(Path(repo))
    if opened is None:
        raise MemwardenError(f"{repo}: not a git repository")
    return opened


def read_memory(agent: str, mode: str = "basic", *, repo: RepoLike = ".",
                max_tokens: int | None = None, at: str | None = None,
                since: str | None = None) -> dict[str, Any]:
    """What an agent's run loads: basic (snapshot + open loops, <= 4,100 tokens), wide
    (+ facts + last 5 decisions, <= 13,000), deep, temporal. Byte-identical per commit."""
    from memwarden.read.reader import read_memory as read

    r = _repo(repo)
    return read(r, agent, mode, max_tokens=max_tokens, at=at, since=since,
                cache_dir=r.cache_dir)


def memory_diff(agent: str, *, repo: RepoLike = ".", since: str | None = None,
                frm: str | None = None, to: str | None = None,
                files: list[str] | None = None, max_tokens: int | None = None
                ) -> dict[str, Any]:
    """Per-file unified diffs of the agent's memory between two commits (or since a date)."""
    from memwarden.read.diff import memory_diff as diff

    r = _repo(repo)
    return diff(r, agent, since=since, frm=frm, to=to, files=files, max_tokens=max_tokens,
                cache_dir=r.cache_dir)


def search_memory(query: str, *, repo: RepoLike = ".", agent: str | None = None,
           layer: int | None = None, top_k: int = 10, at: str | None = None
           ) -> list[dict[str, Any]]:
    """BM25 (SQLite FTS5) over the memory of a commit; the index is cached per tree id."""
    from memwarden.read.search import search as bm25

    return bm25(_repo(repo), query, agent=agent, layer=layer, top_k=top_k, at=at)


def memory_context(agent: str, *, repo: RepoLike = ".", query_hint: str | None = None,
            budget: int = 200_000, at: str | None = None) -> dict[str, Any]:
    """The context_snapshot: Layer 1 + the agent's sources + BM25 hits for the hint."""
    from memwarden.read.context import build_context

    return build_context(_repo(repo), agent, query_hint=query_hint, budget=budget, at=at)


def entity_graph(entity_id: str | None = None, *, repo: RepoLike = ".", at: str | None = None
             ) -> dict[str, Any] | None:
    """The entity graph from [[wiki-links]] and Entity-Refs trailers, or one node with its
    edges (None when `entity_id` is unknown)."""
    from memwarden.read.entities import entity_graph as graph_of
    from memwarden.read.entities import node_view
    from memwarden.read.snapshot import default_rev

    r = _repo(repo)
    graph = graph_of(r, at or default_rev(r))
    return graph if entity_id is None else node_view(graph, entity_id)
