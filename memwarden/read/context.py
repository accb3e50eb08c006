"""Context assembly: one `context_snapshot` for an agent's run, within a budget.

What goes in, in priority order, each item whole or not at all:
1. the agent's Layer 1 — snapshot.md, open_loops.md, facts.md (the read side's truncation order);
2. with a query hint, the BM25 top-K entries for it over the search's default scope —
   Layer 1 of every agent, logic pseudocode and sources, as search indexes the whole
   monorepo; or, with `search_agent`, only that agent's files (the service passes the
   caller's agent unless it may read every agent) — minus this agent's Layer 1 files
   already included whole. Layer 2 never (context never includes Layer 2);
3. the agent's sources, `agents/<agent>/sources/**` text files, by path.
Items are taken greedily in that order; one that does not fit in what is left of the
budget is dropped and listed, and later (smaller) items may still fit. The budget counts
the tokens of the texts (memwarden.tokens.counter, the repository's encoding), not the JSON around
them. Everything is read from one commit and nothing depends on the clock, so the same
commit, agent, hint and budget always give the same document.
"""

from __future__ import annotations

import json
from typing import Any

from memwarden.model.errors import MemwardenError

DEFAULT_BUDGET = 200_000
DEFAULT_TOP_K = 10
LAYER1_ORDER = ("snapshot.md", "open_loops.md", "facts.md")
MAX_SOURCE_BYTES = 4 * 1024 * 1024
REGULAR = (0o100644, 0o100755)  # plain files; links and submodules are not read
UNREADABLE = "binary, not UTF-8, over 4 MiB or not a plain file"


def build_context(repo: Any, agent: str, query_hint: str | None = None,
                  budget: int = DEFAULT_BUDGET, top_k: int = DEFAULT_TOP_K,
                  at: str | None = None, config: Any = None,
                  search_agent: str | None = None) -> dict[str, Any]:
    """The context_snapshot of `agent` at a commit (default: the main branch, else HEAD);
    `search_agent` limits the hint's search to that agent's files (None: every agent)."""
    from memwarden.read import search as s
    s.check_options(agent, None, top_k)
    s.check_options(search_agent, None, top_k)
    if budget < 1:
        raise MemwardenError(f"--budget {budget}: expected a positive number of tokens")
    hint = query_hint if query_hint and query_hint.strip() else None
    commit = s.resolve_rev(repo, at, config)
    if config is None:
        from memwarden.model.config import load_config_at

        config = load_config_at(repo, commit)
    from memwarden.tokens.counter import TokenCounter, count_text

    counter = TokenCounter(config.encoding, repo.cache_dir)
    # With a hint the index is needed anyway; without one, use it only if it is cached.
    idx = s.open_index(repo, commit) if hint else s.find_index(repo, commit)
    try:
        layer1, missing, skipped = _layer1(repo, commit, agent, counter)
        listed, known = _source_files(repo, commit, agent, idx)
    finally:
        if idx is not None:
            idx.close()
    version = _version(repo, commit, agent)
    if not (known or len(missing) < len(LAYER1_ORDER) or version is not None):
        raise MemwardenError(f"agent {agent}: not found at {commit[:12]} (nothing under "
                             f"memory/{agent}/, agents/{agent}/ or logic/{agent}/)")
    sources = _sources(repo, listed, counter, skipped)
    fill = _Budget(budget)
    doc_layer1 = [item for item in layer1 if fill.take("layer1", item)]
    search_doc = None
    if hint:
        included = [item["path"] for item in doc_layer1]
        hits = s.run_query(repo, commit, s.match_terms(hint), search_agent, None, top_k,
                           exclude=included, text=True)
        results = []
        for h in hits:
            item = {k: h[k] for k in ("score", "file", "line", "end_line", "section", "layer",
                                      "agent", "kind")}
            item["tokens"] = count_text(h["text"], config.encoding)
            item["text"] = h["text"]
            if fill.take("search", item, path=h["file"]):
                results.append(item)
        search_doc = {"query": hint, "topK": top_k, "results": results}
    doc_sources = [item for item in sources if fill.take("sources", item)]
    counter.save()
    return {
        "agentId": agent,
        "commit": commit,
        "version": version,
        "encoding": config.encoding,
        "budget": budget,
        "tokenCount": fill.used,
        "layer1": doc_layer1,
        "search": search_doc,
        "sources": doc_sources,
        "dropped": fill.dropped,
        "missing": [f"memory/{agent}/{name}" for name in missing],
        "skipped": skipped,
    }


class _Budget:
    """Greedy whole-item packing; remembers what did not fit."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.dropped: list[dict[str, Any]] = []

    def take(self, part: str, item: dict[str, Any], path: str | None = None) -> bool:
        n = item["tokens"]
        if self.used + n <= self.budget:
            self.used += n
            return True
        drop = {"part": part, "path": path or item["path"], "tokens": n}
        if "line" in item:
            drop["line"] = item["line"]
        self.dropped.append(drop)
        return False


def _text(data: bytes) -> str | None:
    if len(data) > MAX_SOURCE_BYTES or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _layer1(repo: Any, commit: str, agent: str, counter: Any
            ) -> tuple[list[dict[str, Any]], list[str], list[dict[str, str]]]:
    """Layer 1 items in priority order, the names that are absent, unreadable files."""
    items, missing, skipped = [], [], []
    for name in LAYER1_ORDER:
        path = f"memory/{agent}/{name}"
        entry = repo.entry_at(commit, path)
        if entry is None or entry.oid is None:
            missing.append(name)
            continue
        text = _text(repo.read_blob(entry.oid)) if entry.mode in REGULAR else None
        if text is None:
            skipped.append({"path": path, "reason": UNREADABLE})
            continue
        items.append({"file": name, "path": path, "tokens": counter.count(entry.oid, text),
                      "text": text})
    return items, missing, skipped


def _source_files(repo: Any, commit: str, agent: str, idx: Any
                  ) -> tuple[list[tuple[str, str]], bool]:
    """(path, blob id) of the agent's plain source files by path, and whether the agent
    has any file at all under memory/, agents/ or logic/."""
    if idx is not None:
        return idx.files("agent_source", agent), idx.has_agent(agent)
    listed, known = [], False  # no index of this tree yet: one walk of the governed tree
    prefix = f"agents/{agent}/sources/"
    for e in repo.tree_entries(commit):
        if e.path.startswith((f"agents/{agent}/", f"logic/{agent}/", f"memory/{agent}/")):
            known = True
            if e.path.startswith(prefix) and e.oid is not None and e.mode in REGULAR:
                listed.append((e.path, e.oid))
    return sorted(listed), known


def _sources(repo: Any, listed: list[tuple[str, str]], counter: Any,
             skipped: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The text sources as items; binary ones go to `skipped`."""
    items = []
    for path, oid in listed:
        text = _text(repo.read_blob(oid))
        if text is None:
            skipped.append({"path": path, "reason": UNREADABLE})
            continue
        items.append({"path": path, "tokens": counter.count(oid, text), "text": text})
    return items


def _version(repo: Any, commit: str, agent: str) -> int | None:
    """meta.json's version, when the file is there and sound (informational only)."""
    data = repo.read_path(commit, f"memory/{agent}/meta.json")
    if data is None:
        return None
    try:
        version = json.loads(data).get("version")
    except (ValueError, AttributeError):
        return None
    return version if isinstance(version, int) and not isinstance(version, bool) else None
