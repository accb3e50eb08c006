"""The entity graph: `[[wiki-links]]` in memory and logic Markdown plus the
`Entity-Refs:` trailers on main's first-parent history, as nodes and edges, per commit.

Decisions (the seed leaves them open):
- Sources: every `*.md` under `memory/` and `logic/` of the commit's tree, and every commit
  on the first-parent history of the commit whose trailers carry `Entity-Refs:`
  (comma- or space-separated ids; `Agent-Id:` of that commit names who referenced them).
- Link syntax: `[[target]]`, `[[target|label]]`, `[[target#heading]]` (the anchor is
  dropped), `![[embed]]` counts as a link, `[[type:id]]` types the entity when `type` is
  one of agent, concept, artifact, decision (any other `x:` prefix stays part of the name).
- Ignored: links in fenced code blocks (``` or ~~~, at any indentation), in inline code
  spans (`` `[[x]]` `` is an example, not a reference) and in a leading YAML frontmatter.
- entity_id is a slug: NFKC, casefolded, every run of non-alphanumeric characters (any
  script) becomes `-`, a trailing `.md` is dropped: `[[Compost Tea]]`, `[[compost_tea]]`
  and `Entity-Refs: compost-tea` are one entity; Ukrainian names keep their letters.
- type: `agent` when the id is an agent (memory/, agents/ or logic/<id>/ exists), else the
  most used explicit type (ties: agent, concept, artifact, decision), else `concept`.
  label: the most used link label or link text that is not just the id (ties: the
  smallest string), else the id; trailer ids are not labels.
- refs: the referencing file paths (sorted), then trailer commit ids (newest first).
  last_updated: the commit time (UTC, ISO 8601) of the newest commit on the first-parent
  history that changed a referencing file, or of the newest trailer commit. File level,
  not line level: blame of every link would cost seconds on a large repository.
- Edges: `co-reference` between two entities linked from the same entry (a list item, a
  heading or a paragraph) of one file, undirected (source < target), weight = number of
  such entries; `mentions` from an agent to an entity it links from its memory/<agent>/ or
  logic/<agent>/ files or names in Entity-Refs of its commits, weight = number of links.
  An agent that mentions something is itself a node (type agent).
- Everything is derived from git objects only and sorted, so one commit gives one graph.
  Results are cached per commit under `<git dir>/memwarden/entities/` with each file's
  links by blob id, so a new commit re-reads only the files and commits that changed.
"""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from memwarden.git.repo import Repo
from memwarden.model.entries import body_start
from memwarden.model.layout import AGENT_ID_RE, classify
from memwarden.model.times import iso_utc
from memwarden.model.trailers import parse_trailers

TYPES = ("agent", "concept", "artifact", "decision")
CACHE_VERSION = "e1"
CACHE_KEEP = 8  # cached commits kept; older ones are pruned
MAX_FILE_BYTES = 2 * 1024 * 1024  # larger Markdown files are not scanned for links

LINK_RE = re.compile(r"\[\[([^\[\]\n|]*)(?:\|([^\[\]\n]*))?\]\]")
_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_ITEM_RE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_SEP_RE = re.compile(r"[\s,]+")
_ITEM_START = frozenset("-*+0123456789")


@dataclass(frozen=True)
class Link:
    """One wiki-link occurrence: the entity it names and where it sits in its file."""

    entity_id: str
    type: str | None  # explicit `[[type:id]]` type, else None
    label: str
    line: int  # 1-based
    entry: int  # 0-based line where its entry (list item, heading, paragraph) starts


