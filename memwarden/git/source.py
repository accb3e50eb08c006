"""Where checked files come from: a working tree or a committed tree (bare repos too).

Both sources list governed files as Entries and load them as MemFiles with their git blob
id, so rules and caches never care which one they are looking at.
"""

from __future__ import annotations

import os
import stat as _stat
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.cachedir import ShardedCache
from memwarden.git.files import MODE_GITLINK, MODE_LINK, Entry, hash_blob
from memwarden.model.layout import classify
from memwarden.model.memfile import MAX_FILE_BYTES, MemFile

if TYPE_CHECKING:
    from memwarden.git.repo import Repo


class StatCache:
    """path -> blob id for files whose stat data has not changed (git's index trick).

    Entries modified within RACY_NS of the last save are not trusted (a same-timestamp
    rewrite could otherwise go unnoticed); a cache that is not intact (sealed with a
    checksum, see cachedir.read_sealed) is ignored and rebuilt.
    """

    RACY_NS = 2_000_000_000

    def __init__(self, cache_dir: str | Path | None) -> None:
        self.cache_dir = cache_dir
        self.shards = ShardedCache(os.path.join(cache_dir, "stat") if cache_dir else None,
                                   ("stat", 2))

    @staticmethod
    def key(st: os.stat_result) -> list[int]:
        return [st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns]

    def get(self, path: str, st: os.stat_result) -> str | None:
        return self.get_key(path, self.key(st))

    def get_key(self, path: str, key: list[int]) -> str | None:
        i, table = self.shards.table(path)
        hit = table.get(path)
        if not hit or hit[:4] != key:
            return None
        if key[0] >= self.shards.saved_at[i] - self.RACY_NS:
            return None  # modified too close to the last save to trust the timestamp
        return str(hit[4])

    def put(self, path: str, st: os.stat_result, blob: str) -> None:
        self.put_key(path, self.key(st), blob)

    def put_key(self, path: str, key: list[int], blob: str) -> None:
        i, table = self.shards.table(path)
        if table.get(path) != [*key, blob]:
            table[path] = [*key, blob]
            self.shards.dirty.add(i)

    @property
    def dirty(self) -> bool:
        return bool(self.shards.dirty)

    def save(self) -> None:
        if not self.shards.dirty:
            return
        self.shards.save()


class WorktreeSource:
    """Files as they are on disk under `root` (what pre-commit sees after stashing)."""

    def __init__(self, root: str | Path, repo: Repo | None,
                 cache_dir: str | Path | None = None) -> None:
        self.root = root
        self.base = str(root)
        self.repo = repo
        self.label = str(root)
        self.stats = StatCache(cache_dir)
        self._memo: dict[str, MemFile] = {}

    def known_blob_id(self, entry: Entry) -> str | None:
        """The blob id when the stat cache vouches for it (no read), else None."""
        if entry.mode not in (0o100644, 0o100755):
            return None
        key = entry.stat_key
        if key is None:
            try:
                key = tuple(StatCache.key(os.stat(os.path.join(self.base, entry.path))))
            except OSError:
                return None
        return self.stats.get_key(entry.path, list(key))

    def remember(self, path: str, stat_key: list[int] | None, blob: str) -> None:
        """Record the blob id read for a file, keyed by its stat taken before the read."""
        if stat_key is not None and not blob.startswith("large:"):
            self.stats.put_key(path, stat_key, blob)

    def save(self) -> None:
        self.stats.save()

    def all_entries(self) -> dict[str, Entry]:
        from memwarden.git.repo import worktree_entries  # the whole tree: not a hook's few files

        return {e.path: e for e in worktree_entries(self.root, self.repo)}

    def entry(self, path: str) -> Entry | None:
        full = os.path.join(self.base, path)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        if _stat.S_ISLNK(st.st_mode):
            return Entry(path, MODE_LINK, None)
        if _stat.S_ISDIR(st.st_mode):
            gitlink = os.path.exists(os.path.join(full, ".git"))
            return Entry(path, MODE_GITLINK, None) if gitlink else None
        return Entry(path, 0o100755 if st.st_mode & 0o111 else 0o100644, None)

    def glob(self, pattern: str) -> list[str]:
        from pathlib import Path  # only when agents' contracts are context (see engine)

        base = Path(self.base)
        return sorted(p.relative_to(base).as_posix() for p in base.glob(pattern))

    def forget(self, path: str) -> None:
        """Drop the loaded file at `path` (a worker is done with it)."""
        self._memo.pop(path, None)

    def load(self, entry: Entry) -> MemFile | None:
        memo = self._memo.get(entry.path)
        if memo is not None:
            return memo
        info = classify(entry.path)
        if info is None:
            return None
        full = os.path.join(self.base, entry.path)  # (a str join: pathlib costs more here)
        stat_key: list[int] | None = None
        try:
            if entry.mode == MODE_LINK:
                data = os.readlink(full).encode("utf-8", "surrogateescape")
                size = len(data)
            elif entry.mode == MODE_GITLINK:
                data, size = b"", 0
            else:
                data, size, stat_key = _read(full)
        except OSError:
            return None
        blob = hash_blob(data) if size <= MAX_FILE_BYTES else f"large:{size}:{entry.path}"
        mf = MemFile(info, data, entry.mode, blob, size)
        mf.stat_key = stat_key
        self._memo[entry.path] = mf
        return mf


def _read(full: str) -> tuple[bytes, int, list[int]]:
    """(content, size, stat key) of a regular file, the stat taken before the read (a
    racing write is then caught by the stat cache). Raw os calls: a buffered file object
    costs more than the read itself for the small files memory repositories hold. Content
    is b"" for a file over MAX_FILE_BYTES; a file growing while read is read to its end."""
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size > MAX_FILE_BYTES:
            return b"", size, StatCache.key(st)
        data = os.read(fd, size + 1)  # (+1: a file that grew is read on to its end)
        if len(data) != size:  # exactly the size fstat gave: at the end (no EOF read)
            parts = [data]
            while chunk := os.read(fd, 65536):
                parts.append(chunk)
            if len(parts) > 1:
                data = b"".join(parts)
        return data, len(data), StatCache.key(st)
    finally:
        os.close(fd)


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
        if self._entries is not None:
            return self._entries.get(path)
        return self.repo.entry_at(self.rev, path)

    def known_blob_id(self, entry: Entry) -> str | None:
        return entry.oid

    def remember(self, path: str, stat_key: list[int] | None, blob: str) -> None:
        pass

    def forget(self, path: str) -> None:
        pass  # nothing kept: each load reads the blob

    def save(self) -> None:
        pass

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
