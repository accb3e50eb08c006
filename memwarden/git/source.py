"""Where checked files come from: a working tree or a committed tree (bare repos too).

Both sources list governed files as Entries and load them as MemFiles with their git blob
id, so rules and caches never care which one they are looking at.
"""

from __future__ import annotations

import errno
import os
import stat as _stat
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.cachedir import ShardedCache
from memwarden.git.files import (
    MODE_EXEC,
    MODE_FILE,
    MODE_GITLINK,
    MODE_LINK,
    Entry,
    file_mode,
    hash_blob,
)
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

    @property
    def cold(self) -> bool:
        """Nothing saved yet (or no cache at all): no file's blob id can be vouched for."""
        return self.cache_dir is None or not os.path.isdir(os.path.join(self.cache_dir, "stat"))

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
        self.max_bytes = MAX_FILE_BYTES  # the engine sets the config's max_file_bytes

    def known_blob_id(self, entry: Entry) -> str | None:
        """The blob id when the stat cache vouches for it (no read), else None."""
        if entry.mode not in (0o100644, 0o100755):
            return None
        key = entry.stat_key
        if key is None:
            if self.stats.cold:
                return None
            try:
                key = tuple(StatCache.key(os.stat(os.path.join(self.base, entry.path))))
            except OSError:
                return None
        return self.stats.get_key(entry.path, list(key))

    def remember(self, path: str, stat_key: list[int] | None, blob: str) -> None:
        """Record the blob id read for a file, keyed by its stat taken before the read."""
        if stat_key is not None and not blob.startswith(("large:", "unreadable:")):
            self.stats.put_key(path, stat_key, blob)

    def save(self) -> None:
        self.stats.save()

    def all_entries(self) -> dict[str, Entry]:
        from concurrent.futures import ThreadPoolExecutor

        # the whole tree: not a hook's few files
        from memwarden.git.repo import entries_from_types, git_listed, worktree_entries

        # git lists no FIFO or device: a walk of our own finds them, while git works. With
        # no stat cache to consult, the kinds that walk saw (no stat call) replace an lstat
        # per listed file: each file is opened and fstat'ed when it is checked anyway.
        types: dict[str, str] | None = {} if self.stats.cold else None
        with ThreadPoolExecutor(1) as pool:
            specials = pool.submit(special_files, self.base, types)
            listed = git_listed(self.repo) if types is not None and self.repo else None
            if listed is None:
                entries = {e.path: e for e in worktree_entries(self.root, self.repo)}
                found = specials.result()
            else:
                found = specials.result()
                assert types is not None
                entries = {e.path: e for e in entries_from_types(self.base, listed, types)}
            for path in found:
                entries.setdefault(path, Entry(path, 0, None))
        return dict(sorted(entries.items()))

    def linked_parent(self, path: str) -> str | None:
        """The first folder of `path` that is a symlink (memory/ -> elsewhere), or None: a
        file reached through it lies outside the repository and is never read."""
        parts = path.split("/")
        for n in range(1, len(parts)):
            try:
                if _stat.S_ISLNK(os.lstat(os.path.join(self.base, *parts[:n])).st_mode):
                    return "/".join(parts[:n])
            except OSError:
                return None
        return None

    def entry(self, path: str) -> Entry | None:
        full = os.path.join(self.base, path)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        if "/" in path and self.linked_parent(path) is not None:
            return Entry(path, MODE_LINK, None)
        if _stat.S_ISLNK(st.st_mode):
            return Entry(path, MODE_LINK, None)
        if _stat.S_ISDIR(st.st_mode):
            gitlink = os.path.exists(os.path.join(full, ".git"))
            return Entry(path, MODE_GITLINK, None) if gitlink else None
        return Entry(path, file_mode(st), None)

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
        unreadable = link_at = None
        mode = entry.mode
        try:
            if mode == MODE_LINK:
                link = self.linked_parent(entry.path) or entry.path
                data = os.readlink(os.path.join(self.base, link)).encode(
                    "utf-8", "surrogateescape")
                size = len(data)
                link_at = link if link != entry.path else None
            elif mode == MODE_GITLINK:
                data, size = b"", 0
            elif mode not in (MODE_FILE, MODE_EXEC):  # listed as special: never opened
                data, size = b"", 0
                unreadable = special_kind(os.lstat(full).st_mode) or "not a regular file"
            else:
                data, size, stat_key, unreadable = _read(full, self.max_bytes)
            if unreadable is not None:
                mode = 0  # not a blob git could hold: MW502 reports it
        except OSError as exc:
            # Listed a moment ago, unreadable now: a finding, never a silent skip.
            data, size = b"", 0
            unreadable = f"cannot be read ({exc.strerror or exc})"
        if unreadable is not None:
            blob = f"unreadable:{entry.path}"
        elif size <= self.max_bytes:
            blob = hash_blob(data)
        else:
            blob = f"large:{size}:{entry.path}"
        mf = MemFile(info, data, mode, blob, size, self.max_bytes, unreadable)
        mf.stat_key = stat_key
        mf.link_at = link_at
        self._memo[entry.path] = mf
        return mf


def special_files(base: str, types: dict[str, str] | None = None) -> list[str]:
    """Governed paths that are neither regular files, symlinks nor folders (FIFOs, device
    nodes, sockets): git never lists them, runtimes would block reading them. scandir's
    file types need no stat call, so the walk costs little next to the check. `types`, when
    given, receives the kind of every path seen below the governed folders: "file",
    "link" or "dir" (specials are the list returned)."""
    from memwarden.model.layout import GOVERNED_FILES, GOVERNED_PREFIXES

    found: list[str] = []
    todo = [p.rstrip("/") for p in GOVERNED_PREFIXES]
    for name in GOVERNED_FILES:
        try:
            if special_kind(os.lstat(os.path.join(base, name)).st_mode) not in (
                    None, "a symlink", "a directory"):
                found.append(name)
        except OSError:
            pass
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(os.path.join(base, rel)) as it:
                for d in it:
                    path = f"{rel}/{d.name}"
                    if d.is_symlink():
                        if types is not None:
                            types[path] = "link"
                    elif d.is_dir(follow_symlinks=False):
                        if types is not None:
                            types[path] = "dir"
                        if d.name != ".git":
                            todo.append(path)
                    elif d.is_file(follow_symlinks=False):
                        if types is not None:
                            types[path] = "file"
                    else:
                        found.append(path)
        except OSError:
            continue
    return found


# Opening never blocks (a FIFO opens at once) and never follows a symlink swapped in
# after the listing; what was opened is checked with fstat before any read.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0))


def special_kind(st_mode: int) -> str | None:
    """What a non-regular file is ("a FIFO", "a device node", ...), None for a regular one."""
    if _stat.S_ISREG(st_mode):
        return None
    if _stat.S_ISFIFO(st_mode):
        return "a FIFO (named pipe)"
    if _stat.S_ISCHR(st_mode) or _stat.S_ISBLK(st_mode):
        return "a device node"
    if _stat.S_ISSOCK(st_mode):
        return "a socket"
    if _stat.S_ISLNK(st_mode):
        return "a symlink"
    if _stat.S_ISDIR(st_mode):
        return "a directory"
    return "not a regular file"


def _read(full: str, cap: int = MAX_FILE_BYTES
          ) -> tuple[bytes, int, list[int] | None, str | None]:
    """(content, size, stat key, why unreadable) of a regular file, the stat taken before
    the read (a racing write is then caught by the stat cache). Raw os calls: a buffered
    file object costs more than the read itself for the small files memory repositories
    hold. Content is b"" for a file over `cap` or anything but a regular file (never read:
    a FIFO or /dev/zero would block or never end); a file growing while read is read on,
    up to the cap."""
    fd = os.open(full, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        special = special_kind(st.st_mode)
        if special == "a directory":
            raise IsADirectoryError(errno.EISDIR, "is a directory", full)
        if special is not None:
            return b"", 0, None, special
        size = st.st_size
        if size > cap:
            return b"", size, StatCache.key(st), None
        data = os.read(fd, size + 1)  # (+1: a file that grew is read on to its end)
        if len(data) != size:  # exactly the size fstat gave: at the end (no EOF read)
            parts = [data]
            total = len(data)
            while total <= cap and (chunk := os.read(fd, 65536)):
                parts.append(chunk)
                total += len(chunk)
            if total > cap:
                return b"", total, None, None
            if len(parts) > 1:
                data = b"".join(parts)
        return data, len(data), StatCache.key(st), None
    finally:
        os.close(fd)


class TreeSource:
    """Files of a committed tree: no working tree needed, works in bare repositories."""

    def __init__(self, repo: Repo, rev: str) -> None:
        self.repo = repo
        self.max_bytes = MAX_FILE_BYTES  # the engine sets the config's max_file_bytes
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
            return MemFile(info, b"", entry.mode, entry.oid, 0, self.max_bytes)
        size = self.repo.blob_size(entry.oid)
        data = self.repo.read_blob(entry.oid) if size <= self.max_bytes else b""
        return MemFile(info, data, entry.mode, entry.oid, size, self.max_bytes)


Source = WorktreeSource | TreeSource