def slugify(text: str) -> str:
    """The entity id of a name: casefolded, non-alphanumeric runs -> '-', any script."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    if text.endswith(".md"):
        text = text[:-3]
    out: list[str] = []
    dash = False
    for ch in text:
        if ch.isalnum():
            if dash and out:
                out.append("-")
            out.append(ch)
            dash = False
        else:
            dash = True
    return "".join(out)


@lru_cache(maxsize=65536)
def parse_target(target: str, label: str | None) -> tuple[str, str | None, str] | None:
    """(entity_id, explicit type or None, label) of a link's inside; None if it names
    nothing (empty or punctuation only)."""
    name = target.split("#", 1)[0].strip()
    etype = None
    head, sep, rest = name.partition(":")
    if sep and head.strip().casefold() in TYPES and rest.strip():
        etype, name = head.strip().casefold(), rest.strip()
    eid = slugify(name)
    if not eid:
        return None
    shown = (label or "").strip() or name
    return eid, etype, shown


def _strip_code_spans(line: str) -> str:
    """The line with inline code spans blanked (CommonMark: a run of n backticks closes at
    the next run of exactly n)."""
    if "`" not in line:
        return line
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if line[i] != "`":
            j = line.find("`", i)
            j = n if j < 0 else j
            out.append(line[i:j])
            i = j
            continue
        j = i
        while j < n and line[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < n:
            k = line.find("`", k)
            if k < 0:
                break
            m = k
            while m < n and line[m] == "`":
                m += 1
            if m - k == run:
                close = m
                break
            k = m
        if close < 0:
            out.append(line[i:j])  # unmatched backticks are literal text
            i = j
        else:
            out.append(" " * (close - i))
            i = close
    return "".join(out)


def scan_links(text: str) -> list[Link]:
    """Every wiki-link of a Markdown text outside code and frontmatter, in order."""
    if "[[" not in text:
        return []
    lines = text.split("\n")
    lo = body_start(lines, 500)
    if "```" in text or "~~~" in text:
        return _scan_lines(lines, lo)
    # No fences: only the lines with links matter; each finds its entry start backwards.
    out: list[Link] = []
    for idx in [i for i, ln in enumerate(lines) if "[[" in ln]:
        if idx >= lo:
            _links_of(lines[idx], idx, _entry_start(lines, idx, lo), out)
    return out


def _is_heading(line: str) -> bool:
    s = line.lstrip(" \t")
    return s[:1] == "#" and _HEADING_RE.match(line) is not None


def _is_boundary(line: str) -> bool:
    """A line that starts an entry of its own: a heading or a list item."""
    s = line.lstrip(" \t")
    return bool(s) and ((s[0] == "#" and _HEADING_RE.match(line) is not None)
                         or (s[0] in _ITEM_START and _ITEM_RE.match(line) is not None))


def _entry_start(lines: list[str], idx: int, lo: int) -> int:
    k = idx
    while k > lo:
        if _is_boundary(lines[k]):
            return k
        prev = lines[k - 1]
        if not prev.strip() or _is_heading(prev):
            return k
        k -= 1
    return k


def _links_of(line: str, idx: int, entry: int, out: list[Link]) -> None:
    for lm in LINK_RE.finditer(_strip_code_spans(line.rstrip("\r"))):
        parsed = parse_target(lm.group(1), lm.group(2))
        if parsed is not None:
            out.append(Link(parsed[0], parsed[1], parsed[2], idx + 1, entry))


def _scan_lines(lines: list[str], lo: int) -> list[Link]:
    """The line-by-line scan that tracks fenced code blocks (CommonMark: a fence closes
    with the same character, at least as long, and nothing after it)."""
    out: list[Link] = []
    fence: tuple[str, int] | None = None
    entry = lo
    prev_blank = True
    for idx in range(lo, len(lines)):
        line = lines[idx]
        s = line.lstrip(" \t")
        if fence is not None:  # inside a fence only its closing line matters
            if s[:3] == fence[0] * 3:
                m = _FENCE_RE.match(line)
                if m and len(m.group(1)) >= fence[1] and not m.group(2).strip():
                    fence = None
                    prev_blank = True
            continue
        if s[:3] in ("```", "~~~"):
            m = _FENCE_RE.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
                continue
        if not s.strip():
            prev_blank = True
            continue
        heading = _is_heading(line)
        if prev_blank or heading or _is_boundary(line):
            entry = idx
        prev_blank = heading  # a heading is an entry of its own
        if "[[" in s:
            _links_of(line, idx, entry, out)
    return out


def trailer_ids(value: str) -> list[tuple[str, str | None, str]]:
    """(entity_id, type, label) of each id in an `Entity-Refs:` value."""
    out = []
    for item in _SEP_RE.split(value):
        parsed = parse_target(item.strip("[]"), None) if item else None
        if parsed is not None:
            out.append(parsed)
    return out


# --------------------------------------------------------------------------- history state

@dataclass
class _State:
    """What a commit's graph is built from; cached so the next commit is incremental."""

    commit: str
    touch: dict[str, list[Any]]  # path -> [commit time, commit id] of its last change
    trailers: list[list[Any]]  # [commit id, time, agent|None, [[id, type, label], ...]]
    files: dict[str, list[Any]]  # path -> [blob id, [[id, type, label, line, entry], ...]]
    agents: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "touch": self.touch, "trailers": self.trailers,
                "files": self.files, "agents": self.agents}


def _scanned(path: str) -> bool:
    return path.startswith(("memory/", "logic/")) and path.endswith(".md")


def _cache_path(repo: Repo, commit: str, part: str) -> Path:
    return repo.cache_dir / "entities" / f"{CACHE_VERSION}-{commit}.{part}"


def _load(repo: Repo, commit: str, part: str) -> Any:
    """A cached part ("graph" or "state") of `commit`, or None (absent or unreadable:
    rebuilt, never trusted). marshal, like the token cache: ~10x faster than JSON here."""
    import marshal

    try:
        doc = marshal.loads(_cache_path(repo, commit, part).read_bytes())
        if isinstance(doc, dict) and doc.get("commit") == commit:
            return doc
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return None


def _load_state(repo: Repo, commit: str) -> _State | None:
    st = _load(repo, commit, "state")
    try:
        return _State(st["commit"], st["touch"], st["trailers"], st["files"], st["agents"])
    except (KeyError, TypeError):
        return None


def _save(repo: Repo, state: _State, graph: dict[str, Any]) -> None:
    """Atomic writes, state before graph; caches are optional, so OS errors are ignored."""
    import marshal

    folder = repo.cache_dir / "entities"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for part, doc in (("state", state.to_json()), ("graph", graph)):
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(marshal.dumps(doc))
            os.replace(tmp, _cache_path(repo, state.commit, part))
        old = sorted(folder.glob(f"{CACHE_VERSION}-*.state"), key=lambda p: p.stat().st_mtime,
                     reverse=True)
        for p in old[CACHE_KEEP:]:
            p.unlink(missing_ok=True)
            p.with_suffix(".graph").unlink(missing_ok=True)
    except OSError:
        pass


def _walk(repo: Repo, commit: str, use_cache: bool) -> tuple[list[tuple[str, bytes]],
                                                             _State | None]:
    """First-parent commits from `commit` back to the newest one with a cached state (or to
    the root), newest first, and that cached state."""
    commits: list[tuple[str, bytes]] = []
    for sha, raw in repo.first_parent_log(commit):
        if use_cache and commits and _cache_path(repo, sha, "state").is_file():
            base = _load_state(repo, sha)
            if base is not None:
                return commits, base
        commits.append((sha, raw))
    return commits, None


def _trailer_record(repo: Repo, sha: str, raw: bytes) -> list[Any] | None:
    if b"entity-refs" not in raw.lower():
        return None
    msg = raw.decode("utf-8", "replace")
    refs: list[list[Any]] = []
    agent = None
    for t in parse_trailers(msg, ("Entity-Refs",)):
        key = t.key.lower()
        if key == "entity-refs":
            refs.extend([list(x) for x in trailer_ids(t.value)])
        elif key == "agent-id" and AGENT_ID_RE.match(t.value):
            agent = t.value
    if not refs:
        return None
    return [sha, repo.commit_time(sha), agent, refs]


