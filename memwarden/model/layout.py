"""The memory repository's layout: which path is which kind of file, of which agent, layer.

Pure string work over repo-relative POSIX paths, so every front end (worktree, index,
committed tree, bare repo) classifies files the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import re

# Validation patterns end with \Z, never $ ($ also matches before a final newline, so
# "run_1\n" would pass as an id and split a trailer or an entry line in two).
AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*\Z")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
DATE_FILE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md\Z")
RUN_FILE_RE = re.compile(r"^run_([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.md\Z")
RUN_DIR_RE = re.compile(r"^run_([A-Za-z0-9][A-Za-z0-9._-]{0,127})\Z")

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


# Code points HFS+ ignores when it compares names (git's is_hfs_dotgit): ".g\u200cit" is
# ".git" there.
_HFS_IGNORABLE = frozenset("\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                           "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff")
_NTFS_TAIL = re.compile(r"[ .]*(?::.*)?\Z", re.DOTALL)


def is_dotgit(component: str) -> bool:
    """True when a path component names git's own folder on some file system, by git's
    rules (is_hfs_dotgit, is_ntfs_dotgit): `.git` in any case, with HFS-ignorable code
    points, NTFS trailing dots/spaces or a stream (`.git::$INDEX_ALLOCATION`), or the
    8.3 short name `git~1`."""
    if component.isascii() and "git" not in component.lower():
        return False  # every spelling below holds "git" (the ignorable points are not ASCII)
    stripped = "".join(c for c in component if c not in _HFS_IGNORABLE)
    if stripped.isascii() and stripped.lower() == ".git":
        return True
    low = component.lower()
    for name in (".git", "git~1"):
        if low.startswith(name) and _NTFS_TAIL.match(low, len(name)):
            return True
    return False


def dotgit_component(path: str) -> str | None:
    """The first component of `path` that git treats as `.git` (see is_dotgit), or None."""
    return next((part for part in path.split("/") if is_dotgit(part)), None)


def hidden_char(text: str) -> str | None:
    """The first control, bidi, zero-width or other format character in `text`, or None:
    such a name shows a reviewer something other than what git stores."""
    if text.isascii():
        return next((c for c in text if c < " " or c == "\x7f"), None)
    import unicodedata  # only for the rare non-ASCII name

    return next((c for c in text if c < " " or c in _HFS_IGNORABLE or unicodedata.category(c)
                 in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")), None)


def unsafe_path_reason(path: str) -> str | None:
    """Why a repo-relative path must never be written or checked out, or None. Covers
    git's own path rules (`.git` components, see is_dotgit), characters that hide or
    reorder what a reviewer sees, empty, `.` and `..` components and backslashes."""
    if not path or path.startswith("/"):
        return "an absolute or empty path"
    if "\\" in path:
        return "a backslash in the path"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"an empty, '.' or '..' component ({part!r})"
    part = dotgit_component(path)
    if part is not None:
        return f"a component git treats as its own .git folder ({part!r})"
    bad = hidden_char(path)
    if bad is not None:
        return f"an invisible, control or bidi character (U+{ord(bad):04X})"
    return None


def valid_ref_id(value: str) -> bool:
    """An id (ID_RE) that is also a valid last component of a git ref name
    (git check-ref-format): no `..`, not ending with `.` or `.lock`."""
    return (bool(ID_RE.match(value)) and ".." not in value
            and not value.endswith((".", ".lock")))
