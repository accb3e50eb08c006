"""MW5xx paths: unsafe paths, unknown files in memory folders, invalid agent ids.

Only the rules that need no diff live here for now (MW502, MW506, MW507); ownership and
append-only rules that compare a proposal with its base join them with the gate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from memwarden.git.files import MODE_GITLINK, MODE_LINK
from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import AGENT_ID_RE, dotgit_component, hidden_char
from memwarden.model.memfile import MemFile
from memwarden.policies.registry import rule
from memwarden.policies.rulecontext import FileContext

if TYPE_CHECKING:
    from memwarden.git.repo import Repo

_ENCODED = re.compile(r"%(?:2e|2f|5c|00)", re.IGNORECASE)


@rule("MW502", name="unsafe-path", severity=ERROR,
      summary="A path that escapes or hides: traversal, absolute, URL-encoded separators, "
              "backslashes, a `.git` component by git's rules (any case, ignorable Unicode, "
              "NTFS forms), invisible or bidi characters, a symlink, a submodule or a special "
              "file (FIFO, device, socket) inside governed folders.",
      why="Memory is read by runtimes that join paths; a symlink or `..` lets a proposal read "
          "or overwrite files outside the agent's folder, and a submodule hides content from "
          "every check.",
      bad="memory/a/facts.md -> ../../b/facts.md (symlink); memory/a/%2e%2e/x.md",
      good="memory/a/facts.md as a regular file",
      fix="Replace the link or submodule with a regular file; rename the path.")
def check_unsafe_path(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    path = mf.path
    if mf.mode == MODE_LINK:
        target = mf.data.decode("utf-8", "replace")
        where = f"{mf.link_at} is a " if mf.link_at else ""
        yield make("MW502", ERROR, path, 1, 1,
                   f"{where}symlink to {target!r}: governed files must be regular files",
                   f"{mf.link_at or path}->{target}",
                   "Replace the symlink with the file's content.")
    elif mf.mode == 0 and mf.unreadable is not None:
        yield make("MW502", ERROR, path, 1, 1,
                   f"{mf.unreadable}, not a regular file: governed files must be regular files",
                   f"{path}:special", "Remove it and put a regular file in its place.")
    elif mf.mode == MODE_GITLINK:
        yield make("MW502", ERROR, path, 1, 1,
                   "submodule inside a governed folder: its content escapes every check",
                   f"{path}:gitlink", "Remove the submodule; vendor the files if needed.")
    parts = path.split("/")
    if any(p in ("..", ".") for p in parts) or path.startswith("/"):
        yield make("MW502", ERROR, path, 1, 1, "path traversal segment in path", path)
    if _ENCODED.search(path):
        yield make("MW502", ERROR, path, 1, 1,
                   "URL-encoded dot, slash, backslash or NUL in a path name", path,
                   "Rename the file without percent-escapes.")
    if "\\" in path:
        yield make("MW502", ERROR, path, 1, 1, "backslash in a path name", path)
    part = dotgit_component(path)
    if part is not None:
        yield make("MW502", ERROR, path, 1, 1,
                   f"path component {part!r} is git's own .git folder on some file systems "
                   "(case, ignorable Unicode, NTFS dots/streams, git~1): a clone would refuse "
                   "or execute it", f"{path}:dotgit", "Rename the folder.")
    bad = hidden_char(path)
    if bad is not None:
        yield make("MW502", ERROR, path, 1, 1,
                   f"invisible, control or bidi character U+{ord(bad):04X} in a path name: "
                   "the name shown is not the name stored", f"{path}:hidden",
                   "Rename the file with visible characters only.")


@rule("MW506", name="unknown-memory-file", severity=ERROR, kinds={"unknown"},
      summary="A file in memory/ that is not part of the memory layout.",
      why="Runtimes, eviction and retention know only the documented files; anything else "
          "is never limited, never evicted and easy to use for smuggling content.",
      bad="memory/a/notes.txt, memory/a/timeline/today.md, memory/README.md",
      good="memory/a/facts.md, memory/a/timeline/2026-02-17.md, memory/a/runs/run_42.md",
      fix="Move the content into facts.md/decisions.md or outside memory/.")
def check_unknown(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    yield make("MW506", ERROR, mf.path, 1, 1,
               "not a memory file: expected snapshot.md, facts.md, open_loops.md, "
               "decisions.md, relationships.md, changelog.md, meta.json, "
               "timeline/YYYY-MM-DD.md or runs/run_<id>.md", mf.path,
               "Move or rename it; see `memwarden rule MW506`.")


@rule("MW507", name="invalid-agent-id", severity=ERROR,
      summary="An agent folder whose name is not a valid agentId (^[a-z0-9][a-z0-9-]*$).",
      why="Agent ids appear in branch names, trailers and paths; anything else breaks "
          "ownership checks and can smuggle path syntax.",
      bad="memory/Archivist_Violin/facts.md, agents/-x/_agent.md",
      good="memory/archivist-violin/facts.md",
      fix="Rename the folder to lowercase letters, digits and hyphens.")
def check_agent_id(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    info = mf.info
    parts = mf.path.split("/")
    if info.area in ("memory", "agents", "logic") and len(parts) >= 3:
        agent = parts[1]
        if not AGENT_ID_RE.match(agent) or len(agent) > 64:
            yield make("MW507", ERROR, mf.path, 1, 1,
                       f"{agent!r} is not a valid agent id (lowercase letters, digits and "
                       "hyphens, starting with a letter or digit, at most 64 characters)",
                       agent)


def malformed_path_findings(repo: Repo, old: str | None, new: str, paths: list[str],
                            label: str) -> list[Finding]:
    """MW502 for what commit `new` changed against `old` that no check could read for sure
    (see Repo.tree_problems): a folder whose tree git's fsck refuses, or a name that is not
    UTF-8. Such a path must fail the check, not be skipped as if it were deleted."""
    return [make("MW502", ERROR, path, 1, 1,
                 f"{path}: {why} in {label}; git fsck refuses it and no check can read the "
                 "file for sure", f"{path}:malformed",
                 "Rewrite the commit with git itself (git add, git commit); a tree built "
                 "by hand with unsorted or repeated entries is never accepted.")
            for path, why in repo.tree_problems(old, new, paths)]
