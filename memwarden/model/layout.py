"""The memory repository's layout: which path is which kind of file, of which agent, layer.

Pure string work over repo-relative POSIX paths, so every front end (worktree, index,
committed tree, bare repo) classifies files the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import re

AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
DATE_FILE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
RUN_FILE_RE = re.compile(r"^run_([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.md$")
RUN_DIR_RE = re.compile(r"^run_([A-Za-z0-9][A-Za-z0-9._-]{0,127})$")

# Layer 1 files and the config key of their HARD limit.
LAYER1 = {"snapshot.md": "snapshot", "facts.md": "facts", "open_loops.md": "open_loops"}
LAYER2_FIXED = {
    "decisions.md": "decisions",
    "relationships.md": "relationships",
    "changelog.md": "changelog",
}
APPLY_OWNED_KINDS = frozenset({"meta", "changelog", "timeline"})
# Top-level locations memwarden governs; everything else is skipped cheaply.
GOVERNED_PREFIXES = ("memory/", "agents/", "logic/")
GOVERNED_FILES = ("registry.json", "memwarden.toml")


@dataclasses.dataclass(frozen=True, slots=True)
class FileInfo:
    """What a path is in the memory layout."""

    path: str
    area: str  # memory | agents | logic | registry | config
    kind: str
    agent: str | None = None
    layer: int | None = None

    @property
    def is_markdown(self) -> bool:
        return self.path.endswith(".md")

    @property
    def limit_key(self) -> str | None:
        """The `[limits]` key that bounds this file, if any."""
        return {
            "snapshot": "snapshot",
            "facts": "facts",
            "open_loops": "open_loops",
            "changelog": "changelog",
            "timeline": "timeline_day",
            "run": "run",
            "relationships": "relationships",
            "agent_contract": "agent_contract",
        }.get(self.kind)


def is_governed(path: str) -> bool:
    return path.startswith(GOVERNED_PREFIXES) or path in GOVERNED_FILES


@functools.lru_cache(maxsize=65536)
def classify(path: str) -> FileInfo | None:
    """Classify a repo-relative POSIX path; None for files memwarden does not govern."""
    if path in GOVERNED_FILES:
        return FileInfo(path, "registry" if path == "registry.json" else "config",
                        "registry" if path == "registry.json" else "config")
    parts = path.split("/")
    top = parts[0]
    if top == "memory":
        return _classify_memory(path, parts)
    if top == "agents":
        return _classify_agents(path, parts)
    if top == "logic":
        agent = parts[1] if len(parts) > 2 else None
        kind = "logic_pseudo" if len(parts) == 3 and parts[2] == "current.pseudo.md" else "logic"
        return FileInfo(path, "logic", kind, agent)
    return None


def _classify_memory(path: str, parts: list[str]) -> FileInfo:
    if len(parts) < 3:
        return FileInfo(path, "memory", "unknown")
    agent, rest = parts[1], parts[2:]
    name = rest[0]
    if len(rest) == 1:
        if name in LAYER1:
            return FileInfo(path, "memory", LAYER1[name], agent, 1)
        if name in LAYER2_FIXED:
            return FileInfo(path, "memory", LAYER2_FIXED[name], agent, 2)
        if name == "meta.json":
            return FileInfo(path, "memory", "meta", agent)
        return FileInfo(path, "memory", "unknown", agent)
    if name == "timeline" and len(rest) == 2 and DATE_FILE_RE.match(rest[1]):
        return FileInfo(path, "memory", "timeline", agent, 2)
    if name == "runs":
        if len(rest) == 2 and RUN_FILE_RE.match(rest[1]):
            return FileInfo(path, "memory", "run", agent, 2)
        if len(rest) >= 3 and RUN_DIR_RE.match(rest[1]):
            return FileInfo(path, "memory", "run", agent, 2)
    return FileInfo(path, "memory", "unknown", agent)


def _classify_agents(path: str, parts: list[str]) -> FileInfo:
    if len(parts) < 3:
        return FileInfo(path, "agents", "agent_file")
    slug, rest = parts[1], parts[2:]
    if rest == ["_agent.md"]:
        return FileInfo(path, "agents", "agent_contract", slug)
    if len(rest) == 2 and rest[0] == "memory" and rest[1].endswith(".jsonl"):
        return FileInfo(path, "agents", "agent_jsonl", slug)
    if rest[0] == "sources":
        return FileInfo(path, "agents", "agent_source", slug)
    return FileInfo(path, "agents", "agent_file", slug)


def timeline_date(path: str) -> str | None:
    m = DATE_FILE_RE.match(path.rsplit("/", 1)[-1])
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None