def build_state(repo: Repo, commit: str, use_cache: bool = True) -> _State:
    """The sources of `commit`'s graph, reusing the nearest cached first-parent ancestor."""
    commits, base = _walk(repo, commit, use_cache)
    entries = list(repo.tree_entries(commit))
    current = {e.path: e.oid for e in entries if _scanned(e.path) and e.mode in
               (0o100644, 0o100755)}
    agents = sorted({p.split("/")[1] for p in (e.path for e in entries)
                     if p.count("/") >= 2 and p.startswith(("memory/", "agents/", "logic/"))
                     and AGENT_ID_RE.match(p.split("/")[1])})
    touch: dict[str, list[Any]] = {}
    unresolved = set(current)
    trailers: list[list[Any]] = []
    for i, (sha, raw) in enumerate(commits):
        rec = _trailer_record(repo, sha, raw)
        if rec is not None:
            trailers.append(rec)
        if not unresolved:
            continue
        parent = commits[i + 1][0] if i + 1 < len(commits) else (base.commit if base else None)
        changed = [p for p in repo.changed_paths(parent, sha) if p in unresolved]
        if changed:
            when = repo.commit_time(sha)
            for p in changed:
                touch[p] = [when, sha]
                unresolved.discard(p)
    for p in unresolved:  # unchanged since the cached ancestor
        if base is not None and p in base.touch:
            touch[p] = base.touch[p]
    if base is not None:
        trailers.extend(base.trailers)
    files: dict[str, list[Any]] = {}
    old = base.files if base is not None else {}
    for path, oid in sorted(current.items()):
        prev = old.get(path)
        if prev is not None and prev[0] == oid:
            files[path] = prev
            continue
        data = repo.read_blob(oid) if oid else b""
        links: list[list[Any]] = []
        if len(data) <= MAX_FILE_BYTES and b"[[" in data:
            text = data.decode("utf-8", "replace")
            links = [[lk.entity_id, lk.type, lk.label, lk.line, lk.entry]
                     for lk in scan_links(text)]
        files[path] = [oid, links]
    return _State(commit, {p: touch[p] for p in sorted(touch)}, trailers, files, agents)


# --------------------------------------------------------------------------- the graph

def _iso(ts: int) -> str:
    return iso_utc(ts)


