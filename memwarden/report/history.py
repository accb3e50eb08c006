"""One summary per commit of main's first-parent history, cached by commit id.

A commit's summary is a pure function of the commit (its message, its tree and its first
parent's tree), so it is computed once and kept in `.git/memwarden/report-cache/` forever:
what it was (an applied proposal, an eviction, a maintenance commit, a human edit), for which
agent, what it evicted (the listing of its message), the Layer 1 token counts of the
meta.json apply wrote, and the size of the whole tree (bytes and files) after it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memwarden.cachedir import atomic_write
from memwarden.git.repo import Repo

CACHE_FORMAT = 1
# `- facts.md 0a1b2c3d4e (stale-fact): text` in an eviction or maintenance commit.
LISTING_RE = re.compile(r"^[-*]\s+(\S+\.md)\s+([A-Za-z0-9][A-Za-z0-9._-]*)\s+"
                        r"\(([A-Za-z][A-Za-z0-9_-]*)\):\s?(.*)$")
SUBJECT_AGENT_RE = re.compile(r"^memory-(?:update|evict|maintain):\s*([a-z0-9][a-z0-9-]*)")
TRAILER_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*)$")
META_RE = re.compile(r"^memory/([a-z0-9][a-z0-9-]*)/meta\.json$")
TOKEN_KEYS = (("snapshot", "snapshotTokenCount"), ("facts", "factsTokenCount"),
              ("open_loops", "openLoopsTokenCount"))


def _kind(subject: str, trailers: dict[str, str]) -> str:
    if subject.startswith("memory-evict:"):
        return "evict"
    if subject.startswith("memory-maintain:"):
        return "maintain"
    if "applied-proposal" in trailers:
        return "apply"
    if trailers.get("human-edit", "").lower() == "true":
        return "human"
    return "other"


def trailers_of(message: str) -> dict[str, str]:
    """The `Key: value` lines of the message's last paragraph, first of each key (what apply,
    propose and the hooks write; the full git semantics live in model/trailers.py, ~40 times
    slower, which a walk over 10,000 commits notices)."""
    last = message.rstrip().rsplit("\n\n", 1)[-1]
    out: dict[str, str] = {}
    for line in last.splitlines():
        m = TRAILER_RE.match(line)
        if m is None:
            if line[:1] in (" ", "\t"):
                continue  # a folded value's continuation
            return {}  # not a trailer block
        out.setdefault(m.group(1).lower(), " ".join(m.group(2).split()))
    return out


def meta_tokens(data: bytes | None) -> dict[str, Any] | None:
    """The Layer 1 token counts a meta.json holds (None when it holds none)."""
    if data is None:
        return None
    try:
        meta = json.loads(data)
    except ValueError:
        return None
    return tokens_of(meta) if isinstance(meta, dict) else None


def tokens_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The Layer 1 token counts (and version) of a parsed meta.json, None without them."""
    out: dict[str, Any] = {}
    for key, field in TOKEN_KEYS:
        value = meta.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[key] = value
    if len(out) != len(TOKEN_KEYS):
        return None
    version = meta.get("version")
    out["version"] = version if isinstance(version, int) and not isinstance(version,
                                                                           bool) else None
    return out


def describe(sha: str, raw: bytes, time: int) -> dict[str, Any]:
    """What a commit's message says: its kind, agent, proposal and evicted entries."""
    message = raw.decode("utf-8", "replace")
    subject = message.split("\n", 1)[0]
    trailers = trailers_of(message)
    kind = _kind(subject, trailers)
    m = SUBJECT_AGENT_RE.match(subject)
    doc: dict[str, Any] = {"id": sha, "parent": None, "time": time, "kind": kind,
                           "agent": trailers.get("agent-id") or (m.group(1) if m else None)}
    if kind == "apply":
        doc["proposalId"] = trailers.get("applied-proposal")
        doc["runId"] = trailers.get("run-id")
        doc["autoApproved"] = trailers.get("auto-approved") == "true"
        doc["approvedBy"] = trailers.get("approved-by")
    if kind in ("evict", "maintain"):
        doc["reason"] = trailers.get("memory-eviction") or trailers.get("memory-maintenance")
        doc["evicted"] = [{"file": g[0], "id": g[1], "reason": g[2], "entry": g[3]}
                          for g in (LISTING_RE.match(line) for line in message.splitlines())
                          for g in ([g.groups()] if g else [])]
    return doc


