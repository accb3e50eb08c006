"""Where checked files come from: a working tree or a committed tree (bare repos too).

Both sources list governed files as Entries and load them as MemFiles with their git blob
id, so rules and caches never care which one they are looking at.
"""

from __future__ import annotations

import os
from pathlib import Path

from memwarden.layout import classify
from memwarden.memfile import MAX_FILE_BYTES, MemFile
from memwarden.repo import MODE_GITLINK, MODE_LINK, Entry, Repo, hash_blob, worktree_entries


class WorktreeSource:
    """Files as they are on disk under `root` (what pre-commit sees after stashing)."""

    def __init__(self, root: Path, repo: Repo | None) -> None:
        self.root = root
        self.repo = repo
        self.label = str(root)

    def all_entries(self) -> dict[str, Entry]:
        return {e.path: e for e in worktree_entries(self.root, self.repo)}

    def entry(self, path: str) -> Entry | None:
        full = self.root / path
        try:
            st = os.lstat(full)
        except OSError:
            return None
        import stat as _stat

        if _stat.S_ISLNK(st.st_mode):
            return Entry(path, MODE_LINK, None)
        if _stat.S_ISDIR(st.st_mode):
            return Entry(path, MODE_GITLINK, None) if (full / ".git").exists() else None
        return Entry(path, 0o100755 if st.st_mode & 0o111 else 0o100644, None)

    def glob(self, pattern: str) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.glob(pattern))

    def load(self, entry: Entry) -> MemFile | None:
        info = classify(entry.path)
        if info is None:
            return None
        full = self.root / entry.path
        try:
            if entry.mode == MODE_LINK:
                data = os.readlink(full).encode("utf-8", "surrogateescape")
                size = len(data)
            elif entry.mode == MODE_GITLINK:
                data, size = b"", 0
            else:
                size = os.path.getsize(full)
                if size > MAX_FILE_BYTES:
                    data = b""
                else:
                    with open(full, "rb") as fh:
                        data = fh.read()
                    size = len(data)
        except OSError:
            return None
        blob = hash_blob(data) if size <= MAX_FILE_BYTES else f"large:{size}:{entry.path}"
        return MemFile(info, data, entry.mode, blob, size)


class TreeSource:
    """Files of a committed tree: no working tree needed, works in bare repositories."""

    def __init__(self, repo: Repo, rev: str) -> None:
        self.repo = repo
        self.rev = repo.resolve_commit(rev)
        self.label = self.rev
        self._entries: dict[str, Entry] | None = None

    def all_entries(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries = {e.path: e for e in self.repo.tree_entries(self.rev)}
        return self._entries

    def entry(self, path: str) -> Entry | None:
        return self.all_entries().get(path)

    def glob(self, pattern: str) -> list[str]:
        import fnmatch

        return sorted(p for p in self.all_entries() if fnmatch.fnmatchcase(p, pattern))

    def load(self, entry: Entry) -> MemFile | None:
        info = classify(entry.path)
        if info is None or entry.oid is None:
            return None
        if entry.mode == MODE_GITLINK:
            return MemFile(info, b"", entry.mode, entry.oid, 0)
        size = self.repo.blob_size(entry.oid)
        data = self.repo.read_blob(entry.oid) if size <= MAX_FILE_BYTES else b""
        return MemFile(info, data, entry.mode, entry.oid, size)


Source = WorktreeSource | TreeSource