def _pick_label(eid: str, labels: Counter[str]) -> str:
    """The most used link text that says more than the id itself (ties: smallest)."""
    named = {k: v for k, v in labels.items() if k != eid} or labels
    if not named:
        return eid
    return min(named.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _pick_type(eid: str, explicit: Counter[str], agents: set[str]) -> str:
    if eid in agents:
        return "agent"
    if not explicit:
        return "concept"
    return min(explicit.items(), key=lambda kv: (-kv[1], TYPES.index(kv[0])))[0]


class _Acc:
    """Accumulates one entity's mentions."""

    __slots__ = ("labels", "types", "paths", "commits", "times", "source_times")

    def __init__(self) -> None:
        self.labels: Counter[str] = Counter()
        self.types: Counter[str] = Counter()
        self.paths: set[str] = set()
        self.commits: list[str] = []
        self.times: list[int] = []
        self.source_times: list[int] = []  # for agents: when their outgoing mentions changed

    def add(self, etype: str | None, label: str | None) -> None:
        if label is not None:
            self.labels[label] += 1
        if etype:
            self.types[etype] += 1


def graph_from_state(state: _State) -> dict[str, Any]:
    """Nodes and edges of the entity graph (see the module docstring for the rules)."""
    acc: dict[str, _Acc] = defaultdict(_Acc)
    co: Counter[tuple[str, str]] = Counter()
    mentions: Counter[tuple[str, str]] = Counter()
    for path, (_, links) in state.files.items():
        if not links:
            continue
        info = classify(path)
        agent = info.agent if info and info.agent and AGENT_ID_RE.match(info.agent) else None
        when = state.touch.get(path, [0, ""])[0]
        by_entry: dict[int, set[str]] = defaultdict(set)
        for eid, etype, label, _line, entry in links:
            a = acc[eid]
            a.add(etype, label)
            a.paths.add(path)
            a.times.append(when)
            by_entry[entry].add(eid)
            if agent and agent != eid:
                mentions[(agent, eid)] += 1
                acc[agent].source_times.append(when)
        for ids in by_entry.values():
            ordered = sorted(ids)
            for i, x in enumerate(ordered):
                for y in ordered[i + 1:]:
                    co[(x, y)] += 1
    for sha, when, agent, refs in state.trailers:
        for eid, etype, _label in refs:
            a = acc[eid]
            a.add(etype, None)  # an id in a trailer is not a human-readable label
            if sha not in a.commits:
                a.commits.append(sha)
            a.times.append(when)
            if agent and agent != eid:
                mentions[(agent, eid)] += 1
                acc[agent].source_times.append(when)
    agents = set(state.agents)
    nodes = []
    for eid in sorted(acc):
        a = acc[eid]
        times = a.times or a.source_times  # an unreferenced agent: when it last linked
        nodes.append({
            "entity_id": eid,
            "type": "agent" if not a.times else _pick_type(eid, a.types, agents),
            "label": _pick_label(eid, a.labels),
            "refs": sorted(a.paths) + a.commits,
            "last_updated": _iso(max(times)) if times else None,
        })
    edges = [{"source": x, "target": y, "kind": "co-reference", "weight": n}
             for (x, y), n in sorted(co.items())]
    edges += [{"source": x, "target": y, "kind": "mentions", "weight": n}
              for (x, y), n in sorted(mentions.items())]
    return {"commit": state.commit, "nodes": nodes, "edges": edges}


def entity_graph(repo: Repo, rev: str, use_cache: bool = True) -> dict[str, Any]:
    """The entity graph of commit `rev` (cached per commit; deterministic)."""
    commit = repo.resolve_commit(rev)
    if use_cache:
        cached = _load(repo, commit, "graph")
        if cached is not None:
            return cached
    state = build_state(repo, commit, use_cache)
    graph = graph_from_state(state)
    if use_cache:
        _save(repo, state, graph)
    return graph


def node_view(graph: dict[str, Any], query: str) -> dict[str, Any] | None:
    """One node with the edges that touch it, or None. `query` may be a name or a
    `type:id`; it is slugified like a link."""
    parsed = parse_target(query, None)
    if parsed is None:
        return None
    eid = parsed[0]
    for node in graph["nodes"]:
        if node["entity_id"] == eid:
            edges = [e for e in graph["edges"] if eid in (e["source"], e["target"])]
            return {"commit": graph["commit"], "node": node, "edges": edges}
    return None


def render_json(doc: dict[str, Any]) -> str:
    """JSON with one node or edge per line: readable, greppable, and fast to print for
    graphs of tens of thousands of edges (indent=2 would triple the time)."""
    import json

    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))

    parts = []
    for key, value in doc.items():
        if isinstance(value, list):
            body = ",\n    ".join(dump(v) for v in value)
            parts.append(f'  {dump(key)}: [\n    {body}\n  ]' if value else f"  {dump(key)}: []")
        else:
            parts.append(f"  {dump(key)}: {dump(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def render_text(graph: dict[str, Any]) -> str:
    """One line per node: id, type, number of refs, last update, label."""
    lines = [f"{n['entity_id']}\t{n['type']}\trefs={len(n['refs'])}\t"
             f"{n['last_updated'] or '-'}\t{n['label']}" for n in graph["nodes"]]
    lines.append(f"{len(graph['nodes'])} entities, {len(graph['edges'])} edges at "
                 f"{graph['commit'][:12]}")
    return "\n".join(lines) + "\n"


def render_node_text(view: dict[str, Any]) -> str:
    n = view["node"]
    lines = [f"{n['entity_id']} ({n['type']}): {n['label']}",
             f"last updated: {n['last_updated'] or '-'}", "refs:"]
    lines += [f"  {r}" for r in n["refs"]] or ["  (none)"]
    lines.append("edges:")
    for e in view["edges"]:
        other = e["target"] if e["source"] == n["entity_id"] else e["source"]
        arrow = ("->" if e["source"] == n["entity_id"] else "<-") \
            if e["kind"] == "mentions" else "--"
        lines.append(f"  {arrow} {other}  {e['kind']} x{e['weight']}")
    if not view["edges"]:
        lines.append("  (none)")
    return "\n".join(lines) + "\n"