def summarise_commits(repo: Repo, docs: list[dict[str, Any]]) -> None:
    """Add what each commit changed: the token counts of the meta.json files it wrote, and
    the change of the tree's size (`sizeDelta`, `filesDelta`)."""
    changes = repo.first_parent_changes([d["id"] for d in docs])
    for doc in docs:
        size = files = 0
        metas: dict[str, Any] = {}
        for path, old, new in changes.get(doc["id"], ()):
            if old is not None:
                size -= repo.blob_size(old)
                files -= 1
            if new is not None:
                size += repo.blob_size(new)
                files += 1
                mm = META_RE.match(path)
                if mm:
                    tokens = meta_tokens(repo.read_blob(new))
                    if tokens is not None:
                        metas[mm.group(1)] = tokens
        if metas:
            doc["meta"] = metas
        doc["sizeDelta"], doc["filesDelta"] = size, files


def tree_size(repo: Repo, sha: str) -> tuple[int, int]:
    """(bytes, files) of every blob in the tree of `sha`."""
    size = files = 0
    for e in repo.tree_entries(sha, everything=True):
        if e.mode != 0o160000:
            size += repo.blob_size(e.oid)
            files += 1
    return size, files


class HistoryCache:
    """Commit summaries by commit id in one JSON file, written atomically."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / "history.json" if folder is not None else None
        self.commits: dict[str, dict[str, Any]] = {}
        self.extra: dict[str, Any] = {}  # notes, gate decisions, the state at the newest tip
        self.dirty = False
        if self.path is not None:
            try:
                doc = json.loads(self.path.read_bytes())
                if doc.get("format") == CACHE_FORMAT and isinstance(doc.get("commits"), dict):
                    self.commits = doc["commits"]
                    self.extra = doc.get("extra") if isinstance(doc.get("extra"), dict) else {}
            except (OSError, ValueError, AttributeError):
                pass  # a missing or damaged cache is rebuilt

    def put(self, doc: dict[str, Any]) -> None:
        self.commits[doc["id"]] = doc
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        data = json.dumps({"format": CACHE_FORMAT, "commits": self.commits,
                           "extra": self.extra},
                          separators=(",", ":"), ensure_ascii=False).encode()
        atomic_write(self.path, data)
        self.dirty = False


def history(repo: Repo, at: str, since: int, cache: HistoryCache) -> list[dict[str, Any]]:
    """Summaries of main's first-parent commits from `at` back to the first one older than
    `since` (kept as the baseline of the range, when there is one), oldest first, each with
    its absolute `size` and `files`. Only commits the cache does not hold are read."""
    chain: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    sha: str | None = at
    while sha is not None:
        doc = cache.commits.get(sha)
        if doc is not None:
            chain.append(doc)
            sha = None if doc["time"] < since else doc["parent"]
            continue
        start, sha = sha, None  # sha: where a cached stretch of history starts again
        prev: dict[str, Any] | None = None
        for s, raw in repo.first_parent_log(start):
            if prev is not None:
                prev["parent"] = s
                if prev["time"] < since:
                    break
            if s in cache.commits:
                sha = s
                break
            prev = describe(s, raw, repo.commit_time(s))
            chain.append(prev)
            new.append(prev)
    summarise_commits(repo, new)
    for doc in new:
        cache.put(doc)
    chain.reverse()
    for i, doc in enumerate(chain):
        if "size" in doc:
            continue
        if i == 0:
            doc["size"], doc["files"] = tree_size(repo, doc["id"])
        else:
            doc["size"] = chain[i - 1]["size"] + doc["sizeDelta"]
            doc["files"] = chain[i - 1]["files"] + doc["filesDelta"]
        cache.dirty = True
    return chain
