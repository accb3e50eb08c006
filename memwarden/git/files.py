"""What a hook needs to know of git without opening the repository: file modes, the
`Entry` of a file, blob ids, and where the repository is. Kept apart from memwarden.git.repo
(which re-exports all of it): a one-file hook need not load that
module's code, and the hook opens no repository.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000
MODE_BLOBS = (MODE_FILE, MODE_EXEC, MODE_LINK)  # entries whose content is a blob


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """A file as git sees it: path, mode and blob id (None for worktree-only oddities)."""

    path: str
    mode: int
    oid: str | None
    stat_key: tuple[int, ...] | None = None  # worktree: (mtime_ns, size, ino, ctime_ns)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled as a call with its fields (a check sends thousands to its workers); the
        # default for a frozen slotted class goes through a Python-level state dict.
        return Entry, (self.path, self.mode, self.oid, self.stat_key)


def hash_blob(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def looks_like_git_dir(d: str) -> bool:
    join = os.path.join
    return (os.path.isfile(join(d, "HEAD")) and os.path.isdir(join(d, "objects"))
            and os.path.isdir(join(d, "refs")))


def locate(start: str | Path) -> tuple[str, str | None] | None:
    """(git dir, work tree or None for bare) for the repository holding `start`, as
    plain strings, not resolved (open_repo resolves; a hook run does without pathlib)."""
    cur = os.path.abspath(start)
    if os.path.isfile(cur):
        cur = os.path.dirname(cur)
    while True:
        dot = os.path.join(cur, ".git")
        if os.path.isdir(dot) and looks_like_git_dir(dot):
            return dot, cur
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.read().strip()
            except (OSError, ValueError):
                return None
            if line.startswith("gitdir:"):
                target = line[7:].strip()
                return (target if os.path.isabs(target) else os.path.join(cur, target)), cur
        if looks_like_git_dir(cur):
            return cur, None
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def file_mode(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return MODE_LINK
    if stat.S_ISREG(st.st_mode):
        return MODE_EXEC if st.st_mode & 0o111 else MODE_FILE
    return 0


def common_prefix(a: bytes, b: bytes, n: int) -> int:
    """The length of the common prefix of a[:n] and b[:n]."""
    lo, hi = 0, n  # a[:lo] == b[:lo]; memcmp halves, so a 47 KB folder costs microseconds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: bytes, b: bytes, n: int) -> int:
    """The length of the common suffix of a and b, at most n."""
    la, lb = len(a), len(b)
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo
